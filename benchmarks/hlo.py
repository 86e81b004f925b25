"""A CPU-side proxy of GPU cost: what XLA compiles for one env step (and one training update).

On a GPU a batched env step in the 1k-64k env regime is bound by kernel launches, host syncs and
memory traffic, not arithmetic. None of that needs a GPU to count: this tool compiles one step of
alem and of the reference on the same work (the :class:`~benchmarks.harness.StepProgram` that the
throughput rollouts scan: random legal actions for the batch, the step, auto-reset) and reports

- ``fusions``: fusion kernels in the optimized HLO (each is one kernel launch on a GPU);
- ``kernels``: every top-level instruction that does work (fusions, unfused ops, custom calls;
  not parameters, constants, tuples, bitcasts), a proxy for launches per step; a loop of known
  trip count counts as one (on CPU the PRNG's rounds are such loops; a GPU runs them as one
  custom-call kernel), the body of a data-dependent loop once;
- ``while_dynamic``, ``conditional``: data-dependent control flow (loops without a trip count
  known to the compiler); on a GPU each iteration and each conditional copies its predicate to
  the host (a sync), the costliest item in small batches. ``while`` counts every loop: on CPU the
  PRNG's rounds are loops of known trip count too (a GPU runs them as one custom-call kernel);
- ``gather``, ``scatter``, ``sort``: the ops GPUs run worst (random access, atomics);
- ``rng``: PRNG primitives in the traced program (``random_bits``, ``random_split``,
  ``random_fold_in``, ``threefry2x32``) and ``rng_words``: the 32-bit words they hash per env-step;
- ``bytes_per_env_step`` and ``flops_per_env_step``: XLA's ``cost_analysis()`` of the step divided
  by the batch (a while loop's body is counted once, whatever its trip count).

Counts come from the CPU compiler, whose fusion decisions differ from the GPU's: they rank
programs and show what a change moved; they are not GPU timings. ::

    python -m benchmarks.hlo                                   # the GPU issue's envs, N = 4096
    python -m benchmarks.hlo --env kuhn_poker-v0 --num-envs 65536 --out hlo.json
    python -m benchmarks.hlo --train                           # + one IPPO update (alem)
    python -m benchmarks.hlo --train --jaxmarl-ippo JaxMARL/baselines/IPPO/ippo_ff_mpe.py

An unknown id or a reference that is not installed is one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

__all__ = ["hlo_counts", "jaxpr_counts", "program_stats", "env_rows", "train_rows", "table", "main"]

#: The envs of the GPU issue and the JAX reference each is measured against.
DEFAULT_ENVS = {
    "tic_tac_toe-v0": "pgx",
    "connect_four-v0": "pgx",
    "kuhn_poker-v0": "pgx",
    "leduc_holdem-v0": "pgx",
    "mpe/simple_spread-v0": "jaxmarl",
    "mpe/simple_tag-v0": "jaxmarl",
}


def auto_reference(env_id: str) -> str | None:
    """The JAX reference ``--reference auto`` measures ``env_id`` against (None: alem alone):
    :data:`DEFAULT_ENVS`, Pgx for its other games (chess), JaxMARL for its Hanabi, Overcooked and
    SMAX, Jumanji for LBF and RWARE."""
    if env_id in DEFAULT_ENVS:
        return DEFAULT_ENVS[env_id]
    from benchmarks.references import jaxmarl, pgx

    if env_id in pgx.GAMES:
        return "pgx"

    if env_id in jaxmarl.HANABI or env_id in jaxmarl.OVERCOOKED or env_id.startswith(jaxmarl.SMAX_PREFIX):
        return "jaxmarl"
    if env_id.startswith(("lbf", "rware_")):
        return "jumanji"
    return None


#: HLO opcodes counted one by one (inside fusions too: a fused gather is still a gather).
COUNTED_OPS = ("while", "conditional", "gather", "scatter", "sort", "custom-call")
#: Top-level opcodes that launch nothing.
_FREE_OPS = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast", "after-all", "partition-id"}
#: Traced PRNG primitives.
RNG_PRIMITIVES = ("random_bits", "random_split", "random_fold_in", "threefry2x32")

_COMPUTATION = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*)$")
_OPCODE = re.compile(r"^([a-z][\w\-]*)\(")
_CALLS = re.compile(r"calls=%?([\w.\-]+)")
_LOOP_PARTS = re.compile(r"(?:condition|body)=%?([\w.\-]+)")


def _skip_shape(rest: str) -> str:
    """The text after an instruction's result shape (a tuple shape is balanced parentheses)."""
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                return rest[i + 1 :].lstrip()
        return ""
    return rest.split(" ", 1)[1].lstrip() if " " in rest else ""


