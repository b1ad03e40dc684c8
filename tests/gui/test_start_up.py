"""What the window's start-up loads: the parts a first question, a setting or a cloud route
needs wait for them (`docent bench gui` times the start itself)."""

from __future__ import annotations

import subprocess
import sys

# Each was measured on the start-up path before it moved off it (10-100 ms apiece).
LOADED_LATER = (
    "app.answering.pipeline",  # the first question
    "app.answering.summary",  # the first summary
    "keyring",  # the settings dialog, a cloud route
    "mcp",  # a cloud route
    "httpx",  # the model manager, a cloud route
    "llama_cpp",  # the first question
    "pymupdf",  # only the reader processes parse
    "psutil",  # the first document read
    "charset_normalizer",  # a text file that is not UTF-8
    "watchfiles",  # a watched folder
)


def test_the_window_module_loads_none_of_the_later_parts() -> None:
    probe = (
        "import sys\n"
        "import ui.main\n"
        f"print(' '.join(m for m in {LOADED_LATER!r} if m in sys.modules))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert loaded == []


# The app's start-up, with what the GUI thread's collector will look at once the window is up.
COLLECTIONS_PROBE = """
import gc
from ui.launcher import collect_later

collect_later()
from app.bootstrap import Docent
from ui.main import open_window, run


async def session(_):
    docent = Docent.from_environment(embeddings=False)
    await docent.open()
    try:
        async with open_window(docent):
            print(gc.get_freeze_count(), len(gc.get_objects()))
    finally:
        await docent.close()
    return 0


run(session=session)
"""


def test_later_collections_skip_what_start_up_made() -> None:
    shown = subprocess.run(
        [sys.executable, "-c", COLLECTIONS_PROBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    frozen, tracked = int(shown[0]), int(shown[1])
    # Without the freeze the first collection looked at all of it: 39 ms on the GUI thread.
    assert frozen > 50_000
    assert tracked < frozen / 20
