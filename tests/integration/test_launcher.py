"""`docent -m MODULE …`: how the packaged app, whose sys.executable is Docent itself, runs
Docent's own children (the cloud gateway: `-m app.cli gateway`)."""

from __future__ import annotations

import json

from tests.conftest import docent


def test_dash_m_runs_a_module_as_main_with_its_arguments() -> None:
    listed = docent("-m", "app.cli", "docs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []


def test_dash_m_passes_the_module_exit_status_on() -> None:
    removed = docent("-m", "app.cli", "remove", "no-such-document.pdf")
    assert removed.returncode != 0
    assert "no-such-document.pdf" in removed.stderr


def test_dash_capital_i_is_accepted_as_python_takes_it() -> None:
    """Docent starts its children isolated (`-I -m MODULE`); in the packaged app the launcher
    receives that flag itself."""
    listed = docent("-I", "-m", "app.cli", "docs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
