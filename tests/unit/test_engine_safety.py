"""The safe-settings ladder a local model takes after crashing, and how it is remembered."""

from __future__ import annotations

import datetime
import json
import signal
from pathlib import Path

import pytest

from app.llm.safety import LoadSettings, SafeMode, SafetyMemory, machine, next_level, settings_at
from app.processes import how_it_ended


def test_each_rung_takes_something_away_and_skips_what_changes_nothing() -> None:
    assert settings_at(0, 8, 99) == LoadSettings(threads=8, gpu_layers=99, extra_buffers=True)
    assert settings_at(1, 8, 99) == LoadSettings(threads=8, gpu_layers=99, extra_buffers=False)
    assert settings_at(2, 8, 99) == LoadSettings(threads=8, gpu_layers=0, extra_buffers=False)
    assert settings_at(3, 8, 99) == LoadSettings(threads=4, gpu_layers=0, extra_buffers=False)
    assert [next_level(level, 8, 99) for level in range(4)] == [1, 2, 3, None]
    # On the CPU alone "no GPU layers" changes nothing: the ladder goes to fewer threads.
    assert next_level(1, 8, 0) == 3
    # One thread on the CPU: nothing is left after the extra buffer types.
    assert next_level(0, 1, 0) == 1
    assert next_level(1, 1, 0) is None


def test_a_model_s_safe_settings_are_remembered_per_machine(tmp_path: Path) -> None:
    path = tmp_path / "engine-safety.json"
    mode = SafeMode(1, "crashed (segmentation fault) while loading", datetime.date(2026, 12, 5))
    SafetyMemory(path).set("model.gguf", mode)
    assert SafetyMemory(path).get("model.gguf") == mode
    assert SafetyMemory(path).get("other.gguf") is None
    assert mode.describe() == (
        "safe settings since 2026-12-05 (weight repacking off): "
        "it crashed (segmentation fault) while loading"
    )
    # A home folder synced to another computer: that one's processor starts from the top.
    stored = json.loads(path.read_text())
    path.write_text(json.dumps({"x86_64 another processor": stored[machine()]}))
    assert SafetyMemory(path).get("model.gguf") is None
    SafetyMemory(path).set("model.gguf", mode)
    assert set(json.loads(path.read_text())) == {"x86_64 another processor", machine()}
    SafetyMemory(path).set("model.gguf", None)
    assert SafetyMemory(path).get("model.gguf") is None


@pytest.mark.parametrize("damage", ["", "{not json", "[1, 2]", '{"%s": 3}'])
def test_a_damaged_memory_starts_the_ladder_again_instead_of_failing(
    tmp_path: Path, damage: str
) -> None:
    path = tmp_path / "engine-safety.json"
    path.write_text(damage.replace("%s", machine()))
    memory = SafetyMemory(path)
    assert memory.get("model.gguf") is None
    memory.set("model.gguf", SafeMode(1, "crashed", datetime.date(2026, 12, 5)))
    assert memory.get("model.gguf") is not None


def test_a_childs_end_is_told_in_words() -> None:
    assert how_it_ended(-signal.SIGSEGV) == "segmentation fault"
    assert how_it_ended(-signal.SIGILL) == "an instruction this processor does not have"
    assert how_it_ended(-signal.SIGKILL) == "killed, most likely for lack of memory"
    assert how_it_ended(0xC0000005) == "segmentation fault (access violation)"
    assert how_it_ended(3) == "exit status 3"
