"""What the window remembers between runs: its geometry, the documents in scope, whether the
session panel is folded."""

from __future__ import annotations

import base64
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from app.paths import write_private


@dataclass
class WindowState:
    geometry: str = ""  # base64 of QWidget.saveGeometry()
    scope: list[str] = field(default_factory=list)  # paths of the ticked documents
    first_run_done: bool = False
    session_collapsed: bool = False

    @classmethod
    def load(cls, path: Path) -> WindowState:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                geometry=str(raw.get("geometry", "")),
                scope=[str(p) for p in raw.get("scope", [])],
                first_run_done=bool(raw.get("first_run_done", False)),
                session_collapsed=bool(raw.get("session_collapsed", False)),
            )
        except (OSError, ValueError, AttributeError):
            return cls()  # missing or damaged: start fresh, it is only convenience

    def save(self, path: Path) -> None:
        write_private(path, json.dumps(asdict(self), indent=2))  # the paths of the user's files

    def geometry_bytes(self) -> bytes:
        return base64.b64decode(self.geometry) if self.geometry else b""

    def set_geometry(self, data: bytes) -> None:
        self.geometry = base64.b64encode(data).decode("ascii")
