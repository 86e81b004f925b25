"""Single-agent gymnax envs through the :class:`~alem.interop.gymnax.FromGymnax` adapter, so
they can drive the learners as one-agent envs (family ``"single_agent"``).

Only registry entries live here (entry points are strings): importing this module imports
neither gymnax nor the adapter.
"""

from __future__ import annotations

__all__ = ["GYMNAX_IDS", "register"]

#: alem id -> gymnax env name.
GYMNAX_IDS = {
    "gymnax/cartpole-v1": "CartPole-v1",
    "gymnax/pendulum-v1": "Pendulum-v1",
}


def register() -> None:
    """Register the gymnax ids (family ``"single_agent"``)."""
    from alem.registry import register

    for alem_id, gymnax_name in GYMNAX_IDS.items():
        register(
            alem_id,
            "alem.interop.gymnax:make_gymnax",
            kwargs={"name": gymnax_name},
            family="single_agent",
            num_agents=1,
            reference=f"gymnax {gymnax_name}",
            requires={"gymnax": "alem[gymnax]"},
            description=f"gymnax {gymnax_name} as a one-agent env (FromGymnax)",
        )
