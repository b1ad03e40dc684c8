"""Text from documents, models and servers reaches a terminal without its control sequences."""

from __future__ import annotations

import json

import pytest

from app.cli.terminal import printable, printable_json


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;pwned\x07.txt", ".txt"),  # sets the window title
        ("\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"),  # a hidden link
        ("\x1b]52;c;cm0gLXJmIH4=\x07copied", "copied"),  # writes the clipboard
        ("\x1b[31mred\x1b[0m and \x1b[2J\x1b[Hcleared", "red and cleared"),
        ("\x9b31mC1 CSI\x9b0m", "C1 CSI"),
        ("over\rwrite\x08\x00\x7f", "overwrite"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),  # a right-to-left override
        ("two\nlines\tand a tab, 七年, naïve", "two\nlines\tand a tab, 七年, naïve"),
        ("\x1b]0;never ends", ""),  # unterminated: the terminal would swallow the rest
    ],
)
def test_control_sequences_are_removed_and_text_kept(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_json_escapes_what_json_leaves_raw_and_stays_the_same_data() -> None:
    value = {"name": "\x1b]0;pwned\x07\x9b2J\u202e.txt", "text": "七年 naïve\n"}
    dumped = printable_json(value)
    assert printable(dumped) == dumped  # nothing a terminal would act on
    assert json.loads(dumped) == value  # and nothing lost
