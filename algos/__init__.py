"""alem's learners: one PPO core (:mod:`alem.algos.ppo`) and one value-based core
(:mod:`alem.algos.qlearning`), the baselines as configurations of them.

from alem.algos import make_config, make_learner
learner = make_learner(env, make_config("mappo", total_steps=200_000))
state = learner.init(jax.random.key(0))
state, metrics = jax.jit(learner.run, static_argnums=1)(state, 10)
"""

from alem.extras import require

require("train", "alem.algos")

from alem.algos.config import LearnerConfig, LearnerConfigError
from alem.algos.ppo import Learner, make_learner
from alem.algos.qconfig import Q_VARIANTS, QConfig, make_q_config
from alem.algos.qlearning import QLearner, make_q_learner
from alem.algos.state import LearnerState
from alem.algos.variants import VARIANTS, make_config

__all__ = [
    "LearnerConfig",
    "LearnerConfigError",
    "Learner",
    "LearnerState",
    "make_learner",
    "VARIANTS",
    "make_config",
    "QConfig",
    "QLearner",
    "Q_VARIANTS",
    "make_q_config",
    "make_q_learner",
]