def hlo_counts(hlo_text: str) -> dict[str, int]:
    """Counts of an optimized HLO module's text (``compiled.as_text()``); see the module docstring."""
    computations: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in hlo_text.splitlines():
        head = _COMPUTATION.match(line)
        if head and " = " not in line:
            current = computations.setdefault(head.group(2), [])
            continue
        inst = _INSTRUCTION.match(line)
        if inst is None or current is None:
            continue
        op = _OPCODE.match(_skip_shape(inst.group(1).strip()))
        if op:
            current.append((op.group(1), line))
    fused = {
        m for ops in computations.values() for op, line in ops if op == "fusion" for m in _CALLS.findall(line)
    }
    # A loop of known trip count (the PRNG's rounds on CPU; one custom-call kernel on a GPU) counts
    # as one kernel: its body and condition are left out of the launch counts.
    fixed_loops = {
        m
        for ops in computations.values()
        for op, line in ops
        if op == "while" and "known_trip_count" in line
        for m in _LOOP_PARTS.findall(line)
    }
    counts: Counter[str] = Counter()
    for name, ops in computations.items():
        for op, line in ops:
            counts.update([op] if op in COUNTED_OPS else [])
            counts["while_dynamic"] += op == "while" and "known_trip_count" not in line
            if name in fused or name in fixed_loops:
                continue
            counts["fusions"] += op == "fusion"
            counts["kernels"] += op not in _FREE_OPS
    scatter_like = sum(v for k, v in counts.items() if k.startswith("scatter"))
    return {
        "fusions": counts["fusions"],
        "kernels": counts["kernels"],
        **{op.replace("-", "_"): counts[op] for op in COUNTED_OPS if op != "scatter"},
        "while_dynamic": counts["while_dynamic"],
        "scatter": scatter_like,
    }


def jaxpr_counts(jaxpr: Any) -> dict[str, int]:
    """PRNG primitives of a traced program (nested jaxprs included, a loop body once) and the
    32-bit words they produce (a key counts 2)."""
    from jax.extend.core import subjaxprs

    calls, words = 0, 0
    stack = [jaxpr]
    while stack:
        jx = stack.pop()
        stack.extend(subjaxprs(jx))
        for eqn in jx.eqns:
            if eqn.primitive.name in RNG_PRIMITIVES:
                calls += 1
                for var in eqn.outvars:
                    aval = var.aval
                    size = int(np.prod(aval.shape)) if aval.shape else 1
                    words += size * (2 if jax.dtypes.issubdtype(aval.dtype, jax.dtypes.prng_key) else 1)
    return {"rng": calls, "rng_words": words}


def program_stats(fn: Callable[..., Any], args: Sequence[Any], work: int) -> dict[str, Any]:
    """Compile ``fn(*args)`` (``args`` may be ``jax.ShapeDtypeStruct``) and count it; ``work`` is the
    env steps it performs, for the per-env-step figures."""
    jitted = jax.jit(fn)
    compiled = jitted.lower(*args).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost  # older jax returned one dict per device
    rng = jaxpr_counts(jax.make_jaxpr(fn)(*args).jaxpr)
    return {
        **hlo_counts(compiled.as_text()),
        "rng": rng["rng"],
        "rng_words_per_env_step": rng["rng_words"] / work,
        "bytes_per_env_step": float(cost.get("bytes accessed", float("nan"))) / work,
        "flops_per_env_step": float(cost.get("flops", float("nan"))) / work,
    }


def _step_stats(program: Any, num_envs: int) -> dict[str, Any]:
    key = jax.random.key(0)
    carry = jax.eval_shape(program.init, key, *program.args)
    return program_stats(program.body, (carry, key, *program.args), num_envs)


def env_rows(env_id: str, reference: str | None, num_envs: int, target: str = "gpu") -> list[dict[str, Any]]:
    """One row for alem's step and one for the reference's (``None``: alem only). ``target``: the
    backend whose defaults alem's auto-reset takes (:func:`~alem.wrappers.autoreset.default_resets_per_step`)."""
    import alem
    from alem.backend import compiling_for
    from benchmarks.harness import alem_step_program, references

    env = alem.make(env_id)
    with compiling_for(target):
        alem_stats = _step_stats(alem_step_program(env, num_envs), num_envs)
    rows = [{"kind": "env step", "env": env_id, "side": "alem", "N": num_envs} | alem_stats]
    if reference is not None:
        ref = references()[reference]
        program = ref.step(env_id, env, num_envs)
        rows.append(
            {"kind": "env step", "env": env_id, "side": reference, "N": num_envs}
            | _step_stats(program, num_envs)
        )
    return rows


