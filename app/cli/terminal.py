"""Text for a terminal: what a file's name, a document, a model or a server wrote, made inert.

A terminal acts on escape sequences in what it prints: a file named `\\x1b]0;…\\x07.txt` retitles
the window, others move the cursor, clear the screen, hide a link behind text (OSC 8) or write
the clipboard (OSC 52). The CLI prints such text only through these functions.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, TextIO

_SEQUENCES = re.compile(
    # CSI (ESC [ or C1 CSI): colours, cursor moves, clearing
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    # strings (OSC, DCS, SOS, PM, APC) up to their terminator, or to the end when there is none
    r"|(?:\x1b[]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    # any other escape sequence
    r"|\x1b[ -/]*[0-~]?"
)
# Other control characters (newline and tab stay), and the bidirectional overrides and isolates
# that make a terminal show text in another order than it is (`invoice\u202efdp.exe`).
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` without escape sequences or control characters, newlines and tabs kept."""
    return _CONTROLS.sub("", _SEQUENCES.sub("", text))


def printable_json(value: Any) -> str:
    """`value` as indented JSON that a terminal shows as is, with nothing lost: JSON escapes
    C0 controls itself; the rest of `_CONTROLS` are written as \\u escapes too."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _CONTROLS.sub(lambda control: f"\\u{ord(control.group()):04x}", text)


class Progress:
    """One status line on a terminal (rewritten in place); nothing when output is redirected.
    Lines name files and quote errors: printed as printable text."""

    def __init__(self, stream: TextIO = sys.stderr) -> None:
        self.stream = stream
        self.live = stream.isatty()
        self._width = 0

    def update(self, text: str) -> None:
        if self.live:
            text = printable(text)
            self.stream.write("\r" + text.ljust(self._width))
            self.stream.flush()
            self._width = len(text)

    def line(self, text: str) -> None:
        if self.live and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(printable(text) + "\n")
        self.stream.flush()
