"""alem's environments, one subpackage per family; each family registers its own ids.

Entry points are strings, so importing this module imports no env: a family package (or
module) holds only its registry entries and a ``register()`` that adds them.
"""

from __future__ import annotations

from alem.envs import coordination, games, pathfinding, single_agent

__all__ = ["FAMILIES"]

#: The built-in families, in registration order.
FAMILIES = (games, single_agent, coordination, pathfinding)

for _family in FAMILIES:
    _family.register()
del _family