def train_rows(jaxmarl_ippo: Path | None, target: str = "gpu") -> list[dict[str, Any]]:
    """One IPPO training update on MPE simple_spread at JaxMARL's shipped hyperparameters, as a
    whole training program of one update (init included) on each side: alem, and JaxMARL's
    ``ippo_ff_mpe.py`` when its path is given. ``target``: as in :func:`env_rows`."""
    from benchmarks import train_throughput as tt

    script = jaxmarl_ippo
    if script is not None:
        jcfg = tt.load_jaxmarl_config(script, total_steps=1, seeds=1)
    else:
        jcfg = dict(tt.SHIPPED_IPPO)
    jcfg["TOTAL_TIMESTEPS"] = jcfg["NUM_ENVS"] * jcfg["NUM_STEPS"]  # exactly one update
    work = jcfg["TOTAL_TIMESTEPS"]
    import alem
    from alem.algos import make_learner
    from alem.backend import compiling_for

    key = jax.random.key(0)
    base = {"kind": "train update", "env": tt.ENV_ID, "N": jcfg["NUM_ENVS"]}
    with compiling_for(target):  # the learner sizes its auto-reset when it is made
        learner = make_learner(alem.make(tt.ENV_ID), tt.alem_config(jcfg))
        alem_stats = program_stats(lambda k: learner.run(learner.init(k), 1), (key,), work)
    rows = [base | {"side": "alem"} | alem_stats]
    if script is not None:
        train = tt.load_make_train(script)(dict(jcfg))
        rows.append(base | {"side": "jaxmarl"} | program_stats(train, (jax.random.PRNGKey(0),), work))
    return rows


COLUMNS = (
    "kernels",
    "fusions",
    "while_dynamic",
    "conditional",
    "gather",
    "scatter",
    "sort",
    "rng",
    "rng_words_per_env_step",
    "bytes_per_env_step",
)


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.3g}"
    return str(x)


def table(rows: Sequence[dict[str, Any]]) -> str:
    """The rows as the markdown table of benchmarks/speed.md."""
    head = ["what", "env", "side", "N", *COLUMNS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["kind"], r["env"], r["side"], r["N"], *(r[c] for c in COLUMNS)]
        lines.append("| " + " | ".join(_fmt(c) for c in cells) + " |")
    return "\n".join(lines)


def _refuse(message: str) -> None:
    print(f"benchmarks.hlo: {message}", file=sys.stderr)
    raise SystemExit(2)


def _plan(env_ids: Sequence[str], reference: str) -> list[tuple[str, str | None]]:
    """(id, reference or None) for each id; refuses an unknown id or a missing reference at once."""
    import alem
    from alem.errors import AlemError
    from benchmarks.harness import references

    plan = []
    for env_id in env_ids:
        try:
            env = alem.make(env_id)
        except AlemError as e:
            _refuse(f"--env {env_id}: {str(e).splitlines()[0]}")
        ref = auto_reference(env_id) if reference == "auto" else reference
        if ref in (None, "none"):
            plan.append((env_id, None))
            continue
        refs = references()
        if ref not in refs or refs[ref].step is None:
            jax_refs = sorted(k for k, v in refs.items() if v.step is not None)
            _refuse(f"reference {ref!r} has no JAX step to compile; choose one of {jax_refs} or none")
        reason = refs[ref].supports(env_id, env)
        if reason is not None:
            _refuse(f"reference {ref!r} for {env_id}: {reason}")
        plan.append((env_id, ref))
    return plan


def _parser() -> argparse.ArgumentParser:
    from benchmarks.harness import positive_int

    p = argparse.ArgumentParser(
        prog="python -m benchmarks.hlo",
        description="CPU-side proxy of GPU cost: kernels, control flow, gathers, RNG and bytes of one "
        "compiled env step (alem vs its reference) and one training update.",
    )
    p.add_argument("--env", nargs="+", default=list(DEFAULT_ENVS), metavar="ID", help="alem ids")
    p.add_argument(
        "--reference",
        default="auto",
        help="auto (pgx for its games, jaxmarl for MPE, Hanabi, Overcooked, SMAX, jumanji for LBF "
        "and RWARE), none, or a "
        "reference name (default: auto)",
    )
    p.add_argument(
        "--num-envs", type=positive_int, default=4096, metavar="N", help="batch size (default 4096)"
    )
    p.add_argument(
        "--target",
        choices=("gpu", "cpu"),
        default="gpu",
        help="compile alem with the defaults it takes on this backend (default: gpu)",
    )
    p.add_argument("--train", action="store_true", help="also count one IPPO update on simple_spread")
    p.add_argument("--jaxmarl-ippo", type=Path, default=None, help="JaxMARL's ippo_ff_mpe.py for --train")
    p.add_argument("--out", type=Path, default=None, help="write the JSON here (a new file)")
    return p


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = _parser().parse_args(argv)
    if args.out is not None:
        if args.out.exists():
            _refuse(f"--out {args.out} already exists; results are never overwritten")
        if not args.out.parent.is_dir():
            _refuse(f"--out {args.out}: folder {args.out.parent} does not exist")
    if args.jaxmarl_ippo is not None and not args.jaxmarl_ippo.is_file():
        _refuse(f"--jaxmarl-ippo {args.jaxmarl_ippo}: no such file")
    plan = _plan(args.env, args.reference)
    from benchmarks.harness import machine

    rows = [row for env_id, ref in plan for row in env_rows(env_id, ref, args.num_envs, args.target)]
    if args.train:
        rows += train_rows(args.jaxmarl_ippo, args.target)
    doc = {"benchmark": "hlo", **machine(), "target": args.target, "rows": rows, "columns": list(COLUMNS)}
    print(table(rows))
    if args.out is not None:
        with open(args.out, "x") as f:
            json.dump(doc, f, indent=2)
    return doc


if __name__ == "__main__":
    main()
