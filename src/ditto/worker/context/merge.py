"""Merging items into a working set under the duplicate policy, and the size limits (CX-2, CX-5)."""

from __future__ import annotations

from collections.abc import Iterable

from ...contracts import Context, ContextItem
from .errors import ContextError
from .items import context_facts, context_memo, facts, is_unresolved_reference
from .policy import ContextPolicy

__all__ = ["WorkingSet", "check_context_inline", "check_inline"]


def check_inline(items: Iterable[ContextItem], policy: ContextPolicy, code: str = "INLINE_LIMIT_EXCEEDED") -> None:
    """Every item's content must fit ``max_inline_bytes`` (JSON UTF-8 bytes).

    Unresolved reference items are exempt ("引用项允许超出"): their content is
    only the pointer (a long ``data:`` URI, say), no material is inlined.
    """
    limit = policy.max_inline_bytes
    for item in items:
        if facts(item).nbytes > limit and not is_unresolved_reference(item):
            raise ContextError(code, f"item {item.id!r} has more than {limit} bytes of inline content")


def check_context_inline(context: Context, policy: ContextPolicy) -> None:
    """:func:`check_inline` for a whole context, remembering its largest item."""
    memo = context_memo(context)
    largest = memo.get("max_nbytes")
    if largest is None:
        largest = memo["max_nbytes"] = max((info.nbytes for info in context_facts(context)), default=0)
    if largest > policy.max_inline_bytes:
        check_inline(context.items, policy)


class WorkingSet:
    """An ordered, id-unique list being edited by LOAD or UPDATE."""

    __slots__ = ("_index", "_items", "_policy")

    def __init__(self, policy: ContextPolicy, items: Iterable[ContextItem] = ()) -> None:
        self._policy = policy
        self._items: list[ContextItem | None] = list(items)
        self._index = {item.id: position for position, item in enumerate(self._items) if item is not None}

    def remove(self, item_id: str) -> None:
        position = self._index.pop(item_id, None)
        if position is None:
            if self._policy.missing_removal == "reject":
                raise ContextError("MISSING_ITEM", f"cannot remove {item_id!r}: no such item")
            return
        self._items[position] = None

    def add(self, item: ContextItem) -> None:
        """Append, or apply the duplicate policy (replace keeps the original position)."""
        position = self._index.get(item.id)
        if position is None:
            self._index[item.id] = len(self._items)
            self._items.append(item)
            return
        duplicate = self._policy.duplicate
        if duplicate == "reject":
            raise ContextError("DUPLICATE_ITEM", f"an item with id {item.id!r} already exists")
        if duplicate == "replace":
            self._items[position] = item

    def finish(self) -> list[ContextItem]:
        """The final items; LOAD/UPDATE over ``max_items`` fail, never auto-compress."""
        items = [item for item in self._items if item is not None]
        if len(items) > self._policy.max_items:
            raise ContextError("ITEM_LIMIT_EXCEEDED",
                               f"the context would hold {len(items)} items; the limit is {self._policy.max_items}")
        return items
