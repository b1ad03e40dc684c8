"""`docent bench core --quick` runs end to end and writes well-formed results (not timings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_quick_core_bench_reports_every_measure_against_its_baseline(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = subprocess.run(
        [sys.executable, "-m", "ui.launcher", "bench", "core", "--quick", "--out", str(out)],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads((out / "bench-core.json").read_text())
    names = [m["name"] for m in payload["measures"]]
    for expected in (
        "indexing (keyword-searchable)",
        "embedding",
        "local TTFT (same prompt)",
        "local decode",
        "hybrid search p95, 2,000 chunks",
    ):
        assert any(name.startswith(expected) for name in names), (expected, names)
    for measure in payload["measures"]:
        assert measure["docent"], measure
        assert all(value > 0 for value in measure["docent"]), measure
    compared = {m["name"]: m["comparison"] for m in payload["measures"] if m["baseline"]}
    assert compared["indexing (keyword-searchable)"] > 0
    assert compared["local decode"] > 0
    table = (out / "bench-core.md").read_text()
    assert table.startswith("| measure | Docent | baseline | comparison | target |")
    assert table in result.stdout
