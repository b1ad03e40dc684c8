"""`docent bench folder`: a folder of 1,000 mixed documents indexed as a user's would be, through
the real intake (reader process, OCR pass, embedder), from an empty library until it is fully
searchable: the total time, pages/s, where the time went (parse, OCR, embedding, writing), and
how well the time left was foretold along the way.

The folder: PDFs of 2 to 12 pages (a few of 40 to 60), Markdown, HTML, plain text, DOCX and
EPUB, a few scanned (image-only) PDF pages for OCR and two corrupt files; generated here, the
same for a given count. The shares are of the total time and come from the intake's own timers
(app/intake/progress.py: IntakeTimes); OCR runs beside reading, so they may add up to more than
100 %.
"""

from __future__ import annotations

import random
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pymupdf

from app.bench.common import Measure, policy_paragraph, policy_topic, write_corpus
from app.bootstrap import Docent
from app.documents.reader import DocumentReader, ReadLimits
from app.index import Library
from app.intake import FileFailed, FileIndexed, IndexingProgress, Intake, IntakeTimes

# Of every 100 documents (the rest of 1,000 are PDFs): the mix of a shared project folder.
MIX = {"md": 20, "html": 15, "txt": 15, "docx": 6, "epub": 4}
SCANS_PER_1000 = 5
CORRUPT = 2


@dataclass(slots=True)
class FolderRun:
    seconds: float = 0.0
    indexed: int = 0
    failed: int = 0
    reading_pages_per_s: float | None = None
    # (share of the files done, seconds the estimate said were left, seconds the run then took)
    foretold: list[tuple[float, float, float]] = field(default_factory=list)
    times: IntakeTimes = field(default_factory=IntakeTimes)


