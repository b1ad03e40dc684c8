"""The packaged app's entry point: the `docent` command (ui/launcher.py), which also runs
Docent's own child processes (`docent -m app.cli gateway`)."""

import sys

from ui.launcher import main

if __name__ == "__main__":
    sys.exit(main())
