"""The learner configuration: PPO hyperparameters plus the four parts that make a baseline.

Every baseline is a :class:`LearnerConfig` (see :mod:`alem.algos.variants`):

- **actor input** (``actor``): ``"local"`` — each agent's own observation, one
  action distribution per agent; ``"joint"`` — one network over all agents'
  observations with a head per agent (centralised PPO); ``"joint_action"`` — one
  categorical over the joint action (``A**N`` outcomes, small games only).
- **critic input** (``critic``): ``"local"`` (own observation), ``"global"``
  (``env.global_state``), both optionally with the agent id.
- **parameter sharing** (``sharing``): ``"shared"`` (one set), ``"none"`` (one
  per agent), ``"roles"`` (one per ``env.agent_roles`` value) or ``"seps"``
  (roles discovered before training, Christianos et al. 2021).
- **objective and update order**: ``objective="clip"`` (PPO's clipped surrogate)
  or ``"dpo"`` (Su & Lu's KL-penalised surrogate, no clipping); ``update_order``
  ``"simultaneous"`` or ``"sequential"`` (HAPPO: agents updated one after the
  other in a random order, each weighting its advantage by the product of the
  earlier agents' new/old ratios).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from alem.errors import LearnerConfigError, did_you_mean, require_positive_int

__all__ = ["LearnerConfig", "LearnerConfigError"]



_CHOICES = {
    "actor": ("local", "joint", "joint_action"),
    "critic": ("local", "global"),
    "sharing": ("shared", "none", "roles", "seps"),
    "objective": ("clip", "dpo"),
    "update_order": ("simultaneous", "sequential"),
    "activation": ("tanh", "relu"),
}


@dataclasses.dataclass(frozen=True)
class LearnerConfig:
    """Hyperparameters of the PPO core; all static (changing one recompiles)."""

    name: str = "ippo"
    # the four parts
    actor: str = "local"
    critic: str = "local"
    agent_id: bool = False
    sharing: str = "shared"
    objective: str = "clip"
    update_order: str = "simultaneous"
    # sizes
    num_envs: int = 16
    num_steps: int = 128
    total_steps: int = 1_000_000
    update_epochs: int = 4
    num_minibatches: int = 4
    resets_per_step: int = 0  # fresh episodes per round of batched auto-reset; 0 = sized from the env's hint
    # optimisation
    lr: float = 2.5e-4
    anneal_lr: bool = True
    max_grad_norm: float = 0.5
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    clip_scale_by_agents: bool = False  # IPPO option: clip range eps / N
    clip_value: bool = True
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    normalize_advantages: bool = True
    value_norm: bool = False  # MAPPO: debiased running mean/var of value targets
    value_norm_beta: float = 0.99999
    bootstrap_truncation: bool = (
        False  # True: time-limit-correct targets (V of the cut-off state, local or global critic)
    )
    # networks
    hidden: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    recurrent: int = 0  # GRU width; 0 = feed-forward
    log_std_init: float = 0.0  # continuous actions: initial log std of the Gaussian head (box half-widths)
    # DPO
    dpo_target_kl: float = 0.01
    dpo_beta1: float = 1.0
    dpo_beta2: float = 1.0
    # SePS role discovery
    seps_roles: int = 2
    seps_steps: int = 1024
    seps_epochs: int = 500

    def __post_init__(self):
        for field, choices in _CHOICES.items():
            value = getattr(self, field)
            if value not in choices:
                raise LearnerConfigError(f"algo.{field}={value!r} is not one of {list(choices)}")
        for field in ("num_envs", "num_steps", "total_steps", "update_epochs", "num_minibatches"):
            require_positive_int(getattr(self, field), f"algo.{field}", error=LearnerConfigError)
        if isinstance(self.resets_per_step, bool) or not 0 <= self.resets_per_step <= self.num_envs:
            raise LearnerConfigError(
                f"algo.resets_per_step must be an integer in [0, num_envs={self.num_envs}] "
                f"(0: sized from the env's episode length), got {self.resets_per_step!r}"
            )
        if self.num_envs % self.num_minibatches:
            raise LearnerConfigError(
                f"algo.num_minibatches={self.num_minibatches} must divide algo.num_envs={self.num_envs} "
                "(minibatches are made of whole env trajectories)"
            )
        if self.total_steps < self.num_envs * self.num_steps:
            raise LearnerConfigError(
                f"algo.total_steps={self.total_steps} is less than one update "
                f"(num_envs * num_steps = {self.num_envs * self.num_steps})"
            )
        for field in ("lr", "max_grad_norm", "clip_eps", "dpo_target_kl"):
            if not getattr(self, field) > 0:
                raise LearnerConfigError(f"algo.{field} must be > 0, got {getattr(self, field)!r}")
        for field in ("gamma", "gae_lambda"):
            if not 0 <= getattr(self, field) <= 1:
                raise LearnerConfigError(f"algo.{field} must be in [0, 1], got {getattr(self, field)!r}")
        if any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in self.hidden):
            raise LearnerConfigError(
                f"algo.hidden must list layer widths that are integers >= 1 ([] for no hidden layer), "
                f"got {list(self.hidden)!r}"
            )
        if self.recurrent < 0:
            raise LearnerConfigError(f"algo.recurrent must be >= 0 (GRU width), got {self.recurrent}")
        if self.update_order == "sequential" and self.sharing == "shared":
            raise LearnerConfigError(
                "algo.update_order=sequential (HAPPO) updates agents one at a time and needs separate "
                "parameters per agent: use sharing=none (or roles)"
            )
        if self.actor != "local" and (self.objective != "clip" or self.update_order != "simultaneous"):
            raise LearnerConfigError(
                "centralised actors (actor=joint/joint_action) support objective=clip only"
            )

    @property
    def num_updates(self) -> int:
        return -(-self.total_steps // (self.num_envs * self.num_steps))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> LearnerConfig:
        """Build from a (Hydra) mapping; unknown keys are an error that names them."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - fields)
        if unknown:
            hints = [k + did_you_mean(k, fields) for k in unknown]
            raise LearnerConfigError(f"unknown algo option(s): {', '.join(hints)}")
        kwargs = dict(values)
        if "hidden" in kwargs:
            hidden = kwargs["hidden"]
            if isinstance(hidden, str) or not isinstance(hidden, Sequence):
                raise LearnerConfigError(f"algo.hidden must be a list of layer widths, got {hidden!r}")
            kwargs["hidden"] = tuple(hidden)
        try:
            return cls(**kwargs)
        except TypeError as e:  # a value of the wrong type compared or converted in __post_init__
            raise LearnerConfigError(f"a learner option has a value of the wrong type: {e}") from None
