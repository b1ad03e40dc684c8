"""`make package`, after PyInstaller: the .deb of the one-folder app (dist/docent), with its
.desktop file and hicolor icons. The app goes to /opt/docent, the command to /usr/bin/docent.

The package depends on what the bundle does not carry: the C library (at least the build
machine's, whose libraries the bundle holds), the GPU drivers' GL/EGL front ends, libxcb and the
Wayland client libraries, fontconfig's configuration, and a CJK font for Chinese text.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from render_icons import SVG, render

HERE = Path(__file__).resolve().parent
DEPENDS = (
    "libgl1",
    "libegl1",
    "libxcb1",
    "libwayland-client0",
    "libwayland-cursor0",
    "libwayland-egl1",
    "fontconfig",
    "fonts-noto-cjk",
)
DESCRIPTION = """\
Description: desktop document assistant with cited answers
 Docent indexes PDFs, e-books, Markdown, HTML and text files and answers
 questions about them with page citations. A small local model (bundled)
 answers on this machine; hard questions can go to a cloud model through MCP,
 with the route, latency and cost of every answer shown.
"""


def _glibc() -> str:
    name, release = platform.libc_ver()
    if name != "glibc":
        raise SystemExit(f"a .deb needs a glibc system to build on, not {name or 'unknown'}")
    return release


def _architecture() -> str:
    return subprocess.run(
        ["dpkg", "--print-architecture"], check=True, capture_output=True, text=True
    ).stdout.strip()


def build(bundle: Path, out: Path, stage: Path) -> Path:
    if not (bundle / "docent").is_file():
        raise SystemExit(f"{bundle}/docent is missing: run PyInstaller first (make package)")
    if stage.exists():
        shutil.rmtree(stage)
    # symlinks=True: PyInstaller's folder links libraries to their package copies.
    shutil.copytree(bundle, stage / "opt" / "docent", symlinks=True)
    (stage / "usr" / "bin").mkdir(parents=True)
    # Relative, so the extracted package runs too; the bundle finds its files from its real path.
    (stage / "usr" / "bin" / "docent").symlink_to("../../opt/docent/docent")
    share = stage / "usr" / "share"
    (share / "applications").mkdir(parents=True)
    shutil.copy(HERE / "linux" / "docent.desktop", share / "applications" / "docent.desktop")
    render(share / "icons")
    scalable = share / "icons" / "hicolor" / "scalable" / "apps"
    scalable.mkdir(parents=True)
    shutil.copy(SVG, scalable / "docent.svg")
    for path in share.glob("icons/docent.*"):  # the macOS and Windows forms
        path.unlink()

    installed_kib = sum(p.lstat().st_size for p in stage.rglob("*")) // 1024
    control = stage / "DEBIAN" / "control"
    control.parent.mkdir()
    control.write_text(
        f"Package: docent\n"
        f"Version: {version('docent')}\n"
        f"Architecture: {_architecture()}\n"
        f"Maintainer: Docent developers <docent@localhost>\n"
        f"Installed-Size: {installed_kib}\n"
        f"Depends: libc6 (>= {_glibc()}), {', '.join(DEPENDS)}\n"
        f"Section: utils\n"
        f"Priority: optional\n"
        f"{DESCRIPTION}",
        encoding="utf-8",
    )
    out.mkdir(parents=True, exist_ok=True)
    deb = out / f"docent_{version('docent')}_{_architecture()}.deb"
    # zstd: 6 s here against gzip's 68 s, the same size (the model does not compress). Every
    # dpkg on a system new enough for the bundle's glibc reads it (dpkg >= 1.21.18).
    subprocess.run(
        ["dpkg-deb", "--root-owner-group", "-Zzstd", "--build", str(stage), str(deb)],
        check=True,
        env={**os.environ, "SOURCE_DATE_EPOCH": "0"},
    )
    return deb


if __name__ == "__main__":
    root = HERE.parent
    print(build(root / "dist" / "docent", root / "dist", root / "build" / "deb" / "docent"))
    sys.exit(0)
