"""Every test runs against its own config/data/cache folders under tmp_path; models are shared."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.paths import Paths
from tests.keychain import gnome_keyring
from tests.peers.openai_compatible import llama_cpp_server

REPO = Path(__file__).resolve().parent.parent


def docent(*arguments: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`docent ARGUMENTS` in a fresh process, through the launcher, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "ui.launcher", *arguments],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# Bundled models are joined once (500 MB) into the repo's ignored cache and reused by every test.
SHARED_MODELS = REPO / ".cache" / "models"


@pytest.fixture(autouse=True)
def isolated_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Paths]:
    home = tmp_path / "docent-home"
    monkeypatch.setenv("DOCENT_HOME", str(home))
    monkeypatch.setenv("DOCENT_MODELS_DIR", str(SHARED_MODELS))
    for variable in ("DOCENT_CONFIG_DIR", "DOCENT_DATA_DIR", "DOCENT_CACHE_DIR"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # nothing may touch the real home
    # Nor the user's keychain: no keychain at all, unless a test asks for the `keychain` fixture.
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    paths = Paths.from_environment()
    paths.create()
    return paths


@pytest.fixture
def keychain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A real, private GNOME Keyring (Secret Service) for this test."""
    with gnome_keyring(tmp_path / "keychain", monkeypatch):
        yield


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on the bundled GGUF: the stand-in cloud provider
    (the integration tests' cloud route, Settings' "Fetch models")."""
    model = SHARED_MODELS / "qwen2.5-coder-0.5b-instruct-q4.gguf"
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_cpp_server(model, log) as base_url:
        yield base_url


def files_containing(folder: Path, needle: str) -> list[Path]:
    return [
        path
        for path in folder.rglob("*")
        if path.is_file() and needle.encode() in path.read_bytes()
    ]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/gui/" in str(item.path).replace(os.sep, "/"):
            item.add_marker(pytest.mark.gui)
