"""`docent bench … --quick` runs end to end and writes well-formed results (not timings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from app.paths import Paths
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


def test_quick_inference_bench_measures_local_and_cloud_and_plots_them(
    isolated_paths: Paths, llama_server: str, tmp_path: Path
) -> None:
    provider = {"name": "llama", "base_url": llama_server, "models": ["qwen-mini"]}
    isolated_paths.settings_file.write_text(json.dumps({"cloud": {"providers": [provider]}}))
    out = tmp_path / "bench"
    result = subprocess.run(
        [sys.executable, "-m", "ui.launcher", "bench", "inference", "--quick", "--out", str(out)],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    payload = json.loads((out / "bench-inference.json").read_text())
    assert [(r["route"], r["model"]) for r in payload["routes"]] == [
        ("local", "qwen2.5-coder-0.5b"),
        ("cloud", "llama/qwen-mini"),
    ]
    for route in payload["routes"]:
        lengths = route["lengths"]
        assert [row["target_tokens"] for row in lengths] == [256, 1024]
        assert lengths[0]["prompt_tokens"] < lengths[1]["prompt_tokens"]
        assert all(row["ttft_median_s"] > 0 and row["prefill_tok_s"] > 0 for row in lengths)
        levels = route["concurrency"]
        assert [row["requests"] for row in levels] == [1, 2]
        assert [len(row["ttft_s"]) for row in levels] == [1, 2]
        assert levels[0]["aggregate_vs_one"] == 1.0
        assert all(row["aggregate_tok_s"] > 0 for row in levels)
    assert "| concurrent requests | TTFT median (slowest) |" in result.stdout
    for name in ("ttft-by-length", "ttft-by-concurrency", "throughput-by-concurrency"):
        plot = out / f"inference-{name}.png"
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", plot
        assert f"plot: {plot}" in result.stdout
