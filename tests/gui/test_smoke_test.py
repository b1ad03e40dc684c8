"""`docent --smoke-test` from source, as `make package-test` runs it on the built bundle: the real
window, the sample PDF indexed, one question answered by the bundled model, the gateway started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def smoke_test(environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ui.launcher", "--smoke-test"],
        cwd=REPO,
        env={**environment, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_smoke_test_indexes_answers_and_starts_the_gateway(tmp_path: Path) -> None:
    result = smoke_test(dict(os.environ))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "window: shown"
    assert "indexed: northwind-retention-policy.pdf, 3 pages, 3 chunks embedded" in lines
    assert "Q: How long are customer invoices kept?" in lines
    answer = next(line for line in lines if line.startswith("A: "))
    assert "seven years" in answer
    assert any(line.startswith("route: local (qwen2.5-coder-0.5b)") for line in lines)
    assert any("northwind-retention-policy.pdf, p. 2" in line for line in lines)
    assert any(line.startswith("gateway: OK in ") for line in lines)
    assert "keychain: No OS keychain was found" in result.stdout  # the tests' fail backend
    assert lines[-1] == "smoke test passed"
    # A throwaway library: the user's own (here the test's DOCENT_HOME) stays untouched.
    assert not (tmp_path / "docent-home" / "data" / "library.sqlite3").exists()


def test_smoke_test_fails_with_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the models folder should be")
    result = smoke_test({**os.environ, "DOCENT_MODELS_DIR": str(blocker)})
    assert result.returncode == 1
    assert "smoke test passed" not in result.stdout
    assert f"smoke test failed: FileExistsError: [Errno 17] File exists: '{blocker}'" in (
        result.stderr
    )
