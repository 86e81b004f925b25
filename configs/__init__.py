"""Hydra configs of alem's entry points (``config.yaml`` for training, ``evaluate.yaml``).

Importing this package (Hydra does, to read ``pkg://alem.configs``) registers the
``algo/_ppo`` and ``algo/_q`` nodes: every option of the PPO and value-based learners set to null, so that ``algo.<option>=value``
works from the command line without ``+``.
"""


def _register_algo_options() -> None:
    from alem.extras import require

    require("train", "alem.configs (Hydra configs)")
    from hydra.core.config_store import ConfigStore

    from alem.algos.qconfig import QConfig
    from alem.algos.variants import hydra_options

    ConfigStore.instance().store(group="algo", name="_ppo", node=hydra_options())
    ConfigStore.instance().store(group="algo", name="_q", node=hydra_options(QConfig))


_register_algo_options()
