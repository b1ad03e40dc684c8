"""Docent's icon (resources/docent.svg) in the forms installers want: PNGs in the hicolor sizes
(Linux), an .icns (macOS) and an .ico (Windows). Qt draws them: no other tool is needed, and no
display (QImage paints without one)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

SVG = Path(__file__).resolve().parent.parent / "resources" / "docent.svg"
HICOLOR_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def _image(renderer: QSvgRenderer, size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image


def render(out: Path) -> dict[str, Path]:
    """Write `out/hicolor/<n>x<n>/apps/docent.png` for every size, `docent.icns` and
    `docent.ico`; return the paths by name ("png<n>", "icns", "ico")."""
    renderer = QSvgRenderer(str(SVG))
    if not renderer.isValid():
        raise ValueError(f"{SVG} is not a valid SVG file")
    written: dict[str, Path] = {}
    for size in HICOLOR_SIZES:
        written[f"png{size}"] = out / "hicolor" / f"{size}x{size}" / "apps" / "docent.png"
    written["icns"] = out / "docent.icns"  # Qt writes one image; macOS scales it
    written["ico"] = out / "docent.ico"  # the largest size an .ico entry holds
    for name, path in written.items():
        size = {"icns": 512, "ico": 256}.get(name) or int(name.removeprefix("png"))
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _image(renderer, size).save(str(path)):
            raise OSError(f"Qt could not write {path}")
    return written


if __name__ == "__main__":
    for path in render(Path(sys.argv[1] if len(sys.argv) > 1 else "build/icons")).values():
        print(path)
