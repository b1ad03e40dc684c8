"""Real files in, real SQLite out: pages, labels, headings, formats, updates."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from importlib import resources
from pathlib import Path

import pymupdf
import pytest

from app.bench.folder import write_epub
from app.documents import DocumentError
from app.documents.links import LEADS_OUTSIDE
from app.documents.parse import open_document
from app.documents.reader import DocumentReader, ReadLimits
from app.documents.render import MAX_PREVIEW_PIXELS
from app.index import AmbiguousDocument, DocumentInfo, DocumentNotFound
from app.intake import FileIndexed, FileRemoved, FileSkipped, FileStarted, PagesParsed, queue
from app.settings import LibrarySettings
from tests.documents import REPORT_SECTIONS, write_long_pdf, write_mobi, write_pdf, write_xps
from tests.integration.conftest import index_all, opened, run


def write_fb2(path: Path) -> Path:
    path.write_text(
        '<?xml version="1.0" encoding="utf-8"?>'
        '<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><description>'
        "<title-info><book-title>Lighthouse</book-title></title-info></description><body>"
        "<section><title><p>Keeper duties</p></title>"
        "<p>The keeper lights the lamp thirty minutes before sunset.</p></section></body>"
        "</FictionBook>",
        encoding="utf-8",
    )
    return path


def test_pdf_chunks_keep_pages_printed_labels_and_headings(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")

    async def scenario() -> list:
        async with opened(embeddings=False) as docent:
            events = await index_all(docent, [report])
            (document,) = await docent.library.documents()
            chunks = await docent.library.read(
                lambda store: [store.page_chunks(document.id, page) for page in range(1, 5)]
            )
            return [events, document, chunks]

    events, document, pages = run(scenario())
    assert isinstance(events[0], FileStarted)
    assert isinstance(events[-2], PagesParsed)
    assert (events[-2].done, events[-2].total) == (4, 4)
    assert isinstance(events[-1], FileIndexed)
    assert (document.pages, document.format, document.name) == (4, "pdf", "report.pdf")
    assert [[c.page_label for c in page] for page in pages] == [["i"], ["1"], ["2"], ["3"]]
    assert [page[0].heading for page in pages] == [title for title, _ in REPORT_SECTIONS]
    assert "员工档案在员工离职后必须保存十年" in pages[3][0].text
    assert "retained for seven years" in pages[1][0].text


def test_numbered_section_titles_still_match_their_unnumbered_toc_entries() -> None:
    """The samples number their sections ("3. Retention periods", "一、绿茶"); their TOCs do not."""
    sample = Path(str(resources.files("resources").joinpath("sample")))
    with open_document(sample / "northwind-retention-policy.pdf") as document:
        headings = [{heading for _, heading in page.blocks} for page in document.pages()]
    assert headings == [{"Purpose and scope"}, {"Retention periods"}, {"Deletion and legal hold"}]
    with open_document(sample / "china-tea-primer.pdf") as document:
        headings = [{heading for _, heading in page.blocks} for page in document.pages()]
    assert headings == [{"绿茶与乌龙茶"}, {"红茶、普洱与保存"}]


def test_every_supported_text_and_ebook_format_is_indexed(tmp_path: Path) -> None:
    files = [
        write_epub(
            tmp_path / "harbour.epub",
            "Harbour rules",
            ["Boats must leave the inner harbour before the tide turns at dusk."],
        ),
        write_fb2(tmp_path / "lighthouse.fb2"),
        tmp_path / "notes.md",
        tmp_path / "page.html",
        tmp_path / "plain.txt",
        tmp_path / "legacy.txt",
        write_xps(tmp_path / "ferries.xps", "Ferries depart every forty minutes from pier nine."),
        write_mobi(
            tmp_path / "tides.mobi",
            "<html><body><h1>Tides</h1><p>The harbour gate closes two hours after high tide."
            "</p></body></html>",
        ),
    ]
    files[2].write_text("# Budget\n\nThe travel budget is capped at 900 euros.\n", "utf-8")
    files[3].write_text(
        "<html><body><h1>Canteen</h1><p>Lunch is served from noon.</p></body></html>", "utf-8"
    )
    files[4].write_text("Parking permits renew every March.\n", "utf-8")
    files[5].write_bytes("仓库钥匙由值班经理保管，每晚十点交接。".encode("gb18030") * 3)

    async def scenario() -> tuple[list, dict[str, str]]:
        async with opened(embeddings=False) as docent:
            events = await index_all(docent, files)
            texts = {}
            for document in await docent.library.documents():
                chunks = await docent.library.read(
                    lambda store, d=document: store.page_chunks(d.id, 1)
                )
                texts[document.name] = " ".join(c.text for c in chunks)
                texts[document.name + ":heading"] = chunks[0].heading or ""
            return events, texts

    events, texts = run(scenario())
    assert len([e for e in events if isinstance(e, FileIndexed)]) == len(files)
    assert "before the tide turns" in texts["harbour.epub"]
    assert "thirty minutes before sunset" in texts["lighthouse.fb2"]
    assert "capped at 900 euros" in texts["notes.md"]
    assert texts["notes.md:heading"] == "Budget"
    assert "served from noon" in texts["page.html"]
    assert texts["page.html:heading"] == "Canteen"
    assert "renew every March" in texts["plain.txt"]
    assert "仓库钥匙由值班经理保管" in texts["legacy.txt"]
    assert "every forty minutes from pier nine" in texts["ferries.xps"]
    assert "closes two hours after high tide" in texts["tides.mobi"]
    assert texts["tides.mobi:heading"] == "Tides"


def test_unchanged_files_are_skipped_and_changed_ones_replaced(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")

    async def scenario() -> tuple[list, list, list, list]:
        async with opened(embeddings=False) as docent:
            first = await index_all(docent, [report])
            again = await index_all(docent, [report])
            write_pdf(report, [("Only section", "A single page about the new canteen menu.")])
            changed = await index_all(docent, [report])
            documents = await docent.library.documents()
            hits = await docent.library.search("canteen menu", 3)
            old_hits = await docent.library.search("invoices seven years", 3)
            return [first[-1], again[-1], changed[-1]], documents, hits, old_hits

    outcomes, documents, hits, old_hits = run(scenario())
    assert isinstance(outcomes[0], FileIndexed)
    assert isinstance(outcomes[1], FileSkipped)
    assert outcomes[1].reason == "unchanged since it was indexed"
    assert isinstance(outcomes[2], FileIndexed)
    assert len(documents) == 1
    assert documents[0].pages == 1
    assert hits[0].chunk.text.endswith("new canteen menu.")
    assert old_hits == []


def test_touched_but_identical_file_is_skipped_by_content_hash(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")

    async def scenario() -> object:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [report])
            report.touch()
            report.write_bytes(report.read_bytes())  # new mtime, same bytes
            return (await index_all(docent, [report]))[-1]

    outcome = run(scenario())
    assert isinstance(outcome, FileSkipped)
    assert outcome.reason == "unchanged content"


def test_folders_are_walked_for_supported_files_only(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    (folder / "sub").mkdir(parents=True)
    (folder / ".hidden").mkdir()
    write_pdf(folder / "a.pdf")
    write_long_pdf(folder / "sub" / "b.pdf", pages=3)
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (folder / ".hidden" / "c.txt").write_text("hidden", "utf-8")

    async def scenario() -> list:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [folder])
            return await docent.library.documents()

    assert sorted(d.name for d in run(scenario())) == ["a.pdf", "b.pdf"]


def test_documents_are_named_by_id_file_name_or_path_and_never_opened(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first = write_pdf(tmp_path / "one" / "report.pdf")
    second = write_pdf(tmp_path / "two" / "report.pdf")
    unique = write_pdf(tmp_path / "two" / "budget.pdf")

    async def scenario() -> tuple[list[DocumentInfo], list[str]]:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [first, second, unique])
            by_path = await docent.library.document_by_path(str(second))
            assert by_path is not None
            names = [str(first), "budget.pdf", str(by_path.id)]
            found = await docent.library.match_documents(names)
            refused = []
            for name in ["report.pdf", "nope.pdf", "/etc/passwd"]:
                with pytest.raises((AmbiguousDocument, DocumentNotFound)) as error:
                    await docent.library.match_documents([name])
                refused.append(f"{error.type.__name__}: {error.value}")
            return found, refused

    found, refused = run(scenario())
    assert [d.path for d in found] == [str(first), str(unique), str(second)]
    assert refused[0].startswith("AmbiguousDocument: 'report.pdf' matches several documents (ids ")
    assert refused[1:] == [
        "DocumentNotFound: no indexed document matches 'nope.pdf'",
        "DocumentNotFound: no indexed document matches '/etc/passwd'",
    ]


def test_removing_a_document_removes_its_chunks_from_search(tmp_path: Path) -> None:
    report = write_pdf(tmp_path / "report.pdf")
    other = write_pdf(tmp_path / "other.pdf", [("Fleet", "The delivery vans are serviced yearly.")])

    async def scenario() -> tuple[list, list, list]:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [report, other])
            (target,) = [d for d in await docent.library.documents() if d.name == "report.pdf"]
            await docent.library.remove(target.id)
            return (
                await docent.library.documents(),
                await docent.library.search("invoices retained", 3),
                await docent.library.search("delivery vans serviced", 3),
            )

    documents, removed_hits, kept_hits = run(scenario())
    assert [d.name for d in documents] == ["other.pdf"]
    assert removed_hits == []
    assert kept_hits[0].chunk.document_name == "other.pdf"


def test_a_long_text_file_is_read_in_pieces_and_its_pages_match_the_preview(
    tmp_path: Path,
) -> None:
    """8 MB of prose took MuPDF 77 s in one piece (its cost per page grows with the document);
    read in pieces, a page number must still mean the page the preview shows."""
    path = tmp_path / "log.txt"
    line = "The pump station logged a routine pressure reading at the usual hour.\n"
    path.write_text(line * 16_000 + "Closing marker: valve seven was replaced.\n" + line * 50)

    async def scenario() -> tuple[list, int, int, tuple]:
        async with opened(embeddings=False) as docent:
            events = await index_all(docent, [path])
            hits = await docent.library.search("valve seven replaced", 1)
            page = hits[0].chunk.page
            rendered = await docent.render_page(path, page, passage="valve seven was replaced")
            return events, page, rendered.pages, rendered.highlights

    events, page, pages, highlights = run(scenario())
    assert isinstance(events[-1], FileIndexed)
    assert events[-1].pages == pages > 100
    assert page > pages // 2
    assert highlights  # the passage is on the page the index says


def test_a_poster_sized_page_is_previewed_within_a_bounded_picture(tmp_path: Path) -> None:
    path = tmp_path / "poster.pdf"
    doc = pymupdf.open()
    page = doc.new_page(width=14_400, height=14_400)  # 200 inches, PDF's largest page
    page.insert_text((100, 200), "Poster marker heron", fontsize=96)
    doc.save(path)
    doc.close()

    async def scenario() -> bytes:
        async with opened(embeddings=False) as docent:
            return (await docent.render_page(path, 1, zoom=1.5)).png

    png = run(scenario())
    width, height = struct.unpack(">II", png[16:24])  # the PNG header's IHDR
    assert width * height <= MAX_PREVIEW_PIXELS
    assert width == height > 1000  # scaled down, not refused


def test_a_file_swapped_for_a_link_out_of_its_folder_is_never_read_and_its_document_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder rule holds when the file is read, not only when the folder was walked: a file
    replaced by a link to a file outside between the walk and the read is not indexed from the
    target, and the document it was is removed (as when the walk itself finds the link)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    notes = folder / "notes.txt"
    notes.write_text("The boat leaves at dawn from the north pier.", "utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("The vault code is 4471 and the key is under the mat.", "utf-8")
    walk = queue.collect_files
    walks: list[object] = []

    def walk_then_swap(*arguments: object, **options: object) -> object:
        walks.append(walk(*arguments, **options))  # type: ignore[arg-type]
        if len(walks) == 2:  # the second run: after its walk, before its read
            notes.unlink()
            notes.symlink_to(secret)
        return walks[-1]

    monkeypatch.setattr(queue, "collect_files", walk_then_swap)

    async def scenario() -> tuple[list[object], list[str], list[str], list[object]]:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [folder])
            before = [d.name for d in await docent.library.documents()]
            events = await index_all(docent, [folder])
            after = [d.name for d in await docent.library.documents()]
            found = await docent.library.search("vault code", 5)
            # The reader checks again as it opens the file (the parent's check may be old).
            with pytest.raises(DocumentError, match="outside the chosen folder"):
                async with contextlib.aclosing(docent.reader.parse(notes, folder)) as read:
                    [event async for event in read]
            return events, before, after, found

    events, before, after, found = run(scenario())
    assert before == ["notes.txt"]
    assert after == []
    assert found == []
    skipped = [e for e in events if isinstance(e, FileSkipped)]
    assert [e.reason for e in skipped] == [LEADS_OUTSIDE]
    assert any(isinstance(e, FileRemoved) and e.path == str(notes) for e in events)


def test_a_preview_and_the_ocr_pass_read_only_the_file_that_was_indexed(tmp_path: Path) -> None:
    """The page preview and the OCR pass open a file later than the index did: swapped
    meanwhile for a link to another file (or changed), it is refused where the reader opens it,
    never shown or read in its place."""
    folder = tmp_path / "shared"
    folder.mkdir()
    notes = folder / "notes.txt"
    notes.write_text("The boat leaves at dawn from the north pier.", "utf-8")
    secret = tmp_path / "secret.txt"
    secret.write_text("The vault code is 4471 and the key is under the mat.", "utf-8")

    async def scenario() -> None:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [folder])
            assert (await docent.render_page(notes, 1)).png
            indexed = (notes.stat().st_size, notes.stat().st_mtime_ns)
            notes.unlink()
            notes.symlink_to(secret)
            with pytest.raises(DocumentError, match="changed since it was indexed"):
                await docent.render_page(notes, 1)
            with pytest.raises(DocumentError, match="changed since it was indexed"):
                await docent.ocr_reader.ocr(notes, 1, indexed)

    run(scenario())


def test_a_reader_asked_while_it_closes_starts_no_child(tmp_path: Path) -> None:
    """A read or a preview asked for as the window closes (a thumbnail's late request) is
    refused and leaves no reader process behind; one asked after the close is refused too."""
    notes = tmp_path / "notes.txt"
    notes.write_text("The boat leaves at dawn from the north pier.", "utf-8")
    reader = DocumentReader(ReadLimits.from_settings(LibrarySettings()), name="preview")

    async def read() -> list[object]:
        async with contextlib.aclosing(reader.parse(notes)) as events:
            return [event async for event in events]

    async def scenario() -> None:
        await reader.start()
        closing = asyncio.ensure_future(reader.close())
        # Both start after the close's first step: queued on the reader's thread behind its stop.
        late_read = asyncio.ensure_future(read())
        late_preview = asyncio.ensure_future(reader.render(notes, 1))
        await closing
        for late in (late_read, late_preview):
            with pytest.raises(DocumentError, match="has closed"):
                await late
        assert not reader.running
        with pytest.raises(DocumentError, match="has closed"):
            await reader.render(notes, 1)

    run(scenario())
