"""The `docent` command: the desktop app by default, the core's CLI for every subcommand.

It lives in ui/ because only ui/ may import Qt; the CLI path never loads Qt.
"""

from __future__ import annotations

import gc
import runpy
import sys
from collections.abc import Sequence
from pathlib import Path


def collect_later() -> None:
    """Before the window's modules load: no automatic collection until the GUI thread's own
    collector runs (ui.garbage, started with the window). Start-up makes objects that live as
    long as the app (modules, classes, Qt's types); collecting while they were made freed
    nothing, ~150 times: 0.09 s of a one-second start."""
    gc.disable()


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["-I"]:  # isolated: the bundle's import path never holds the cwd
        arguments = arguments[1:]
    if arguments[:1] == ["-m"] and len(arguments) > 1:
        # Docent starts its own children as `sys.executable -I -m MODULE …` (the cloud gateway,
        # the document reader, bench servers). In the packaged app sys.executable is this
        # program, not a Python: run the module as `python -m` would.
        sys.argv = [sys.argv[0], *arguments[2:]]
        runpy.run_module(arguments[1], run_name="__main__", alter_sys=True)
        return 0
    if arguments == ["--smoke-test"]:
        collect_later()
        from ui.main import run
        from ui.tools.smoke import session

        return run(session=session)
    if not arguments or arguments[0] == "gui":
        collect_later()
        from ui.main import run

        return run(arguments[1:])
    if arguments[:2] == ["bench", "gui"]:
        from ui.tools.gui_bench import main as bench_gui

        status = bench_gui(arguments[2:])
    else:
        from app.cli import main as cli_main

        status = cli_main(arguments)
    if status == 0 and arguments[:1] == ["bench"] and "--out" in arguments:
        # The core writes the numbers; plots need Qt, which only ui/ may load.
        from ui.bench.plots import draw

        out = Path(arguments[arguments.index("--out") + 1])
        for plot in draw(out / f"bench-{arguments[1]}.json"):
            print(f"plot: {plot}")
    return status


if __name__ == "__main__":
    sys.exit(main())
