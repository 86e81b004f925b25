"""Training: the one loop every learner runs through, its sinks, and evaluation of trained policies.

- :mod:`alem.training.loop`: :func:`train` (any learner with ``init``/``run``, seeds vmapped,
  compiled chunks, checkpoints, resume), :class:`Schedule`, :class:`ChunkStats`, :func:`shard_state`.
- :mod:`alem.training.sinks`: console progress, ``metrics.jsonl``, Weights & Biases.
- :mod:`alem.training.evaluation`: the final evaluation and a compiled policy evaluator.

``python -m alem.train`` (:mod:`alem.train`) checks a Hydra config, builds the learner and
calls :func:`train`; use :func:`train` directly to drive a learner of your own.
"""

from alem.training.evaluation import Evaluation, eval_keys, final_evaluation, policy_evaluator
from alem.training.loop import (
    ChunkStats,
    Schedule,
    Trainable,
    TrainResult,
    mean_return,
    seed_keys,
    shard_state,
    train,
)
from alem.training.sinks import METRICS_FILE, ConsoleProgress, JsonlMetrics, WandbSink, check_chunking

__all__ = [
    "ChunkStats",
    "ConsoleProgress",
    "JsonlMetrics",
    "Trainable",
    "METRICS_FILE",
    "Schedule",
    "TrainResult",
    "WandbSink",
    "check_chunking",
    "eval_keys",
    "final_evaluation",
    "mean_return",
    "policy_evaluator",
    "Evaluation",
    "seed_keys",
    "shard_state",
    "train",
]
