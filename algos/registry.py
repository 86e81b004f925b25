"""The one table of alem's learners: each name with its core, configuration class, preset and
factory. The training command, the benchmarks, the checkpoint player and population play's
partners all build learners through it, so a preset or a core added here is known everywhere::

    from alem.algos import make_config, make_learner

    learner = make_learner("mappo", env, total_steps=200_000)  # name and options in one call
    same = make_learner(env, make_config("mappo", total_steps=200_000))  # or from a config

``make_learner(env, cfg)`` dispatches on the configuration's class (:class:`PPOConfig`,
:class:`QConfig`), so the same call builds a PPO or a value-based learner.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from alem.algos.config import PPOConfig, RunConfig
from alem.algos.ppo import PPOLearner, make_ppo_learner
from alem.algos.qconfig import Q_VARIANTS, QConfig
from alem.algos.qlearning import QLearner, make_q_learner
from alem.algos.variants import VARIANTS
from alem.core import MultiAgentEnv
from alem.errors import LearnerConfigError, did_you_mean

__all__ = ["LearnerEntry", "LEARNERS", "learner_entry", "entry_for", "make_config", "make_learner"]

#: ``factory(env, cfg, param_sets, partners) -> learner``: the signature every core's factory has.
Factory = Callable[[MultiAgentEnv, Any, Any, "str | None"], Any]


@dataclasses.dataclass(frozen=True)
class LearnerEntry:
    """One registered learner: a preset of a core."""

    name: str
    core: str  # "ppo" | "q": which core the preset configures
    kind: str  # the core in messages: "PPO", "value-based"
    config: type[RunConfig]  # the core's configuration class
    preset: Mapping[str, Any]  # the preset's values over the class's defaults
    factory: Factory  # builds the core's learner for an env and a checked configuration
    learner: type  # the class the factory returns

    def make_config(self, **options: Any) -> Any:
        """This preset with ``options`` over it (a configuration field each; None keeps the preset's)."""
        return self.config.from_preset(self.name, self.preset, options)


def _build_ppo(env: MultiAgentEnv, cfg: PPOConfig, param_sets: Any, partners: str | None) -> PPOLearner:
    if partners is None:  # a template when cfg.partners is set: a restored checkpoint holds the pool
        return make_ppo_learner(env, cfg, param_sets)
    from alem.algos.population import partner_actors  # it plays checkpoints: imported when needed

    if cfg.partners != partners:
        cfg = dataclasses.replace(cfg, partners=partners)  # checked again by PPOConfig
    cfg, actors = partner_actors(cfg, env)  # cfg.pool_size becomes the partners' count
    return make_ppo_learner(env, cfg, param_sets, partner_actor=actors)


def _build_q(env: MultiAgentEnv, cfg: QConfig, param_sets: Any, partners: str | None) -> QLearner:
    if partners is not None:
        raise LearnerConfigError(
            f"partners={partners!r}: population play seats trained partners beside a PPO learner; "
            f"the value-based {cfg.name} takes none"
        )
    learner = make_q_learner(env, cfg)
    if param_sets is not None and not np.array_equal(np.asarray(param_sets), learner.param_sets):
        raise LearnerConfigError(
            f"param_sets {np.asarray(param_sets).tolist()} are not the value-based {cfg.name}'s own "
            f"({learner.param_sets.tolist()}, from algo.sharing={cfg.sharing})"
        )
    return learner


def _entries(core: str, kind: str, config: type, presets: Mapping, factory: Factory, learner: type):
    return {
        name: LearnerEntry(name, core, kind, config, MappingProxyType(dict(preset)), factory, learner)
        for name, preset in presets.items()
    }


#: Every learner by name: the PPO core's presets (:data:`~alem.algos.variants.VARIANTS`) and the
#: value-based core's (:data:`~alem.algos.qconfig.Q_VARIANTS`).
LEARNERS: Mapping[str, LearnerEntry] = MappingProxyType(
    {
        **_entries("ppo", "PPO", PPOConfig, VARIANTS, _build_ppo, PPOLearner),
        **_entries("q", "value-based", QConfig, Q_VARIANTS, _build_q, QLearner),
    }
)


def learner_entry(name: str) -> LearnerEntry:
    """The entry of learner ``name``; an unknown name is one line that lists the known ones."""
    entry = LEARNERS.get(name) if isinstance(name, str) else None
    if entry is None:
        raise LearnerConfigError(
            f"unknown learner {name!r}{did_you_mean(str(name), LEARNERS)}; known: {', '.join(sorted(LEARNERS))}"
        )
    return entry


def entry_for(cfg: Any) -> LearnerEntry:
    """The entry that builds ``cfg``: its preset's when ``cfg.name`` is registered with ``cfg``'s
    class, else the first of that class (a configuration built by hand under another name);
    anything else is a :class:`LearnerConfigError` naming the configuration classes."""
    entry = LEARNERS.get(getattr(cfg, "name", None))
    if entry is not None and isinstance(cfg, entry.config):
        return entry
    for entry in LEARNERS.values():
        if isinstance(cfg, entry.config):
            return entry
    classes = ", ".join(dict.fromkeys(e.config.__name__ for e in LEARNERS.values()))
    raise LearnerConfigError(f"not a learner configuration ({classes}): {type(cfg).__name__}")


def make_config(name: str, **options: Any) -> Any:
    """Learner ``name``'s configuration (:class:`PPOConfig` or :class:`QConfig`, as its entry
    says) with ``options`` over its preset; None keeps the preset's value."""
    return learner_entry(name).make_config(**options)


def make_learner(
    learner: str | MultiAgentEnv,
    env_or_cfg: Any,
    /,
    param_sets: np.ndarray | None = None,
    *,
    partners: str | None = None,
    **options: Any,
) -> Any:
    """A learner, checked against its env before anything compiles; two call forms:

    - ``make_learner(name, env, **options)``: learner ``name`` (any entry of :data:`LEARNERS`)
      with ``options`` over its preset (:func:`make_config`);
    - ``make_learner(env, cfg)``: from a configuration, dispatched on its class.

    ``param_sets``: the parameter set of each unit (default: the configuration's sharing decides).
    ``partners``: a partner manifest (``<pool>[:split]``, PPO learners): population play beside
    its trained partners, loaded now (``cfg.partners`` becomes it and ``cfg.pool_size`` their
    count). Without it a configuration that names partners builds a template whose pool holds
    its own initial actor, which is what restoring a checkpoint (that holds the pool) needs.
    ``roles=`` is the deprecated name of ``param_sets=`` (it warns; one release).
    """
    if "roles" in options:
        warnings.warn("make_learner(roles=...) is now param_sets=", DeprecationWarning, stacklevel=2)
        param_sets = options.pop("roles")
    if isinstance(learner, str):
        env, cfg = env_or_cfg, make_config(learner, **options)
    elif options:
        raise LearnerConfigError(
            f"make_learner(env, cfg) takes no options ({', '.join(sorted(options))}); "
            "set them on the configuration or call make_learner(name, env, **options)"
        )
    else:
        env, cfg = learner, env_or_cfg
    if isinstance(env, RunConfig | str) or not hasattr(env, "num_agents"):  # duck-typed envs pass
        raise LearnerConfigError(
            f"make_learner needs an env (alem.make(...)), got {type(env).__name__}; "
            "call make_learner(name, env, **options) or make_learner(env, cfg)"
        )
    return entry_for(cfg).factory(env, cfg, param_sets, partners)
