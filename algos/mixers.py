"""Value mixers of the value-based learners: how the agents' chosen Q values make the team's.

- VDN (Sunehag et al., 2018): ``Q_tot = sum_i Q_i``.
- QMIX (Rashid et al., 2018): ``Q_tot = w2 . elu(W1 q + b1) + b2`` where ``W1``, ``b1``, ``w2``
  and ``b2`` come from hypernetworks of the global state, and ``W1`` and ``w2`` are absolute
  values, so ``Q_tot`` is monotonic in every ``Q_i``: the team's greedy joint action is each
  agent's own greedy action.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from alem.algos.networks import orthogonal

__all__ = ["vdn", "QMixer"]


def vdn(q_chosen: jax.Array) -> jax.Array:
    """``[..., N] -> [...]``: the sum over agents."""
    return q_chosen.sum(-1)


class QMixer(nn.Module):
    """QMIX's monotonic mixer: ``(q [..., N], state [..., S]) -> Q_tot [...]``."""

    embed: int = 32
    hyper_hidden: int = 64
    init_scale: float = 0.001  # of the hypernetworks' last layers (see below)

    @nn.compact
    def __call__(self, q: jax.Array, state: jax.Array) -> jax.Array:
        n = q.shape[-1]
        state = state.astype(jnp.float32)
        # Small initial mixing weights: with default initialisations |W1| |w2| summed over the
        # embedding makes Q_tot tens of times any agent's Q, and its one-step targets diverge
        # (seen on MPE simple_spread: Q_tot above +150 where returns are about -20).
        small = orthogonal(self.init_scale)
        hyper = lambda out, name: nn.Sequential(
            [
                nn.Dense(self.hyper_hidden, name=f"{name}_0"),
                nn.relu,
                nn.Dense(out, kernel_init=small, name=f"{name}_1"),
            ]
        )(state)
        w1 = jnp.abs(hyper(n * self.embed, "w1")).reshape(*q.shape[:-1], n, self.embed)
        b1 = nn.Dense(self.embed, name="b1")(state)
        w2 = jnp.abs(hyper(self.embed, "w2"))
        b2 = nn.Sequential([nn.Dense(self.embed, name="b2_0"), nn.relu, nn.Dense(1, name="b2_1")])(state)[
            ..., 0
        ]
        hidden = nn.elu(jnp.einsum("...n,...ne->...e", q, w1) + b1)
        return (hidden * w2).sum(-1) + b2
