"""The poker games' shared chance helpers (envs/games/poker.py)."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from alem.envs.games.poker import all_deals, deal, decode_deal


@pytest.mark.parametrize(("num_cards", "num_dealt"), [(3, 2), (4, 3), (6, 3), (6, 2), (7, 4)])
def test_decoded_deals_are_the_lexicographic_list_of_every_ordered_deal(num_cards, num_dealt):
    """decode_deal(i) is the i-th ordered deal in itertools' order, for every i (jitted, vmapped):
    a draw of i uniform below their count is then a uniform deal without replacement."""
    expected = np.array(list(itertools.permutations(range(num_cards), num_dealt)))
    index = jnp.arange(len(expected), dtype=jnp.int32)
    decoded = jax.jit(jax.vmap(lambda i: decode_deal(i, num_cards, num_dealt)))(index)
    np.testing.assert_array_equal(np.asarray(decoded), expected)
    np.testing.assert_array_equal(all_deals(num_cards, num_dealt), expected)


def test_deal_draws_every_ordered_deal_about_equally_often():
    cards = np.asarray(jax.vmap(lambda k: deal(k, 3, 2))(jax.random.split(jax.random.key(0), 6000)))
    assert ((cards >= 0) & (cards < 3)).all() and (cards[:, 0] != cards[:, 1]).all()
    counts = np.unique(cards[:, 0] * 3 + cards[:, 1], return_counts=True)[1]
    assert len(counts) == 6 and counts.min() > 850 and counts.max() < 1150  # 1000 each, 5 sd ~ 150
