"""The ``verifiers`` plugin id of alem's text games: ``vf-eval alem_verifiers --env.taskset.env-id kuhn_poker-v0``.

verifiers resolves a taskset id to a top-level module; this one re-exports
:mod:`alem.text.train.verifiers_env` (the ``verifiers`` extra: ``pip install "alem[verifiers]"``),
whose ``__all__`` names the taskset, env and harness classes verifiers loads.
"""

from alem.text.train.verifiers_env import *  # noqa: F403
from alem.text.train.verifiers_env import __all__  # noqa: F401
