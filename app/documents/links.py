"""Where a path really leads, and whether that is still inside the folder the user chose: the
walk checks it, and so do the intake and the reader at the moment they open a file (a file can
be swapped for a link between the walk and the read)."""

from __future__ import annotations

import os
from pathlib import Path

LEADS_OUTSIDE = (
    "it has become a link to something outside the chosen folder: only what is inside the "
    "chosen folder is indexed"
)


def real_inside(path: Path, real_root: Path) -> Path | None:
    """`path`'s real place if it lies inside `real_root` (itself resolved), else None."""
    real = Path(os.path.realpath(path))
    return real if real.is_relative_to(real_root) else None
