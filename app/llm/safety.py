"""Safe settings for a local model that crashed on this computer, remembered per machine.

A crash while loading or before the first token is the signature of a native defect that
depends on the processor, the GPU driver or the build (llama.cpp's AMX weight repacking on
Sapphire Rapids, a CUDA driver, a Metal shader): it happens on every question, so the next start
takes one step down this ladder, and stays there on this machine for this model file:

1. extra buffer types off: the weight repacking for AMX and the CPU's interleaved layouts, the
   code llama.cpp runs only on some processors, and where the known crashes are;
2. no GPU layers: the model runs on the CPU alone (skipped when it already does);
3. fewer threads: half of them (skipped on one thread).

A crash later in an answer (after its first token) is not a setting's fault and changes nothing.
"""

from __future__ import annotations

import datetime
import json
import platform
import threading
from dataclasses import dataclass
from pathlib import Path

from app.paths import write_private


@dataclass(frozen=True, slots=True)
class LoadSettings:
    """What the engine's child loads a model with."""

    threads: int
    gpu_layers: int
    extra_buffers: bool = True


@dataclass(frozen=True, slots=True)
class SafeMode:
    """A model's place on the ladder here: `level` rungs down, since a crash (`reason`)."""

    level: int
    reason: str
    since: datetime.date

    def describe(self) -> str:
        steps = ", ".join(STEPS[: self.level])
        return f"safe settings since {self.since:%Y-%m-%d} ({steps}): it {self.reason}"


STEPS = ("weight repacking off", "no GPU layers", "fewer threads")


def settings_at(level: int, threads: int, gpu_layers: int) -> LoadSettings:
    """The load settings `level` rungs down from the configured `threads` and `gpu_layers`."""
    return LoadSettings(
        threads=max(1, threads // 2) if level >= 3 else threads,
        gpu_layers=0 if level >= 2 else gpu_layers,
        extra_buffers=level < 1,
    )


def next_level(level: int, threads: int, gpu_layers: int) -> int | None:
    """The next rung that changes something for this configuration; None below the last."""
    current = settings_at(level, threads, gpu_layers)
    for candidate in range(level + 1, len(STEPS) + 1):
        if settings_at(candidate, threads, gpu_layers) != current:
            return candidate
    return None


class SafetyMemory:
    """Where each model stands on the ladder on this machine, in a small JSON file (the data
    folder's, which stays on this machine; keyed by the processor too, for a synced home).
    `path` None: remembered for this session only."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._lock = threading.Lock()  # engines load on their own threads
        self._session: dict[str, dict[str, object]] = {}

    def get(self, model: str) -> SafeMode | None:
        with self._lock:
            entry = self._entries().get(model)
        if entry is None:
            return None
        return SafeMode(
            int(entry["level"]),  # type: ignore[call-overload]
            str(entry["reason"]),
            datetime.date.fromisoformat(str(entry["since"])),
        )

    def set(self, model: str, mode: SafeMode | None) -> None:
        with self._lock:
            entries = self._entries()
            if mode is None:
                entries.pop(model, None)
            else:
                entries[model] = {
                    "level": mode.level,
                    "reason": mode.reason,
                    "since": mode.since.isoformat(),
                }
            self._save(entries)

    def _entries(self) -> dict[str, dict[str, object]]:
        if self._path is None:
            return self._session
        try:
            machines = json.loads(self._path.read_text(encoding="utf-8"))
            entries = machines.get(machine(), {})
        except (OSError, ValueError, AttributeError):
            return {}  # none yet, or damaged: the ladder starts again from the top
        return entries if isinstance(entries, dict) else {}

    def _save(self, entries: dict[str, dict[str, object]]) -> None:
        if self._path is None:
            self._session = entries
            return
        try:
            machines = json.loads(self._path.read_text(encoding="utf-8"))
            if not isinstance(machines, dict):
                machines = {}
        except (OSError, ValueError):
            machines = {}
        machines[machine()] = entries
        write_private(self._path, json.dumps(machines, indent=1, sort_keys=True))


def machine() -> str:
    """This computer's processor, as the system names it."""
    name = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    return f"{platform.machine()} {name or platform.processor()}".strip()
