"""The `kvgen` program: replays a recorded identical run (kvgen.replay), else starts the CLI.

Kept apart from kvgen.cli so that a replayed run imports neither typer nor the compiler."""

from __future__ import annotations

import sys


def _cli() -> None:
    from kvgen.cli import main

    main()


def main() -> None:
    from kvgen import replay

    try:
        replay.run(_cli, sys.argv[1:])
    except KeyboardInterrupt:
        sys.stderr.write("kvgen: interrupted\n")
        sys.exit(130)
