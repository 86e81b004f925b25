"""DPO's update traced against IPPO's on the same batch (the diagnosis in docs/learners.md).

Trains DPO on LBF 8x8-2p-2f-coop with the reference table's config (16 envs x 128 steps, 4 epochs
x 4 minibatches, Adam 5e-4 annealed, 300 updates), and at a few updates takes that update's batch
and optimises it twice from the same parameters: with DPO's objective and with IPPO's clipped one.
It prints, per traced update:

- the KL(old || new) over the batch after each optimisation (DPO's and IPPO's step sizes);
- at DPO's optimised parameters, the gradient norms (actor parameters, whole batch) of the
  three terms of DPO's loss: ``-r A``, ``beta1 sqrt(KL)`` and ``beta2 KL``;
- beta1 and beta2 at that update, and the sqrt(KL) threshold sqrt(2 Var(A)) of the advantages
  (above it the sqrt term alone would hold the policy at the old one; tests/algos/test_dpo.py);

then the betas, the KL after each update and the return over training::

    python -m benchmarks.dpo_diagnosis [--trace 0 10 50 150] [--updates 300]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import alem
from alem.algos import make_learner
from alem.algos.losses import dpo_surrogate

CONFIG = dict(num_envs=16, num_steps=128, update_epochs=4, num_minibatches=4, lr=5e-4, total_steps=614400)


def _norm(tree) -> jax.Array:
    return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in jax.tree.leaves(tree)))


def trace_update(dpo, ippo, state, key):
    """One update's batch, optimised by DPO and by IPPO from the same parameters."""
    params = dpo.env.default_params
    st, batch, roll = dpo.rollout(state, params)
    hidden0 = roll["hidden0"]
    adv, targets = dpo.advantages(st, batch, params)
    m = dpo.num_units
    after = {}
    for name, learner in (("dpo", dpo), ("ippo", ippo)):
        new, _ = learner.optimise(st, batch, hidden0, adv, targets, jnp.ones((m,)), None, key)
        _, kl = dpo.unit_ratio_and_kl(new.params, batch, hidden0)
        after[name] = (new, kl)
    new, kl = after["dpo"]
    w = dpo.unit_acting(batch.acting).astype(jnp.float32)
    a_norm = (adv - (adv * w).sum() / w.sum()) / jnp.sqrt(
        ((adv - (adv * w).sum() / w.sum()) ** 2 * w).sum() / w.sum()
    )
    betas = st.betas

    def terms(actor):
        p = {**new.params, "actor": actor}
        ratio, kl = dpo.unit_ratio_and_kl(p, batch, hidden0)
        mean = lambda x: (x * w).sum() / w.sum()
        zero = jnp.zeros_like(kl)
        surr = mean(dpo_surrogate(ratio, a_norm, zero, 0.0, 0.0))
        sq = mean(dpo_surrogate(jnp.zeros_like(ratio), zero, kl, betas[0], 0.0))
        lin = mean(dpo_surrogate(jnp.zeros_like(ratio), zero, kl, 0.0, betas[1]))
        return surr, sq, lin

    grads = [jax.grad(lambda a, i=i: terms(a)[i])(new.params["actor"]) for i in range(3)]
    mean = lambda x: (x * w).sum() / w.sum()
    return {
        "kl_dpo": mean(after["dpo"][1]),
        "kl_ippo": mean(after["ippo"][1]),
        "grad_adv": _norm(grads[0]),
        "grad_sqrt": _norm(grads[1]),
        "grad_kl": _norm(grads[2]),
        "beta1": betas[0].mean(),
        "beta2": betas[1].mean(),
        "sqrt_threshold": jnp.sqrt(2 * mean(a_norm**2)),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="lbf_8x8_2p_2f_coop-v0")
    p.add_argument("--updates", type=int, default=300)
    p.add_argument("--trace", type=int, nargs="+", default=[0, 10, 50, 150])
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    env = alem.make(a.env)
    dpo = make_learner("dpo", env, **CONFIG)
    ippo = make_learner("ippo", env, **CONFIG)
    trace = jax.jit(lambda s, k: trace_update(dpo, ippo, s, k))
    run = jax.jit(dpo.run, static_argnums=1)
    state = dpo.init(jax.random.key(a.seed))
    print(f"{a.env}, DPO with the reference table's config; seed {a.seed}")
    print(
        "| update | KL after DPO | KL after IPPO | |grad -rA| | |grad b1 sqrtKL| | |grad b2 KL| | beta1 | beta2 | sqrt(2 Var A) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    done, rows, t0 = 0, [], time.perf_counter()
    for stop in sorted(set(a.trace) | {a.updates}):
        if stop > done:
            state, m = run(state, stop - done)
            m = jax.device_get(m)
            ret = m["return_sum"].sum(-1) / np.maximum(m["episodes"], 1) / env.num_agents
            rows += list(
                zip(range(done + 1, stop + 1), m["beta1"], m["beta2"], m["kl_after_update"], ret, strict=True)
            )
            done = stop
        if stop in a.trace:
            t = {k: float(v) for k, v in trace(state, jax.random.key(stop)).items()}
            print(
                f"| {stop} | {t['kl_dpo']:.4f} | {t['kl_ippo']:.4f} | {t['grad_adv']:.3g} | {t['grad_sqrt']:.3g} "
                f"| {t['grad_kl']:.3g} | {t['beta1']:.3g} | {t['beta2']:.3g} | {t['sqrt_threshold']:.2f} |",
                flush=True,
            )
    print("\nover training (means over blocks of updates):")
    print("| updates | beta1 | beta2 | KL after update | return per agent |")
    print("|---|---|---|---|---|")
    block = max(len(rows) // 10, 1)
    for i in range(0, len(rows), block):
        part = np.array([r[1:] for r in rows[i : i + block]], dtype=np.float64)
        print(
            f"| {rows[i][0]}-{rows[min(i + block, len(rows)) - 1][0]} | "
            + " | ".join(f"{x:.4g}" for x in part.mean(0))
            + " |"
        )
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
