"""`make package-test` (`python -m tests.bundle.run`): the built .deb and folder, started as a
user would start them.

1. The .deb: its metadata, and its files (app, command, .desktop file, icons) extracted.
2. The extracted app under Xvfb in a fresh home, with a private GNOME keyring on a private D-Bus:
   `docent --smoke-test` (index the sample PDF, answer with the bundled model, start the cloud
   gateway) — the first run, which verifies the bundled models (sha256 of their 563 MB) and
   stamps them in the models folder; keyring must find the Secret Service through its entry
   points.
3. The installed app once more, in the same home: a warm start, as a user's second start is
   (the same files, so the same page cache, and the bundled models' verified stamps hold).
   Started from another copy (dist/docent) it was no warm start: the stamps name the first
   copy's files, so it hashed the bundled models again (+1.5 s here; issue 28).
4. The packaged engine of the folder (dist/docent, whose files the .deb carries) on an emulated
   processor without AVX (qemu-x86_64 -cpu Nehalem): it chooses the CPU code that processor
   runs and answers (tests/portability.py).
Prints the sizes and how long each start took to show its window; exits non-zero on any failure.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.keychain import gnome_keyring
from tests.portability import Emulated, NotPortable, engine_on

DIST = REPO / "dist"
SMOKE_LIMIT_S = 900  # the app stops itself after 600 s; this only catches a hung process
DEB_FILES = (
    "opt/docent/docent",
    "usr/bin/docent",
    "usr/share/applications/docent.desktop",
    "usr/share/icons/hicolor/48x48/apps/docent.png",
    "usr/share/icons/hicolor/scalable/apps/docent.svg",
)


class PackageTestFailed(Exception):
    pass


def _megabytes(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if not p.is_symlink()]
    return sum(p.stat().st_size for p in files if p.is_file()) / 1e6


def smoke(command: Path, home: Path) -> tuple[float, str]:
    """Run `command --smoke-test` under Xvfb; return the seconds until its window was shown,
    and what it printed."""
    environment = {**os.environ, "DOCENT_HOME": str(home)}
    environment.pop("DOCENT_MODELS_DIR", None)  # the bundle's own models, joined in `home`
    started = time.perf_counter()
    shown: float | None = None
    with subprocess.Popen(
        ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", str(command), "--smoke-test"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as process:
        assert process.stdout is not None
        output = []
        for line in process.stdout:
            print(f"    {line}", end="", flush=True)
            output.append(line)
            if line.startswith("window: shown") and shown is None:
                shown = time.perf_counter() - started
        status = process.wait(timeout=SMOKE_LIMIT_S)
    if status != 0:
        raise PackageTestFailed(f"{command} --smoke-test exited with {status}")
    if shown is None:
        raise PackageTestFailed(f"{command} --smoke-test never showed its window")
    return shown, "".join(output)


def portable(bundle: Path) -> Emulated:
    """The packaged engine, started as the app starts it (`docent -I -m app.llm.worker`), loads
    the shipped model and answers on a processor without AVX."""
    (model,) = (bundle / "_internal" / "models" / "joined").glob("qwen2.5-coder-0.5b*.gguf")
    engine = [str(bundle / "docent"), "-I", "-m", "app.llm.worker"]
    # PyInstaller's one-folder bootloader sets these and starts itself again with exec, which
    # qemu's user mode cannot follow (the new image would run natively): it is started as that
    # second start. If PyInstaller renames them, the CPU code chosen below is the host's, and
    # the check fails.
    restarted = {
        "_PYI_ARCHIVE_FILE": str(bundle / "docent"),
        "_PYI_PARENT_PROCESS_LEVEL": "-1",
        "_PYI_LINUX_PROCESS_NAME": "docent",
        "LD_LIBRARY_PATH": str(bundle / "_internal"),
    }
    emulated = engine_on("Nehalem", engine, model, timeout_s=600, environment=restarted)
    if emulated.variant != "sse42" or not re.search(r"seven|7", emulated.answer):
        raise PackageTestFailed(f"on an emulated Nehalem: {emulated}")
    return emulated


def main() -> int:
    bundle = DIST / "docent"
    debs = sorted(DIST.glob("docent_*.deb"))
    if not (bundle / "docent").is_file() or not debs:
        print("dist/docent or dist/docent_*.deb is missing: run `make package` first")
        return 1
    deb = debs[-1]
    passed = 0
    try:
        with tempfile.TemporaryDirectory(prefix="docent-package-test-") as scratch:
            folder = Path(scratch)
            info = subprocess.run(
                ["dpkg-deb", "--field", str(deb), "Package", "Version", "Depends"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            print(f"{deb.name}:\n{info}", end="")
            subprocess.run(["dpkg-deb", "-x", str(deb), str(folder / "root")], check=True)
            missing = [name for name in DEB_FILES if not (folder / "root" / name).exists()]
            if missing:
                raise PackageTestFailed(f"{deb.name} lacks {', '.join(missing)}")
            passed += 1

            print("first start of the installed package (verifies the bundled models):")
            app = folder / "root" / "usr" / "bin" / "docent"
            with (
                pytest.MonkeyPatch.context() as patch,
                gnome_keyring(folder / "keychain", patch),
            ):
                # keyring must find the Secret Service through its entry points itself.
                patch.delenv("PYTHON_KEYRING_BACKEND")
                cold, output = smoke(app, folder / "home")
            if "keychain: Keys are kept in the OS keychain" not in output:
                raise PackageTestFailed("the packaged app did not find the Secret Service")
            passed += 1
            print("warm start of the installed package (models already verified):")
            warm, _ = smoke(app, folder / "home")
            passed += 1
            print("the packaged engine on an emulated Nehalem (x86-64-v2: no AVX):")
            emulated = portable(bundle)
            print(f"    {emulated.variant} code answered: {emulated.answer.strip()}")
            passed += 1
    except (PackageTestFailed, NotPortable, subprocess.SubprocessError) as error:
        print(f"package test failed: {error}")
        print(f"package: {passed} passed, 1 failed")  # CI reads this closing line
        return 1
    print(
        f"folder {_megabytes(bundle):.0f} MB, .deb {_megabytes(deb):.0f} MB; window shown "
        f"{cold:.1f} s after a first start, {warm:.1f} s after a warm one"
    )
    print(f"package: {passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
