"""The learner configuration: PPO hyperparameters plus the four parts that make a baseline.

Every baseline is a :class:`PPOConfig` (see :mod:`alem.algos.variants`; ``LearnerConfig`` is
its deprecated alias, kept for one release):

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

Self-play (``selfplay``, two-player zero-sum envs only): the opponent seat is played by
past snapshots of the learner kept in a pool (latest, uniform = fictitious self-play,
prioritised = PFSP, or a PSRO meta-Nash mixture); see :mod:`alem.algos.selfplay`.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from alem.errors import LearnerConfigError, did_you_mean, require_positive_int

__all__ = ["PPOConfig", "LearnerConfig", "LearnerConfigError", "RunConfig"]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_CHOICES = {
    "actor": ("local", "joint", "joint_action"),
    "critic": ("local", "global"),
    "sharing": ("shared", "none", "roles", "seps"),
    "objective": ("clip", "dpo"),
    "update_order": ("simultaneous", "sequential"),
    "activation": ("tanh", "relu"),
    "selfplay": ("off", "latest", "uniform", "prioritised", "psro"),
    "pool_replace": ("ring", "reservoir"),
}


class RunConfig:
    """What the learner configs (:class:`PPOConfig`, :class:`~alem.algos.qconfig.QConfig`)
    share: the update count of a run and building one from a (Hydra) mapping or a preset."""

    #: Names the options in the "unknown option" message (e.g. " of the value-based learners").
    options_of: ClassVar[str] = ""
    #: The core in messages ("PPO", "value-based").
    kind: ClassVar[str] = ""

    def transfer_refusal(self, roles: Sequence[int]) -> str | None:
        """Why a trained actor of this configuration (with ``roles``) cannot play another env than
        its own (another id, team size or map), or None when it can."""
        return f"it is a {self.kind} run"

    @property
    def num_updates(self) -> int:
        return -(-self.total_steps // (self.num_envs * self.num_steps))

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Any:
        """Build from a (Hydra) mapping; unknown keys are an error that names them."""
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - fields)
        if unknown:
            hints = [k + did_you_mean(k, fields) for k in unknown]
            raise LearnerConfigError(f"unknown algo option(s){cls.options_of}: {', '.join(hints)}")
        kwargs = dict(values)
        if "hidden" in kwargs:
            hidden = kwargs["hidden"]
            if isinstance(hidden, str) or not isinstance(hidden, Sequence):
                raise LearnerConfigError(f"algo.hidden must be a list of layer widths, got {hidden!r}")
            kwargs["hidden"] = tuple(hidden)
        hints = typing.get_type_hints(cls)
        for key, value in kwargs.items():
            want = _wrong_type(value, hints.get(key))
            if want is not None:
                raise LearnerConfigError(f"algo.{key} must be {want}, got {value!r}")
        try:
            return cls(**kwargs)
        except TypeError as e:  # a value of the wrong type compared or converted in __post_init__
            raise LearnerConfigError(f"a learner option has a value of the wrong type: {e}") from None

    @classmethod
    def from_preset(cls, name: str, preset: Mapping[str, Any], overrides: Mapping[str, Any]) -> Any:
        """Preset ``name`` (its ``preset`` values) with ``overrides`` over them; an override of
        None keeps the preset's value (Hydra's unset options are null)."""
        given = {k: v for k, v in overrides.items() if v is not None}
        return cls.from_mapping({**preset, **given, "name": name})


#: A numeric option's accepted range: ``(low, high, low_closed, high_closed)``; None: unbounded.
Range = tuple[float | None, float | None, bool, bool]
POSITIVE: Range = (0, None, False, False)
NON_NEGATIVE: Range = (0, None, True, False)
FINITE: Range = (None, None, False, False)
UNIT: Range = (0, 1, True, True)


def check_ranges(cfg: Any, ranges: Mapping[str, Range]) -> None:
    """Refuse the first field of ``cfg`` outside its range (NaN and infinities always), naming it."""
    for field, (low, high, low_closed, high_closed) in ranges.items():
        value = getattr(cfg, field)
        ok = math.isfinite(value)
        ok = ok and (low is None or (value >= low if low_closed else value > low))
        ok = ok and (high is None or (value <= high if high_closed else value < high))
        if not ok:
            if low is not None and high is not None:
                bound = f"in {'[' if low_closed else '('}{low}, {high}{']' if high_closed else ')'}"
            elif low is not None:
                bound = f"{'>=' if low_closed else '>'} {low}"
            else:
                bound = "finite"
            raise LearnerConfigError(f"algo.{field} must be {bound}, got {value!r}")


def unread_groups(*groups: tuple[bool, tuple[str, ...], str]) -> dict[str, str]:
    """``{option: setting}`` of every ``(unread, options, setting that reads them)`` group that is unread."""
    return {name: reader for unread, names, reader in groups if unread for name in names}


_KIND_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _wrong_type(value: Any, hint: Any) -> str | None:
    """What a field annotated ``hint`` accepts, when ``value`` is not that (else None). Plain
    kinds only (bool, int, float, str, tuples and their optional forms); None is the preset's
    value and always passes."""
    if value is None or hint is None:
        return None
    kinds = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    kinds = [k for k in kinds if k is not type(None)]
    for k in kinds:
        if typing.get_origin(k) is tuple:
            if isinstance(value, tuple | list):
                return None
        elif k is bool:
            if isinstance(value, bool):
                return None
        elif k is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return None
        elif k is float:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return None
        elif k is str:
            if isinstance(value, str):
                return None
        else:  # a kind this check does not judge
            return None
    names = [_KIND_NAMES.get(k, "a list") for k in kinds]
    return " or ".join(dict.fromkeys(names)) + (
        " (or null)" if isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint) else ""
    )


#: Continuous knobs of the PPO core that one compiled program can vary per row (``sweep.<knob>``):
#: read from the learner state's ``hyper`` where swept, from the config otherwise.
SWEEPABLE = ("lr", "ent_coef", "clip_eps", "gamma", "gae_lambda")


@dataclasses.dataclass(frozen=True)
class PPOConfig(RunConfig):
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
    ent_coef_end: float = -1.0  # >= 0: the entropy coefficient moves linearly from ent_coef to this over the run's updates; < 0: constant
    vf_coef: float = 0.5
    # an env-params field moved linearly over training (e.g. Overcooked's shaping_factor -> 0)
    anneal_param: str = ""  # name of a float scalar field of the env's params; "" = off
    anneal_param_end: float = 0.0  # its value after anneal_param_steps env steps
    anneal_param_steps: int = 0  # env steps of the schedule; 0 = the whole run; constant afterwards
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
    # self-play against a pool of past snapshots (two-player zero-sum envs; alem.algos.selfplay)
    selfplay: str = "off"  # off | latest | uniform (fictitious self-play) | prioritised (PFSP) | psro
    pool_size: int = 8  # K actor snapshots kept in the learner state (slot 0: the initial parameters)
    snapshot_every: int = 10  # updates between snapshots
    pool_replace: str = "ring"  # ring: the last K snapshots; reservoir: a uniform sample of all taken
    selfplay_current: float = (
        0.0  # probability that an episode's opponent is the current policy (both seats learn)
    )
    selfplay_random: float = (
        0.0  # probability that an episode's opponent plays uniform-random legal moves (any selfplay mode)
    )
    selfplay_random_seat: int = (
        -1
    )  # the learner's seat in those episodes (-1: drawn uniformly, as in the others)
    pfsp_power: float = 2.0  # prioritised: a snapshot's weight is (1 - learner's score vs it)^p
    win_rate_ema: float = 0.05  # per finished episode: rate of the running score per snapshot
    psro_iters: int = 1000  # psro: fictitious-play iterations of the meta-Nash solver
    psro_eval_envs: int = 8  # psro: envs per pool member (even: both seats) when a snapshot is added
    psro_eval_steps: int = 32  # psro: steps of that evaluation (every episode that ends counts)
    # population play against a fixed pool of trained partners (cooperative envs; alem.arena.crossplay)
    partners: str | None = None  # <manifest>[:split] (split train when none): the ego learns in one seat
    # the knobs a vmapped sweep varies per row (alem.train's sweep.*): read from the learner state
    sweep: tuple[str, ...] = ()
    #: What ``sweep`` may name (:data:`SWEEPABLE`).
    sweepable: ClassVar[tuple[str, ...]] = SWEEPABLE
    kind: ClassVar[str] = "PPO"

    def transfer_refusal(self, roles: Sequence[int]) -> str | None:
        """None when the parameters do not depend on the team: one shared role, no agent-id input,
        local actor and critic (see :meth:`RunConfig.transfer_refusal`)."""
        if len(set(roles)) != 1 or self.agent_id:
            return "its agents have their own parameters or an agent-id input"
        if self.actor != "local" or self.critic != "local":
            return f"its actor/critic are {self.actor}/{self.critic}, not local (their inputs depend on the team)"
        return None

    def __post_init__(self):
        object.__setattr__(self, "sweep", tuple(self.sweep))  # a list from results.json
        bad = [k for k in self.sweep if k not in SWEEPABLE]
        if bad:
            raise LearnerConfigError(
                f"algo.sweep names {bad}; the knobs a vmapped sweep varies are {list(SWEEPABLE)}"
            )
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
        check_ranges(self, self.RANGES)
        for field in (
            *("seps_roles", "seps_steps", "seps_epochs"),
            *("pool_size", "snapshot_every", "psro_iters", "psro_eval_envs", "psro_eval_steps"),
        ):
            require_positive_int(getattr(self, field), f"algo.{field}", error=LearnerConfigError)
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

        if not _is_int(self.anneal_param_steps) or self.anneal_param_steps < 0:
            raise LearnerConfigError(
                f"algo.anneal_param_steps must be an integer >= 0 (0: the whole run), got {self.anneal_param_steps!r}"
            )
        if not 0 <= self.selfplay_random < 1:
            raise LearnerConfigError(f"algo.selfplay_random must be in [0, 1), got {self.selfplay_random!r}")
        if not _is_int(self.selfplay_random_seat) or self.selfplay_random_seat < -1:
            raise LearnerConfigError(
                f"algo.selfplay_random_seat must be a seat index or -1 (drawn), got {self.selfplay_random_seat!r}"
            )
        if self.partners is not None:
            if not isinstance(self.partners, str) or not self.partners.strip():
                raise LearnerConfigError(
                    f"algo.partners must be a partner manifest like <pool folder>:train, got {self.partners!r}"
                )
            if self.selfplay != "off" or self.selfplay_random > 0:
                raise LearnerConfigError(
                    "algo.partners trains against a fixed pool of partners; it does not combine with "
                    f"algo.selfplay={self.selfplay} or algo.selfplay_random={self.selfplay_random}"
                )
            if self.recurrent:  # a partner acts from each step's observation alone
                raise LearnerConfigError("algo.partners needs a feed-forward learner (recurrent=0)")
        if self.selfplay != "off" or self.selfplay_random > 0:
            self._check_selfplay()

    #: Every float option's range (a negative loss weight turns a loss term into a reward to
    #: diverge on; a decay or an EMA rate outside [0, 1] does not converge).
    RANGES: ClassVar[dict[str, Range]] = {
        "lr": POSITIVE,
        "max_grad_norm": POSITIVE,
        "clip_eps": POSITIVE,
        "dpo_target_kl": POSITIVE,
        "ent_coef": NON_NEGATIVE,
        "ent_coef_end": FINITE,  # < 0: constant
        "vf_coef": NON_NEGATIVE,
        "gamma": UNIT,
        "gae_lambda": UNIT,
        "value_norm_beta": UNIT,
        "log_std_init": FINITE,
        "dpo_beta1": NON_NEGATIVE,
        "dpo_beta2": NON_NEGATIVE,
        "selfplay_current": UNIT,
        "pfsp_power": NON_NEGATIVE,
        "win_rate_ema": (0, 1, False, True),
        "anneal_param_end": FINITE,
    }

    def unread(self) -> dict[str, str]:
        """The options this configuration never reads, each with the setting that would read it:
        a command line that sets one is refused (it would be ignored silently)."""
        return unread_groups(
            (self.objective != "dpo", ("dpo_target_kl", "dpo_beta1", "dpo_beta2"), "algo.objective=dpo"),
            (self.sharing != "seps", ("seps_roles", "seps_steps", "seps_epochs"), "algo.sharing=seps"),
            (not self.value_norm, ("value_norm_beta",), "algo.value_norm=true"),
            (not self.anneal_param, ("anneal_param_end", "anneal_param_steps"), "algo.anneal_param=<field>"),
            (
                self.selfplay != "psro",
                ("psro_iters", "psro_eval_envs", "psro_eval_steps"),
                "algo.selfplay=psro",
            ),
            (self.selfplay != "prioritised", ("pfsp_power",), "algo.selfplay=prioritised"),
            (not self.selfplay_random > 0, ("selfplay_random_seat",), "algo.selfplay_random > 0"),
        )

    def _check_selfplay(self) -> None:
        what = f"algo.selfplay={self.selfplay}" if self.selfplay != "off" else "algo.selfplay_random"
        if self.actor != "local" or self.sharing != "shared" or self.recurrent:
            raise LearnerConfigError(
                f"{what} needs a decentralised feed-forward actor with shared "
                f"parameters (actor=local, sharing=shared, recurrent=0), got actor={self.actor}, "
                f"sharing={self.sharing}, recurrent={self.recurrent}"
            )
        if self.selfplay == "off":  # selfplay_random alone: current self or random, no pool
            return
        if self.psro_eval_envs % 2:
            raise LearnerConfigError(
                f"algo.psro_eval_envs={self.psro_eval_envs} must be even (half the envs per seat)"
            )
        if self.selfplay == "latest" and self.pool_replace == "reservoir":
            raise LearnerConfigError(
                "algo.selfplay=latest needs pool_replace=ring (a reservoir may drop the newest snapshot)"
            )
        if not self.pfsp_power >= 0:
            raise LearnerConfigError(f"algo.pfsp_power must be >= 0, got {self.pfsp_power!r}")
        if not 0 <= self.selfplay_current < 1:
            raise LearnerConfigError(
                f"algo.selfplay_current must be in [0, 1), got {self.selfplay_current!r}"
            )
        if self.selfplay_current + self.selfplay_random >= 1:
            raise LearnerConfigError(
                f"algo.selfplay_current + algo.selfplay_random = {self.selfplay_current + self.selfplay_random:g} "
                "leaves no episodes against the pool (must be < 1)"
            )
        if not 0 < self.win_rate_ema <= 1:
            raise LearnerConfigError(f"algo.win_rate_ema must be in (0, 1], got {self.win_rate_ema!r}")
        snapshots = 1 + self.num_updates // self.snapshot_every
        if self.pool_size > snapshots:
            raise LearnerConfigError(
                f"algo.pool_size={self.pool_size} is larger than the {snapshots} snapshots this run takes "
                f"(the initial parameters + one every snapshot_every={self.snapshot_every} of its "
                f"num_updates={self.num_updates} updates): use pool_size <= {snapshots}, a smaller "
                "snapshot_every or a larger total_steps"
            )


#: Deprecated alias of :class:`PPOConfig` (the PPO core's name beside ``QConfig``), kept for one release.
LearnerConfig = PPOConfig
