"""The `docent` command line: a module per command family (see main.py)."""

from app.cli.main import main

__all__ = ["main"]
