"""``RetrievalTargetRegistry`` (RET-3): target name → default strategy + strategy → provider.

The bindings are snapshotted at construction and looked up in a dict; there is
no discovery, hot registration or fallback. ``resolve`` returns a provider that
passes the chosen strategy to the backend and writes it into the raw output.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import (
    INVALID_INPUT,
    PROVIDER_UNAVAILABLE,
    STRATEGY_UNSUPPORTED,
    TARGET_NOT_FOUND,
    RetrievalArgumentError,
    RetrievalError,
)
from .types import (
    RetrievalExecutionContext,
    RetrievalSearchInput,
    RetrievalSearchOutput,
    RetrievalSearchProvider,
    RetrievalTarget,
)

__all__ = ["RESERVED_STRATEGY", "RetrievalTargetRegistry", "StrategyBoundProvider"]

#: Never a strategy name: RAG is a user graph (SEARCH → mapping → CONTEXT → INFER), not a search.
RESERVED_STRATEGY = "rag"


class StrategyBoundProvider:
    """A provider bound to one strategy: the strategy goes in and comes back in the output.

    Its ``search`` returns the provider's raw output (with ``strategy`` filled)
    and lets the provider's exceptions through; the SDK/worker validate and wrap.
    """

    __slots__ = ("provider", "strategy")

    def __init__(self, provider: RetrievalSearchProvider, strategy: str) -> None:
        self.provider = provider
        self.strategy = strategy

    async def search(self, input: RetrievalSearchInput | Mapping[str, Any],
                     context: RetrievalExecutionContext | None = None) -> Any:
        if isinstance(input, RetrievalSearchInput):
            request: Any = input if input.strategy == self.strategy else \
                input.model_copy(update={"strategy": self.strategy})
        else:
            request = {**input, "strategy": self.strategy}
        output = await self.provider.search(request, context)
        if isinstance(output, RetrievalSearchOutput):
            return output if output.strategy is not None else output.model_copy(update={"strategy": self.strategy})
        if isinstance(output, Mapping) and output.get("strategy") is None:
            return {**output, "strategy": self.strategy}
        return output

    def __repr__(self) -> str:
        return f"<StrategyBoundProvider {self.strategy!r} {self.provider!r}>"


def _get(binding: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in binding:
            return binding[name]
    return None


class RetrievalTargetRegistry:
    """The built-in registry: ``{name: {"default_strategy": s, "providers": {s: provider}}}``.

    ``defaultStrategy`` is accepted as well. Construction refuses a default
    strategy that is not registered, the reserved strategy ``rag`` and providers
    without a callable ``search`` (a :class:`~ditto.retrieval.errors.RetrievalArgumentError`,
    so an ``InvalidArgumentError``). ``target.type/namespace/metadata`` are passed
    through untouched; a namespace is not an authorisation (check it in the
    provider or a custom registry). One provider may serve several strategies.

    Example::

        providers = RetrievalTargetRegistry({
            "company-kb": {"default_strategy": "hybrid", "providers": {"hybrid": kb_provider, "bm25": kb_text}},
            "code-index": {"default_strategy": "bm25", "providers": {"bm25": code_provider}},
        })
        provider = providers.resolve({"name": "company-kb"})          # the hybrid binding
        output = await provider.search({"query": {"content": "agent memory"}, "target": {"name": "company-kb"}})
    """

    __slots__ = ("_targets",)

    def __init__(self, targets: Mapping[str, Mapping[str, Any]]) -> None:
        if not isinstance(targets, Mapping):
            raise RetrievalArgumentError(INVALID_INPUT, "RetrievalTargetRegistry takes a mapping of target bindings")
        snapshot: dict[str, tuple[str, dict[str, StrategyBoundProvider]]] = {}
        for name, binding in targets.items():
            if not isinstance(name, str) or not name.strip():
                raise RetrievalArgumentError(INVALID_INPUT, "target names must be non-empty strings")
            if not isinstance(binding, Mapping):
                raise RetrievalArgumentError(INVALID_INPUT, f"binding for target {name!r} must be a mapping")
            default = _get(binding, "default_strategy", "defaultStrategy")
            providers = _get(binding, "providers")
            if not isinstance(providers, Mapping) or not providers:
                raise RetrievalArgumentError(PROVIDER_UNAVAILABLE, f"target {name!r} registers no providers")
            bound: dict[str, StrategyBoundProvider] = {}
            for strategy, provider in providers.items():
                if not isinstance(strategy, str) or not strategy.strip() or strategy == RESERVED_STRATEGY:
                    raise RetrievalArgumentError(STRATEGY_UNSUPPORTED,
                                         f"target {name!r} cannot register strategy {strategy!r}")
                if not callable(getattr(provider, "search", None)):
                    raise RetrievalArgumentError(PROVIDER_UNAVAILABLE,
                                         f"provider for {name!r}/{strategy} has no callable search")
                bound[strategy] = StrategyBoundProvider(provider, strategy)
            if not isinstance(default, str) or default not in bound:
                raise RetrievalArgumentError(STRATEGY_UNSUPPORTED,
                                     f"default strategy of target {name!r} is not registered")
            snapshot[name] = (default, bound)
        self._targets = snapshot

    @classmethod
    def single(cls, provider: RetrievalSearchProvider, *, target: str = "default",
               strategy: str = "bm25") -> RetrievalTargetRegistry:
        """A registry of one target served by one provider: the one-index case in one line.

        ``target`` names it in requests (``{"target": {"name": "default"}}``), ``strategy`` is its
        default and only strategy. With a single target, the SDK's ``search`` also takes a plain
        string::

            retrieval = create_retrieval(RetrievalTargetRegistry.single(create_text_search_provider(docs)))
            result = await retrieval.search("backup policy")
        """
        return cls({target: {"default_strategy": strategy, "providers": {strategy: provider}}})

    def only_target(self) -> str | None:
        """The target's name when exactly one is registered (what a plain-string query searches), else ``None``."""
        return next(iter(self._targets)) if len(self._targets) == 1 else None

    def resolve(self, target: RetrievalTarget | Mapping[str, Any], strategy: str | None = None
                ) -> StrategyBoundProvider:
        """The provider for ``target.name`` and ``strategy`` (default strategy when omitted)."""
        name = target.name if isinstance(target, RetrievalTarget) else \
            target.get("name") if isinstance(target, Mapping) else None
        entry = self._targets.get(name) if isinstance(name, str) else None
        if entry is None:
            raise RetrievalError(TARGET_NOT_FOUND, "the retrieval target is not registered")
        default, bound = entry
        chosen = default if strategy is None else strategy
        provider = bound.get(chosen) if isinstance(chosen, str) else None
        if provider is None:
            raise RetrievalError(STRATEGY_UNSUPPORTED, "the target does not support this strategy")
        return provider

    def default_strategy(self, name: str) -> str | None:
        """The default strategy of target ``name`` (``None`` for an unknown target)."""
        entry = self._targets.get(name)
        return entry[0] if entry is not None else None

    def targets(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """``{name: (default_strategy, strategies)}`` for diagnostics."""
        return {name: (default, tuple(bound)) for name, (default, bound) in self._targets.items()}

    def __repr__(self) -> str:
        return f"<RetrievalTargetRegistry {sorted(self._targets)}>"
