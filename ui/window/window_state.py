"""What the window remembers between runs: its geometry, its splitters, the documents in scope,
whether the session panel is folded."""

from __future__ import annotations

import base64
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from app.paths import write_private


@dataclass
class WindowState:
    geometry: str = ""  # base64 of QWidget.saveGeometry()
    splitters: list[str] = field(default_factory=list)  # base64 of each QSplitter.saveState()
    scope: list[str] = field(default_factory=list)  # paths of the ticked documents
    first_run_done: bool = False
    session_collapsed: bool = False

    @classmethod
    def load(cls, path: Path) -> WindowState:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                geometry=str(raw.get("geometry", "")),
                splitters=[str(s) for s in raw.get("splitters", [])],
                scope=[str(p) for p in raw.get("scope", [])],
                first_run_done=bool(raw.get("first_run_done", False)),
                session_collapsed=bool(raw.get("session_collapsed", False)),
            )
        except (OSError, ValueError, AttributeError, TypeError):
            return cls()  # missing or damaged: start fresh, it is only convenience

    def save(self, path: Path) -> None:
        write_private(path, json.dumps(asdict(self), indent=2))  # the paths of the user's files

    def geometry_bytes(self) -> bytes:
        return _decoded(self.geometry)

    def set_geometry(self, data: bytes) -> None:
        self.geometry = _encoded(data)

    def splitter_states(self) -> list[bytes]:
        """Each splitter's saved state, in the order they were saved (b"" where damaged: Qt
        ignores a state it cannot read, as it does a damaged one that decodes)."""
        return [_decoded(state) for state in self.splitters]

    def set_splitters(self, states: list[bytes]) -> None:
        self.splitters = [_encoded(state) for state in states]


def _encoded(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _decoded(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:  # not base64 (binascii.Error), or not ASCII
        return b""  # damaged: the window keeps its defaults
