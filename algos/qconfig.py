"""The configuration of the value-based learners (:mod:`alem.algos.qlearning`) and their presets.

| name      | values               | data                      | target network          |
|-----------|----------------------|---------------------------|-------------------------|
| pqn       | one Q per agent      | the rollout, Q(lambda)    | none (LayerNorm)        |
| pqn_vdn   | sum of the agents' Q | the rollout, Q(lambda)    | none (LayerNorm)        |
| iql       | one Q per agent      | replay (flashbax), 1-step | hard or Polyak, double Q|
| vdn       | sum of the agents' Q | replay (flashbax), 1-step | hard or Polyak, double Q|
| qmix      | QMIX mixer of state  | replay (flashbax), 1-step | hard or Polyak, double Q|

Every learner runs feed-forward or with a GRU (``recurrent=<width>``). The replay learners
sample windows of ``sequence_length`` consecutive steps (2: one-step transitions); a recurrent
one replays longer windows from a zero hidden state with ``burn_in`` warm-up steps (R2D2's
"zero start" with burn-in, Kapturowski et al. 2019), and ``q_lambda > 0`` gives Q(lambda)
targets over the window.

PQN is Gallici et al., "Simplifying Deep Temporal Difference Learning" (2024); IQL (Tan 1993,
with DQN's machinery), VDN (Sunehag et al. 2018) and QMIX (Rashid et al. 2018) follow the
JaxMARL and PyMARL baselines.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from alem.algos.config import POSITIVE, UNIT, Range, RunConfig, check_ranges, unread_groups
from alem.errors import LearnerConfigError, did_you_mean, require_positive_int

__all__ = ["QConfig", "Q_VARIANTS", "make_q_config"]

_CHOICES = {
    "mixer": ("none", "vdn", "qmix"),
    "team_reward": ("mean", "sum"),
    "sharing": ("shared", "none"),
    "activation": ("relu", "tanh"),
}


@dataclasses.dataclass(frozen=True)
class QConfig(RunConfig):
    """Hyperparameters of the value-based core; all static (changing one recompiles)."""

    options_of: ClassVar[str] = " of the value-based learners"
    kind: ClassVar[str] = "value-based"

    name: str = "pqn"
    mixer: str = "none"  # none (independent) | vdn | qmix
    replay: bool = False  # False: PQN (learn from the rollout); True: a replay buffer and a target network
    team_reward: str = "mean"  # vdn, qmix: the agents' rewards made one (mean | sum, JaxMARL's)
    # sizes: one update = num_envs x num_steps env steps
    num_envs: int = 16
    num_steps: int = 32
    total_steps: int = 1_000_000
    # optimisation
    lr: float = 1e-3
    anneal_lr: bool = False
    max_grad_norm: float = 10.0
    gamma: float = 0.99
    # PQN
    q_lambda: float = 0.65  # PQN's Q(lambda); replay learners: over the sampled window (0: one-step)
    update_epochs: int = 4
    num_minibatches: int = 4
    # replay learners
    buffer_size: int = 5000  # steps kept per env (num_envs rows)
    batch_size: int = 128  # sampled windows per gradient step
    # steps per sampled window (2: one-step transitions; GRU: e.g. 20). 0: derived from the env by
    # make_q_learner: 2, or num_agents + 1 in turn-based envs (an agent's next turn in the window)
    sequence_length: int = 0
    burn_in: int = 0  # leading steps of a window that only warm up the GRU (not trained on)
    learning_starts: int = 1000  # env steps per env before the first gradient step
    train_steps: int = 4  # gradient steps per update
    target_every: int = 10  # updates between target-network updates
    tau: float = 1.0  # target <- tau * online + (1 - tau) * target (1: a hard copy)
    double_q: bool = True
    # exploration: epsilon from start to end over epsilon_fraction of the run's env steps
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_fraction: float = 0.1
    eval_epsilon: float = 0.0  # the final evaluation's epsilon (0: greedy)
    # networks
    hidden: tuple[int, ...] = (128, 128)
    activation: str = "relu"
    layer_norm: bool = False
    recurrent: int = 0  # GRU width; 0 = feed-forward
    agent_id: bool = True
    sharing: str = "shared"  # shared | none (one network per agent)
    mixer_embed: int = 32
    mixer_hyper_hidden: int = 64
    mixer_init_scale: float = 0.001  # QMIX: scale of the hypernetworks' last layers at init

    #: The float options' ranges checked by :func:`~alem.algos.config.check_ranges` (``tau`` has
    #: its own message).
    RANGES: ClassVar[dict[str, Range]] = {
        "lr": POSITIVE,
        "max_grad_norm": POSITIVE,
        "mixer_init_scale": POSITIVE,
        **dict.fromkeys(
            ("gamma", "q_lambda", "epsilon_start", "epsilon_end", "epsilon_fraction", "eval_epsilon"), UNIT
        ),
    }

    def unread(self) -> dict[str, str]:
        """The options this configuration never reads, each with the setting that would read it
        (as :meth:`PPOConfig.unread <alem.algos.config.PPOConfig.unread>`)."""
        replay_only = ("buffer_size", "batch_size", "learning_starts", "train_steps", "target_every", "tau")
        return unread_groups(
            (not self.replay, replay_only, "algo.replay=true (vdn, qmix, iql)"),
            (self.replay, ("update_epochs", "num_minibatches"), "algo.replay=false (pqn, pqn_vdn)"),
            (
                self.mixer != "qmix",
                ("mixer_embed", "mixer_hyper_hidden", "mixer_init_scale"),
                "algo.mixer=qmix",
            ),
        )

    def __post_init__(self):
        for field, choices in _CHOICES.items():
            if getattr(self, field) not in choices:
                raise LearnerConfigError(
                    f"algo.{field}={getattr(self, field)!r} is not one of {list(choices)}"
                )
        for field in (
            "num_envs",
            "num_steps",
            "total_steps",
            "update_epochs",
            "num_minibatches",
            "buffer_size",
            "batch_size",
            "train_steps",
            "target_every",
        ):
            require_positive_int(getattr(self, field), f"algo.{field}", error=LearnerConfigError)
        if self.total_steps < self.num_envs * self.num_steps:
            raise LearnerConfigError(
                f"algo.total_steps={self.total_steps} is less than one update "
                f"(num_envs * num_steps = {self.num_envs * self.num_steps})"
            )
        if not self.replay and self.num_envs % self.num_minibatches:
            raise LearnerConfigError(
                f"algo.num_minibatches={self.num_minibatches} must divide algo.num_envs={self.num_envs}"
            )
        check_ranges(self, self.RANGES)
        if not 0 < self.tau <= 1:
            raise LearnerConfigError(f"algo.tau must be in (0, 1] (1: hard target updates), got {self.tau!r}")
        for field in ("mixer_embed", "mixer_hyper_hidden"):
            require_positive_int(getattr(self, field), f"algo.{field}", error=LearnerConfigError)
        if isinstance(self.learning_starts, bool) or self.learning_starts < 0:
            raise LearnerConfigError(
                f"algo.learning_starts must be an integer >= 0 (env steps before training), got {self.learning_starts!r}"
            )
        if any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in self.hidden):
            raise LearnerConfigError(f"algo.hidden must list layer widths >= 1, got {list(self.hidden)!r}")
        if self.recurrent < 0:
            raise LearnerConfigError(f"algo.recurrent must be >= 0 (GRU width), got {self.recurrent}")
        if isinstance(self.sequence_length, bool) or not isinstance(self.sequence_length, int):
            raise LearnerConfigError(
                f"algo.sequence_length must be an integer (0: derived from the env), got {self.sequence_length!r}"
            )
        if self.sequence_length == 1 or self.sequence_length < 0:
            raise LearnerConfigError(
                f"algo.sequence_length={self.sequence_length}: a replayed window needs a step and its "
                "successor (>= 2; 0 derives it from the env)"
            )
        window = max(self.sequence_length, 2)  # the least a derived window can be
        if not 0 <= self.burn_in <= window - 2 or (self.burn_in and not self.sequence_length):
            raise LearnerConfigError(
                f"algo.burn_in={self.burn_in} must be in [0, sequence_length - 2 = {window - 2}] "
                "(at least one trained step per window; set algo.sequence_length with a burn-in)"
            )
        if self.replay and self.recurrent and window == 2:
            raise LearnerConfigError(
                f"algo.recurrent={self.recurrent} with replay: a window of 2 steps gives the GRU no "
                "history; set algo.sequence_length (e.g. 20) and algo.burn_in (e.g. 4)"
            )
        if self.buffer_size < window:
            raise LearnerConfigError(
                f"algo.buffer_size={self.buffer_size} is shorter than one window "
                f"(algo.sequence_length={window})"
            )
        if self.mixer == "qmix" and not self.replay:
            raise LearnerConfigError("algo.mixer=qmix needs algo.replay=true (the qmix preset)")


Q_VARIANTS: dict[str, dict[str, Any]] = {
    "pqn": {"layer_norm": True, "lr": 5e-4},
    "pqn_vdn": {"mixer": "vdn", "layer_norm": True, "lr": 5e-4},
    "iql": {"replay": True, "num_steps": 8, "target_every": 50, "q_lambda": 0.0},
    "vdn": {"mixer": "vdn", "replay": True, "num_steps": 8, "target_every": 50, "q_lambda": 0.0},
    "qmix": {"mixer": "qmix", "replay": True, "num_steps": 8, "target_every": 50, "q_lambda": 0.0},
}


def make_q_config(name: str, **overrides: Any) -> QConfig:
    """The preset ``name`` with ``overrides`` applied (None is ignored); any learner's:
    :func:`alem.algos.make_config`."""
    if name not in Q_VARIANTS:
        raise LearnerConfigError(f"unknown value-based learner {name!r}{did_you_mean(name, Q_VARIANTS)}")
    return QConfig.from_preset(name, Q_VARIANTS[name], overrides)
