"""The `kvgen` program: replays a recorded identical run (kvgen.output.replay), else starts the CLI.

Kept apart from kvgen.app.cli so that a replayed run imports neither typer nor the compiler."""

from __future__ import annotations

import gc
import sys

# kvgen is a short-lived process that allocates a great deal (imports, pydantic building the spec's
# models, a batch's objects) and frees little of it before it exits, so the cyclic collector's
# default thresholds (700, 10, 10) run it hundreds of times for next to nothing: about 4% of a
# single render, 14% of a 1,000-spec batch (scripts/bench). Peak memory is unchanged.
GC_THRESHOLDS = (50_000, 50, 100)


def _cli() -> None:
    from kvgen.app.cli import main

    main()


def main() -> None:
    gc.set_threshold(*GC_THRESHOLDS)
    from kvgen.output import replay

    try:
        replay.run(_cli, sys.argv[1:])
    except KeyboardInterrupt:
        sys.stderr.write("kvgen: interrupted\n")
        sys.exit(130)
