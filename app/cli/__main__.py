"""`python -m app.cli …`: the command line, and how Docent starts its gateway child."""

import sys

from app.cli.main import main

sys.exit(main())