def write_folder(folder: Path, documents: int, seed: int = 28) -> list[Path]:
    """`documents` mixed documents in `folder` (in subfolders, as people keep them)."""
    rng = random.Random(seed)
    scans = max(1, documents * SCANS_PER_1000 // 1000)
    counts = {kind: documents * share // 100 for kind, share in MIX.items()}
    counts["pdf"] = documents - sum(counts.values()) - scans - CORRUPT
    files: list[Path] = []
    for kind, count in counts.items():
        (folder / kind).mkdir(parents=True, exist_ok=True)
        for number in range(count):
            files.append(_write(kind, folder / kind / f"{kind}-{number:04}.{kind}", rng, number))
    (folder / "scans").mkdir()
    files += [_write_scan(folder / "scans" / f"scan-{n}.pdf", rng) for n in range(scans)]
    broken = folder / "broken"
    broken.mkdir()
    (broken / "truncated.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog")
    (broken / "not-really.docx").write_bytes(
        b"PK\x03\x04" + bytes(rng.randrange(256) for _ in range(512))
    )
    return [*files, broken / "truncated.pdf", broken / "not-really.docx"]


def _write(kind: str, path: Path, rng: random.Random, number: int) -> Path:
    topic, subjects = policy_topic(rng)
    paragraphs = [policy_paragraph(rng, topic, subjects) for _ in range(rng.randint(4, 40))]
    title = f"{topic} policy {number}"
    match kind:
        case "pdf":
            pages = rng.randint(40, 60) if rng.random() < 0.04 else rng.randint(2, 12)
            (written,) = write_corpus(
                path.parent, documents=1, pages=pages, seed=rng.randrange(10**6)
            )
            return written.rename(path)
        case "md":
            sections = [
                f"## {subjects[i % len(subjects)].capitalize()}\n\n{p}"
                for i, p in enumerate(paragraphs)
            ]
            path.write_text(f"# {title}\n\n" + "\n\n".join(sections), encoding="utf-8")
        case "html":
            body = "".join(f"<p>{p}</p>" for p in paragraphs)
            path.write_text(
                f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>",
                encoding="utf-8",
            )
        case "txt":
            path.write_text(f"{title}\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
        case "docx":
            import docx  # only here: the bench's one use of python-docx

            document = docx.Document()
            document.add_heading(title, 1)
            for paragraph in paragraphs:
                document.add_paragraph(paragraph)
            document.save(str(path))
        case "epub":
            write_epub(path, title, paragraphs)
    return path


def write_epub(path: Path, title: str, paragraphs: list[str]) -> Path:
    """A one-chapter EPUB 2 (the tests' too)."""
    chapter = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>{title}</title></head><body><h1>{title}</h1>"
        + "".join(f"<p>{p}</p>" for p in paragraphs)
        + "</body></html>"
    )
    with zipfile.ZipFile(path, "w") as epub:
        epub.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        epub.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" '
            'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        epub.writestr(
            "content.opf",
            '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="2.0" '
            'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
            f"<dc:title>{title}</dc:title><dc:identifier id='id'>{path.stem}</dc:identifier>"
            '</metadata><manifest><item id="c1" href="c1.xhtml" '
            'media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/>'
            "</spine></package>",
        )
        epub.writestr("c1.xhtml", chapter)
    return path


def _write_scan(path: Path, rng: random.Random) -> Path:
    """A one-page PDF that is only a picture of a page of prose (150 dpi), as a scanner makes."""
    topic, subjects = policy_topic(rng)
    text = "\n\n".join(policy_paragraph(rng, topic, subjects) for _ in range(4))
    with pymupdf.open() as source:
        page = source.new_page()
        page.insert_textbox(pymupdf.Rect(56, 60, 540, 800), text, fontsize=11)
        picture = page.get_pixmap(dpi=150)
    with pymupdf.open() as scan:
        page = scan.new_page(width=595, height=842)
        page.insert_image(page.rect, pixmap=picture)
        scan.save(path)
    return path


async def index_folder(docent: Docent, work: Path, folder: Path) -> FolderRun:
    """Index `folder` into a new library with the app's embedder, until fully searchable."""
    library = Library(work / "folder.sqlite3", docent.embedder_factory())
    await library.open()
    limits = ReadLimits.from_settings(docent.settings.library)
    reader = DocumentReader(limits)
    ocr_reader = DocumentReader(ReadLimits.for_ocr(docent.settings.library), name="ocr")
    intake = Intake(library, reader, ocr_reader)
    run = FolderRun(times=intake.times)
    said: list[tuple[float, float, float]] = []  # (share done, time left said, when)
    quarters = 0
    try:
        started = time.perf_counter()
        async for event in intake.index([folder], embed=True):
            match event:
                case FileIndexed():
                    run.indexed += 1
                case FileFailed():
                    run.failed += 1
                case IndexingProgress(stage="reading") as progress:
                    run.reading_pages_per_s = progress.pages_per_s
                    share = progress.done / max(progress.total, 1)
                    if int(share * 4) > quarters and progress.eta_s is not None:
                        quarters = int(share * 4)
                        said.append((share, progress.eta_s, time.perf_counter()))
        ended = time.perf_counter()
        run.seconds = ended - started
        run.foretold = [(share, eta, ended - when) for share, eta, when in said]
    finally:
        await intake.close()
        await reader.close()
        await ocr_reader.close()
        await library.close()
    return run


def measures(run: FolderRun, documents: int, pages: int) -> list[Measure]:
    total = run.seconds
    times = run.times
    shares = [
        ("parse (check, hash, read in the reader process)", times.parse_s),
        ("OCR (beside reading)", times.ocr_s),
        ("embedding", times.embedding_s),
        ("writing (documents, the stored queue)", times.write_s),
    ]
    results = [
        Measure(
            f"{documents:,} mixed documents, empty library to fully searchable",
            "s",
            [total],
            compare="none",
        ),
        Measure("  pages/s over the whole run", "pages/s", [pages / total], compare="none"),
        Measure(
            "  pages/s while reading (as shown)",
            "pages/s",
            [run.reading_pages_per_s or 0.0],
            compare="none",
        ),
    ]
    results += [
        Measure(f"  share: {name}", "%", [100 * seconds / total], compare="none")
        for name, seconds in shares
    ]
    return results


def notes(run: FolderRun, documents: int, pages: int) -> list[str]:
    said = "; ".join(
        f"at {share:.0%} of the files it said {eta:.0f} s left, {actual:.0f} s were"
        for share, eta, actual in run.foretold
    )
    return [
        f"{run.indexed} documents indexed, {run.failed} failed (the corrupt ones), "
        f"{pages:,} pages, {run.times.ocr_pages} scanned pages OCR'd",
        f"time left as foretold: {said or 'never shown'} (embedding included once its speed "
        "is known: a new library learns it from its first pass)",
    ]


async def bench_folder(docent: Docent, *, documents: int) -> tuple[list[Measure], list[str]]:
    with tempfile.TemporaryDirectory(prefix="docent-bench-folder-") as temporary:
        work = Path(temporary)
        print(f"writing {documents:,} mixed documents …", flush=True)
        write_folder(work / "folder", documents)
        print("indexing them …", flush=True)
        run = await index_folder(docent, work, work / "folder")
        pages = run.times.pages  # a scan's pages among them
    return measures(run, documents, pages), notes(run, documents, pages)
