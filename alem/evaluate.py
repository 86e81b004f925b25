"""``python -m alem.evaluate env=<id> players=[llm,random] episodes=100``: the evaluation arena's command.

The code is in :mod:`alem.arena` (the run directory, the loop's semantics and the results are
described there); this module keeps the command and the names it has always exported.
"""

from __future__ import annotations

from alem.extras import require

require("arena", "python -m alem.evaluate", cli=__name__ == "__main__")

from alem.arena import (
    CSV_COLUMNS,
    EPISODES_FILE,
    HIGH_FALLBACK_RATE,
    RESUME_FREE,
    TRANSCRIPTS_FILE,
    ConfigError,
    EvaluationStopped,
    build_players,
    evaluate,
    format_table,
    main,
    parse_spec,
    run,
    summarize_run,
)

__all__ = [
    "ConfigError",
    "EvaluationStopped",
    "evaluate",
    "summarize_run",
    "format_table",
    "build_players",
    "parse_spec",
    "run",
    "main",
    "RESUME_FREE",
    "HIGH_FALLBACK_RATE",
    "CSV_COLUMNS",
    "EPISODES_FILE",
    "TRANSCRIPTS_FILE",
]

if __name__ == "__main__":
    main()
