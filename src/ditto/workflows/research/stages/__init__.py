"""The four stages of a task, each a function from the previous stage's record to its own.

request → :class:`~..records.RequestRecord` → :class:`~..records.QueriesRecord`
→ :class:`~..records.EvidenceRecord` → :class:`~..types.Brief`; :mod:`..loop`
runs them in order inside one ``runtime.loop()`` and checkpoints each record.
"""

from .brief import brief_stage, write_artifacts
from .evidence import evidence_stage
from .queries import queries_stage
from .request import request_stage
from .run import StageOutcome, StageRun

__all__ = ["StageOutcome", "StageRun", "brief_stage", "evidence_stage", "queries_stage", "request_stage",
           "write_artifacts"]
