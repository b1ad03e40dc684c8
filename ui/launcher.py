"""The `docent` command: the desktop app by default, the core's CLI for every subcommand.

It lives in ui/ because only ui/ may import Qt; the CLI path never loads Qt.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] == "gui":
        from ui.main import run

        return run(arguments[1:])
    if arguments[:2] == ["bench", "gui"]:
        from ui.stall_bench import main as bench_gui

        return bench_gui(arguments[2:])
    from app.cli import main as cli_main

    return cli_main(arguments)


if __name__ == "__main__":
    sys.exit(main())
