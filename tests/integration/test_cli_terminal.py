"""What `docent` prints carries no terminal control sequence from a file's name or text."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import docent

NAME = "\x1b]0;pwned\x07\x1b[31mred\u202etxt.exe.txt"


def test_a_hostile_file_name_reaches_the_terminal_as_text(tmp_path: Path) -> None:
    document = tmp_path / NAME
    document.write_text("Invoices are kept for seven years.\n", encoding="utf-8")
    outputs = [docent("index", "--no-embed", str(document))]
    outputs += [docent("docs"), docent("docs", "--json"), docent("remove", NAME)]
    for output in outputs:
        assert output.returncode == 0, output.stderr
        for control in ("\x1b", "\x07", "\u202e"):
            assert control not in output.stdout + output.stderr
    assert "redtxt.exe.txt" in outputs[1].stdout
    assert json.loads(outputs[2].stdout)[0]["name"] == NAME  # JSON escapes, loses nothing
    assert "removed redtxt.exe.txt" in outputs[3].stdout
