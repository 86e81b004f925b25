"""``python -m alem.train env=<env> algo=<preset> ...``: the training command.

The code is in :mod:`alem.training.command` (the stages of a run, the run directory, the results
are described there), as :mod:`alem.evaluate`'s is in :mod:`alem.arena.command`; this module checks
the ``train`` extra and keeps the command and the names it has always exported.
"""

from __future__ import annotations

from alem.extras import require

require("train", "python -m alem.train", cli=__name__ == "__main__")

from alem.training.command import WANDB_MODES, Plan, main, plan, run

__all__ = ["WANDB_MODES", "Plan", "main", "plan", "run"]

if __name__ == "__main__":
    main()
