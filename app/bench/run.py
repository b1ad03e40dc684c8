"""`docent bench SUITE`: run one suite, print its Markdown table, write its JSON (and the launcher
draws its plots)."""

from __future__ import annotations

import json
import platform
from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.bench.common import Measure, render
from app.bootstrap import Docent
from app.index.shared import SharedLocation
from app.paths import Paths
from app.settings import Settings

# The gui suite needs Qt: the launcher runs it (ui.tools.gui_bench), never the core.
SUITES = ("inference", "overhead", "transport", "ingest", "retrieval", "load", "folder")
FOLDER_DOCUMENTS = 1000


async def run_bench(
    suite: str,
    *,
    quick: bool,
    out: Path | None,
    documents: int | None = None,
    library: str | None = None,
    chunks: int | None = None,
) -> int:
    """`documents`: the folder suite's size (default FOLDER_DOCUMENTS, a tenth with `quick`);
    `library`: retrieval on a PostgreSQL server (its URL) beside SQLite; `chunks`: retrieval's
    one library size (default: its own sizes)."""
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    payload, table = await _run_suite(suite, quick, documents, library, chunks)
    print(f"\n## docent bench {suite}{' --quick' if quick else ''} — {stamp}\n")
    print(f"{platform.processor() or platform.machine()}, {platform.python_version()}\n")
    print(table)
    for note in payload.get("notes", ()):
        print(f"\nNote: {note}")
    if out is not None:
        write_results(out, suite, quick, stamp, payload, table)
    return 0


async def _run_suite(
    suite: str,
    quick: bool,
    documents: int | None,
    library: str | None = None,
    chunks: int | None = None,
) -> tuple[dict[str, Any], str]:
    if suite == "transport":
        from app.bench.transport import bench_transport

        return measures_payload(await bench_transport(quick=quick))
    if suite == "load":  # its own temporary home, for this process's Docent and its children
        from app.bench.load import bench_load

        results = await bench_load(quick=quick)
        payload, table = measures_payload(results["measures"], results["notes"])
        return payload | results["details"], table
    paths = Paths.from_environment()
    paths.create()
    docent = Docent(paths, Settings.load(paths.settings_file), embeddings=suite != "overhead")
    try:
        match suite:
            case "inference":
                from app.bench.inference import bench_inference, render_inference

                payload = await bench_inference(docent, quick=quick)
                return payload, render_inference(payload)
            case "overhead":
                from app.bench.overhead import bench_overhead

                return measures_payload(await bench_overhead(docent, quick=quick))
            case "ingest":
                from app.bench.ingest import bench_ingest

                return measures_payload(*await bench_ingest(docent, quick=quick))
            case "folder":
                from app.bench.folder import bench_folder

                size = documents or (FOLDER_DOCUMENTS // 10 if quick else FOLDER_DOCUMENTS)
                return measures_payload(*await bench_folder(docent, documents=size))
            case "retrieval":
                from app.bench.retrieval import bench_retrieval

                location = None
                if library is not None:  # PostgreSQL beside SQLite, on that server
                    location = SharedLocation(library, docent.library_password(library))
                results = await bench_retrieval(
                    docent, quick=quick, location=location, chunks=chunks
                )
                payload, table = measures_payload(results["measures"], results["notes"])
                return payload | {"sizes": results["sizes"]}, table
            case _:
                raise ValueError(f"unknown bench suite {suite!r}")
    finally:
        await docent.close()


def measures_payload(
    measures: Sequence[Measure], notes: Sequence[str] = ()
) -> tuple[dict[str, Any], str]:
    payload = {"measures": [_measure_json(m) for m in measures], "notes": list(notes)}
    return payload, render(measures)


def _measure_json(m: Measure) -> dict[str, Any]:
    return asdict(m) | {
        "docent_median": m.docent_median,
        "baseline_median": m.baseline_median,
        "comparison": m.comparison,
    }


def write_results(
    out: Path, suite: str, quick: bool, stamp: str, results: dict[str, Any], table: str
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    payload = {"suite": suite, "quick": quick, "at": stamp, **results}
    (out / f"bench-{suite}.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    (out / f"bench-{suite}.md").write_text(table + "\n", encoding="utf-8")
