"""Exporting a sentence-transformers folder's transformer to ONNX: the one place the ONNX backend imports torch.

:func:`export_graph` runs once per set of weights (see :mod:`._onnx_model`). The weights are loaded by
sentence-transformers itself, so the graph is the very module it runs, and sentence-transformers' vectors
for the probe texts are stored in the file for the loader to check against. The TorchScript exporter
(``dynamo=False``) is used: it needs no onnxscript, writes one self-contained file, and handles BERT-style
models with dynamic batch and sequence axes.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import os
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._onnx_model import OnnxRecipe, OnnxUnsupported

__all__ = ["export_graph", "quiet_model_loading"]

_OPSET = 17


@contextlib.contextmanager
def quiet_model_loading() -> Iterator[None]:
    """transformers' "Loading weights" bars and load-time log lines off while a model loads, then as they were.

    They went to stderr on every CLI run; our own bar (long embedding runs) is separate and stays.
    """
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    bars, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def export_graph(recipe: OnnxRecipe, target: Path, *, metadata: Mapping[str, str], probes: Sequence[str]) -> None:
    """Write ``recipe``'s transformer (token ids → token vectors) to ``target`` with ``metadata`` and the
    probe vectors (``ditto.probes``) in the file's metadata."""
    try:
        import onnx
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise OnnxUnsupported(f"exporting to ONNX needs torch, onnx and sentence-transformers ({error.name})") from None
    with quiet_model_loading():
        model = SentenceTransformer(str(recipe.folder), device="cpu", local_files_only=True)
    transformer: Any = model[0].auto_model
    transformer.eval()
    names = ["input_ids", "attention_mask"]
    if "token_type_ids" in inspect.signature(transformer.forward).parameters:
        names.append("token_type_ids")
    reference = model.encode(list(probes), batch_size=len(probes), normalize_embeddings=False,
                             convert_to_numpy=True, show_progress_bar=False)

    class _Tokens(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.int64)
    args = tuple(sample if name != "token_type_ids" else torch.zeros_like(sample) for name in names)
    axes = {name: {0: "batch", 1: "sequence"} for name in [*names, "token_embeddings"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(_Tokens().eval(), args, str(target), dynamo=False, opset_version=_OPSET,
                          input_names=names, output_names=["token_embeddings"], dynamic_axes=axes)
    graph = onnx.load(str(target))
    for key, value in {**metadata, "ditto.probes": json.dumps(reference.tolist())}.items():
        entry = graph.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(graph, str(target))
    with open(target, "rb+") as file:
        os.fsync(file.fileno())
