"""alem's learners: one PPO core (:mod:`alem.algos.ppo`) and one value-based core
(:mod:`alem.algos.qlearning`), the baselines as presets of them, all in one table
(:data:`LEARNERS`, :mod:`alem.algos.registry`).

from alem.algos import make_config, make_learner
learner = make_learner("mappo", env, total_steps=200_000)  # = make_learner(env, make_config("mappo", ...))
state = learner.init(jax.random.key(0))
state, metrics = jax.jit(learner.run, static_argnums=1)(state, 10)

Deprecated aliases, kept for one release: ``Learner`` (:class:`PPOLearner`), ``LearnerConfig``
(:class:`PPOConfig`), ``LearnerState`` (:class:`PPOState`).
"""

from alem.extras import require

require("train", "alem.algos")

from alem.algos.config import LearnerConfig, LearnerConfigError, PPOConfig
from alem.algos.ppo import Learner, PPOLearner, make_ppo_learner
from alem.algos.qconfig import Q_VARIANTS, QConfig, make_q_config
from alem.algos.qlearning import QLearner, QState, make_q_learner
from alem.algos.registry import LEARNERS, LearnerEntry, learner_entry, make_config, make_learner
from alem.algos.state import LearnerState, PPOBatch, PPOState
from alem.algos.variants import VARIANTS

__all__ = [
    "LEARNERS",
    "LearnerEntry",
    "learner_entry",
    "make_config",
    "make_learner",
    "LearnerConfigError",
    "PPOConfig",
    "PPOLearner",
    "PPOState",
    "PPOBatch",
    "make_ppo_learner",
    "VARIANTS",
    "QConfig",
    "QLearner",
    "QState",
    "Q_VARIANTS",
    "make_q_config",
    "make_q_learner",
    # deprecated aliases, kept for one release
    "LearnerConfig",
    "Learner",
    "LearnerState",
]
