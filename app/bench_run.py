"""`docent bench SUITE`: run one suite, print its Markdown table, write its JSON (and the launcher
draws its plots)."""

from __future__ import annotations

import json
import platform
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.bench import Measure, bench_core, render
from app.bench_inference import bench_inference, render_inference
from app.bench_overhead import bench_overhead
from app.bench_transport import bench_transport
from app.bootstrap import Docent
from app.paths import Paths
from app.settings import Settings


async def run_bench(suite: str, *, quick: bool, out: Path | None) -> int:
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    if suite in ("inference", "overhead"):
        paths = Paths.from_environment()
        paths.create()
        docent = Docent(paths, Settings.load(paths.settings_file), embeddings=False)
        try:
            if suite == "inference":
                payload: dict[str, Any] = await bench_inference(docent, quick=quick)
                table = render_inference(payload)
            else:
                measures = await bench_overhead(docent, quick=quick)
                payload = {"measures": [_measure_json(m) for m in measures]}
                table = render(measures)
        finally:
            await docent.close()
    elif suite == "transport":
        measures = await bench_transport(quick=quick)
        payload = {"measures": [_measure_json(m) for m in measures]}
        table = render(measures)
    else:
        measures = await bench_core(quick)
        table = render(measures)
        payload = {"measures": [_measure_json(m) for m in measures]}
    print(f"\n## docent bench {suite}{' --quick' if quick else ''} — {stamp}\n")
    print(f"{platform.processor() or platform.machine()}, {platform.python_version()}\n")
    print(table)
    if out is not None:
        _write_results(out, suite, quick, stamp, payload, table)
    return 0


def _measure_json(m: Measure) -> dict[str, Any]:
    return asdict(m) | {
        "docent_median": m.docent_median,
        "baseline_median": m.baseline_median,
        "comparison": m.comparison,
    }


def _write_results(
    out: Path, suite: str, quick: bool, stamp: str, results: dict[str, Any], table: str
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    payload = {"suite": suite, "quick": quick, "at": stamp, **results}
    (out / f"bench-{suite}.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    (out / f"bench-{suite}.md").write_text(table + "\n", encoding="utf-8")
