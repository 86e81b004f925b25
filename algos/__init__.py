"""alem's learners: one PPO core (:mod:`alem.algos.ppo`) and the baselines as configurations of it.

from alem.algos import make_config, make_learner
learner = make_learner(env, make_config("mappo", total_steps=200_000))
state = learner.init(jax.random.key(0))
state, metrics = jax.jit(learner.run, static_argnums=1)(state, 10)
"""

from alem.extras import require

require("train", "alem.algos")

from alem.algos.config import LearnerConfig, LearnerConfigError
from alem.algos.ppo import Learner, make_learner
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
]
