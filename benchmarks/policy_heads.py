"""Policy-head micro-benchmark: alem's hand-written masked categorical against ``distrax.Categorical``.

Times log-prob + entropy + KL(old || new) and their gradient on a masked batch, jitted, both sides
alternating, and prints the medians and their ratio: ``python -m benchmarks.policy_heads``.
"""

from __future__ import annotations

import argparse
import time

import distrax
import jax
import jax.numpy as jnp
import numpy as np

from alem.algos.losses import categorical_entropy, categorical_kl, masked_log_softmax


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=8192)
    ap.add_argument("--actions", type=int, default=9)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    k = jax.random.split(jax.random.key(0), 3)
    old = jax.random.normal(k[0], (args.batch, args.actions))
    new = old + 0.1 * jax.random.normal(k[1], old.shape)
    mask = jax.random.bernoulli(k[2], 0.7, old.shape).at[:, 0].set(True)
    act = jnp.argmax(jnp.where(mask, old, -jnp.inf), -1)

    def alem_head(o, n):
        p, q = masked_log_softmax(o, mask), masked_log_softmax(n, mask)
        logp = jnp.take_along_axis(q, act[:, None], -1)[:, 0]
        return logp.sum() + categorical_entropy(q).sum() + categorical_kl(p, q).sum()

    def distrax_head(o, n):
        p = distrax.Categorical(logits=jnp.where(mask, o, -1e9))
        q = distrax.Categorical(logits=jnp.where(mask, n, -1e9))
        return q.log_prob(act).sum() + q.entropy().sum() + p.kl_divergence(q).sum()

    fns = {
        name: jax.jit(jax.value_and_grad(f, argnums=1))
        for name, f in (("alem", alem_head), ("distrax", distrax_head))
    }
    values = {name: float(f(old, new)[0]) for name, f in fns.items()}
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(args.reps):
        for name, f in fns.items():
            t = time.perf_counter()
            jax.block_until_ready(f(old, new))
            times[name].append(time.perf_counter() - t)
    med = {name: float(np.median(t)) for name, t in times.items()}
    print(f"batch {args.batch} x {args.actions} actions, {args.reps} reps, backend {jax.default_backend()}")
    for name in fns:
        print(f"{name:8s} {med[name] * 1e3:7.3f} ms  (value {values[name]:.4f})")
    print(f"distrax / alem time: {med['distrax'] / med['alem']:.2f}")


if __name__ == "__main__":
    main()
