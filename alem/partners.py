"""Partner pools: ``python -m alem.partners build env.id=<id> 'algos=[ippo,mappo]' num_seeds=4``
trains one; ``python -m alem.partners export <pool> <new folder>`` copies one with its trained
partners as actor-only files (small enough to share or ship).

The code is in :mod:`alem.arena.partners` (what a pool holds, how it is built, resumed and
exported); the pool is played with ``python -m alem.evaluate mode=crossplay
partners=<folder>[:split]`` (:mod:`alem.arena.crossplay`). This module checks the extras and
takes the subcommand.
"""

from __future__ import annotations

import sys

from alem.extras import require

require("arena", "python -m alem.partners", cli=__name__ == "__main__")

from alem.arena.partners import build, export_pool  # noqa: E402

__all__ = ["build", "export_pool", "main"]

USAGE = (
    "usage: python -m alem.partners build env.id=<id> ['algos=[ippo,mappo]'] [num_seeds=4] [scripted=true] ..."
    " | python -m alem.partners export <pool> <new folder>"
)
SUBCOMMANDS = ("build", "export")


def _export(argv: list[str]) -> None:
    from alem.cli import ArgumentParser
    from alem.errors import AlemError

    parser = ArgumentParser(
        prog="alem.partners export",
        description="Copy a partner pool with its trained partners as exported actors (no training state).",
    )
    parser.add_argument("pool", help="the pool's folder or its partners.json")
    parser.add_argument("out", help="a new folder for the exported pool")
    args = parser.parse_args(argv)
    try:
        manifest = export_pool(args.pool, args.out)
    except AlemError as e:
        parser.error(str(e))
    print(f"{len(manifest['partners'])} partners for {manifest['env_id']} exported to {args.out}", flush=True)


def main() -> None:
    """``build`` with Hydra overrides, or ``export <pool> <out>``; anything else is refused with
    the usage line (exit 2)."""
    from alem.arena.partners import main as build_main

    if len(sys.argv) < 2 or sys.argv[1] not in SUBCOMMANDS:
        got = sys.argv[1] if len(sys.argv) > 1 else "nothing"
        print(
            f"alem.partners: error: expected the subcommand build or export, got {got!r} ({USAGE})",
            file=sys.stderr,
        )
        raise SystemExit(2)
    if sys.argv[1] == "export":
        _export(sys.argv[2:])
        return
    sys.argv = [sys.argv[0], *sys.argv[2:]]
    build_main()


if __name__ == "__main__":
    main()
