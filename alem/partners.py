"""``python -m alem.partners build env.id=<id> 'algos=[ippo,mappo]' num_seeds=4``: partner pools.

The code is in :mod:`alem.arena.partners` (what a pool holds, how it is built and resumed); the
pool is played with ``python -m alem.evaluate mode=crossplay partners=<folder>[:split]``
(:mod:`alem.arena.crossplay`). This module checks the extras and takes the subcommand.
"""

from __future__ import annotations

import sys

from alem.extras import require

require("arena", "python -m alem.partners", cli=__name__ == "__main__")

from alem.arena.partners import build  # noqa: E402

__all__ = ["build", "main"]

USAGE = "usage: python -m alem.partners build env.id=<id> ['algos=[ippo,mappo]'] [num_seeds=4] [scripted=true] ..."


def main() -> None:
    """``build`` and Hydra overrides; anything else is refused with the usage line (exit 2)."""
    from alem.arena.partners import main as build_main

    if len(sys.argv) < 2 or sys.argv[1] != "build":
        got = sys.argv[1] if len(sys.argv) > 1 else "nothing"
        print(f"alem.partners: error: expected the subcommand build, got {got!r} ({USAGE})", file=sys.stderr)
        raise SystemExit(2)
    sys.argv = [sys.argv[0], *sys.argv[2:]]
    build_main()


if __name__ == "__main__":
    main()
