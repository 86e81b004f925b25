"""alem strategy tables as OpenSpiel policies (for the tests that score them with OpenSpiel)."""

from __future__ import annotations

from typing import Any

import numpy as np

from alem.envs.games.poker import obs_key


def to_openspiel(game: Any, table: np.ndarray, tree: Any) -> Any:
    """Our table as an OpenSpiel ``TabularPolicy``, matched through the observation (= info-state tensor)."""
    from open_spiel.python import policy as os_policy

    pol = os_policy.TabularPolicy(game)
    row_of = {k: i for i, k in enumerate(tree.infoset_keys)}
    for idx, state in enumerate(pol.states):
        tensor = state.information_state_tensor(state.current_player())
        pol.action_probability_array[idx] = table[row_of[obs_key(tensor)]]
    return pol
