"""The model manager's downloads against a real HTTP server on 127.0.0.1 serving the real bundled
GGUF: a cut connection resumed with a Range request, a wrong checksum, a 404, a slow and a stalled
server, a full disk; two downloads of one model at once (in one process or two) fetch it once;
then the app switches to the downloaded model without a restart."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.answering import RouteDecided, Token
from app.bootstrap import Docent
from app.catalog import Catalog, CatalogModel, ModelError, ensure_model
from app.downloads import DownloadError, DownloadProgress, download, lock_path, part_path
from app.llm.engine import CancelToken
from app.paths import Paths
from app.settings import LocalModelSettings, RetrievalSettings, Settings
from app.verified import stamp_path
from tests.conftest import REPO, SHARED_MODELS
from tests.documents import write_pdf
from tests.integration.conftest import index_all, run
from tests.model_server import ModelServer, Served, model_server

GGUF = SHARED_MODELS / "qwen2.5-coder-0.5b-instruct-q4.gguf"
SLICE = 4 << 20  # the error cases need no whole model: the first 4 MB of the real one


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    return tmp_path / "models"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with model_server() as running:
        yield running


def served_model(
    server: ModelServer,
    name: str,
    served: Served,
    *,
    sha256: str | None = None,
    size: int | None = None,
) -> CatalogModel:
    server.files[name] = served
    if sha256 is None:
        with served.source.open("rb") as handle:
            sha256 = hashlib.sha256(handle.read(served.size)).hexdigest()
    return CatalogModel(
        name=name,
        title=name,
        role="chat",
        file=f"{name}.gguf",
        size=served.size if size is None else size,
        sha256=sha256,
        licence="Apache-2.0",
        source="test server",
        upstream="https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct",
        parts=(),
        url=server.url(name),
        ram_gb=1.0,
    )


def test_a_cut_download_resumes_is_verified_and_the_app_switches_to_it_without_restart(
    server: ModelServer, tmp_path: Path
) -> None:
    model = served_model(server, "served-qwen", Served(GGUF, cut_after=200_000_000))
    paths = dataclasses.replace(Paths.from_environment(), models_dir=tmp_path / "models")
    catalog = Catalog((*Catalog.load().models, model))
    seen: list[DownloadProgress] = []
    listened_on: set[int] = set()
    kept: list[int] = []

    def listen(progress: DownloadProgress) -> None:
        seen.append(progress)
        listened_on.add(threading.get_ident())

    async def scenario() -> list[tuple[str, str]]:
        with pytest.raises(DownloadError, match=r"connection broke at (1\d\d|200) MB of 491 MB"):
            await download(model, paths.models_dir, listen)
        kept.append(part_path(model, paths.models_dir).stat().st_size)
        assert 150_000_000 < kept[0] <= 200_000_000
        assert not (paths.models_dir / model.file).exists()
        path = await download(model, paths.models_dir, listen)
        assert path == paths.models_dir / model.file

        # A short prompt: prefill dominates the time to the first token on a CPU.
        settings = Settings(
            local=LocalModelSettings(max_tokens=16),
            retrieval=RetrievalSettings(top_k=1, context_tokens=128),
        )
        docent = Docent(paths, settings, catalog)
        await docent.open()
        try:
            await index_all(docent, [write_pdf(tmp_path / "report.pdf")])
            answered = []
            for choice in (model.name, str(GGUF)):  # a download, then the user's own file
                await docent.use_chat_model(choice)
                answered.append((choice, await first_token_from(docent)))
            return answered
        finally:
            await docent.close()

    answered = run(scenario())
    assert server.requests == [("served-qwen", None), ("served-qwen", f"bytes={kept[0]}-")]
    assert any(p.verifying for p in seen)  # the kept part was hashed before resuming
    # Listeners drive progress bars: never called from the hashing or writing thread.
    assert listened_on == {threading.get_ident()}
    downloaded = [p for p in seen if not p.verifying]
    assert downloaded[-1].done == downloaded[-1].total == model.size
    assert all(p.bytes_per_s > 0 for p in downloaded)
    assert not part_path(model, tmp_path / "models").exists()
    assert stamp_path(model, tmp_path / "models").exists()
    assert answered == [
        ("served-qwen", "served-qwen"),
        (str(GGUF), "qwen2.5-coder-0.5b-instruct-q4"),
    ]
    saved = Settings.load(Paths.from_environment().settings_file)
    assert saved.local.chat_model == str(GGUF)  # the last switch was saved


async def first_token_from(docent: Docent) -> str:
    """The model that answers, once it has produced a token (the rest is not needed)."""
    answerer = await docent.desk.answerer()
    cancel, model = CancelToken(), ""
    async for event in answerer.answer("How long must customer invoices be kept?", cancel=cancel):
        if isinstance(event, RouteDecided):
            model = event.model
        elif isinstance(event, Token):
            cancel.cancel()
    return model


def test_a_wrong_checksum_is_refused_and_nothing_is_kept(
    server: ModelServer, models_dir: Path
) -> None:
    model = served_model(server, "tampered", Served(GGUF, length=SLICE), sha256="0" * 64)
    with pytest.raises(DownloadError, match=r"checksum mismatch: the server sent 4194304 bytes"):
        run(download(model, models_dir))
    assert list(models_dir.iterdir()) == []


def test_server_errors_say_what_happened(server: ModelServer, models_dir: Path) -> None:
    missing = served_model(server, "missing", Served(GGUF, length=SLICE))
    del server.files["missing"]
    with pytest.raises(DownloadError, match=r"not on the server \(HTTP 404\)"):
        run(download(missing, models_dir))
    failing = served_model(server, "failing", Served(GGUF, length=SLICE, status=503))
    with pytest.raises(DownloadError, match=r"server failed \(HTTP 503\).*resumes"):
        run(download(failing, models_dir))
    gated = served_model(server, "gated", Served(GGUF, length=SLICE, status=403))
    with pytest.raises(DownloadError, match=r"refused the download \(HTTP 403\).*licence"):
        run(download(gated, models_dir))
    other = served_model(server, "other", Served(GGUF, length=SLICE), size=SLICE + 1)
    with pytest.raises(DownloadError, match="serves a different file"):
        run(download(other, models_dir))


def test_a_slow_download_reports_progress_pauses_and_resumes(
    server: ModelServer, models_dir: Path
) -> None:
    model = served_model(server, "slow", Served(GGUF, length=1 << 20, delay_s=0.02))
    seen: list[DownloadProgress] = []
    halfway = asyncio.Event()
    kept: list[int] = []

    def listen(progress: DownloadProgress) -> None:
        seen.append(progress)
        if progress.done >= model.size // 2:
            halfway.set()

    async def pause_then_resume() -> Path:
        task = asyncio.ensure_future(download(model, models_dir, listen))
        await halfway.wait()
        task.cancel()  # pause
        with pytest.raises(asyncio.CancelledError):
            await task
        kept.append(part_path(model, models_dir).stat().st_size)
        assert model.size // 2 <= kept[0] < model.size
        return await download(model, models_dir, listen)

    path = run(pause_then_resume())
    with GGUF.open("rb") as original:
        assert path.read_bytes() == original.read(model.size)
    assert server.requests[1][1] == f"bytes={kept[0]}-"
    assert len({p.done for p in seen if not p.verifying}) > 3  # progress moved step by step
    assert 0 < seen[-1].bytes_per_s < 64 * 1024 / 0.02  # no faster than the server sends


def test_a_stalled_server_times_out_and_the_part_is_kept(
    server: ModelServer, models_dir: Path
) -> None:
    model = served_model(server, "stalled", Served(GGUF, length=SLICE, stall_after=1 << 20))
    with pytest.raises(DownloadError, match=r"sent nothing for 0\.5 s \(at 1 MB of 4 MB\)"):
        run(download(model, models_dir, read_timeout_s=0.5))
    assert part_path(model, models_dir).stat().st_size == 1 << 20


def test_a_full_disk_is_said_before_and_during_the_download(
    server: ModelServer, models_dir: Path
) -> None:
    huge = served_model(server, "huge", Served(GGUF, length=SLICE), size=1 << 60)
    with pytest.raises(DownloadError, match="not enough disk space"):
        run(download(huge, models_dir))
    assert server.requests == []  # refused before asking the server
    # A real ENOSPC from the kernel: the part file is /dev/full.
    model = served_model(server, "no-space", Served(GGUF, length=SLICE))
    models_dir.mkdir(exist_ok=True)
    part_path(model, models_dir).symlink_to("/dev/full")
    with pytest.raises(DownloadError, match=r"not enough disk space.*what was downloaded is kept"):
        run(download(model, models_dir))


def test_a_downloaded_model_that_changed_on_disk_is_refused(
    server: ModelServer, models_dir: Path
) -> None:
    model = served_model(server, "kept", Served(GGUF, length=SLICE))
    path = run(download(model, models_dir))
    assert ensure_model(model, models_dir) == path  # stamped: no hash
    with path.open("r+b") as handle:
        handle.seek(1000)
        handle.write(b"corrupted")
    with pytest.raises(ModelError, match=r"is corrupt \(sha256"):
        ensure_model(model, models_dir)
    path.write_bytes(b"GGUF")
    with pytest.raises(ModelError, match=r"is corrupt \(4 bytes, expected 4194304\)"):
        ensure_model(model, models_dir)


def test_a_corrupt_model_at_start_up_or_at_load_gives_way_to_the_bundled_one(
    server: ModelServer, tmp_path: Path
) -> None:
    model = served_model(server, "damaged", Served(GGUF, length=SLICE))
    paths = dataclasses.replace(Paths.from_environment(), models_dir=tmp_path / "models")
    paths.models_dir.mkdir()
    (paths.models_dir / model.file).write_bytes(b"GGUF" + bytes(SLICE - 4))  # never verified
    catalog = Catalog((*Catalog.load().models, model))
    docent = Docent(paths, Settings(local=LocalModelSettings(chat_model="damaged")), catalog)
    notice = run(docent.chat.check())
    assert notice is not None
    assert notice.startswith("The local model damaged cannot be used: model damaged: ")
    assert "is corrupt (sha256" in notice
    assert docent.settings.local.chat_model == "qwen2.5-coder-0.5b"  # for this session only

    # A GGUF header on a cut file passes the start-up check; llama.cpp refuses it at load.
    truncated = tmp_path / "truncated.gguf"
    with GGUF.open("rb") as original:
        truncated.write_bytes(original.read(SLICE))
    docent = Docent(
        Paths.from_environment(), Settings(local=LocalModelSettings(chat_model=str(truncated)))
    )

    async def first_answer() -> tuple[str | None, str | None, str]:
        await docent.open()
        try:
            before = await docent.chat.check()
            answerer = await docent.desk.answerer()
            return before, docent.chat.take_notice(), answerer.local.model
        finally:
            await docent.close()

    before, after, answering = run(first_answer())
    assert before is None
    assert after is not None
    assert "cannot load model truncated.gguf: not a valid GGUF file" in after
    assert answering == "qwen2.5-coder-0.5b"


def test_two_downloads_of_one_model_at_once_fetch_it_once(
    server: ModelServer, models_dir: Path
) -> None:
    """Two Models managers (or a manager and the CLI) asked for the same model: the second
    waits for the first, instead of writing into the same part file beside it."""
    model = served_model(server, "twice", Served(GGUF, length=1 << 20, delay_s=0.05))
    seen: tuple[list[DownloadProgress], list[DownloadProgress]] = ([], [])

    async def both() -> list[Path]:
        return await asyncio.gather(
            download(model, models_dir, seen[0].append),
            download(model, models_dir, seen[1].append),
        )

    assert run(both()) == [models_dir / model.file] * 2
    with GGUF.open("rb") as original:
        assert (models_dir / model.file).read_bytes() == original.read(model.size)
    assert server.requests == [("twice", None)]  # fetched once
    # One downloaded; the other said it waited for it, and never fetched anything itself.
    waited = [reports for reports in seen if any(p.elsewhere for p in reports)]
    assert len(waited) == 1
    assert all(p.elsewhere for p in waited[0])
    assert not lock_path(model, models_dir).exists()


def test_a_download_in_another_process_is_waited_for_and_not_repeated(
    server: ModelServer, models_dir: Path
) -> None:
    served = Served(GGUF, length=SLICE, delay_s=0.05)  # about 3 s for the whole slice
    model = served_model(server, "shared", served)
    assert model.url is not None
    seen: list[DownloadProgress] = []

    async def scenario() -> tuple[Path, bytes]:
        child = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "tests.integration.download_worker", str(models_dir)),
            *(model.name, model.file, str(model.size), model.sha256, model.url),
            cwd=REPO,
            stdout=subprocess.PIPE,
        )
        assert child.stdout is not None
        try:
            async for line in child.stdout:  # until the other process is well under way
                if line.startswith(b"progress") and int(line.split()[1]) >= 1 << 20:
                    break
            waiting = asyncio.Event()

            def listen(progress: DownloadProgress) -> None:
                seen.append(progress)
                if progress.elsewhere:
                    waiting.set()

            mine = asyncio.ensure_future(download(model, models_dir, listen))
            await asyncio.wait_for(waiting.wait(), timeout=30)
            path = await mine
            told = await child.stdout.read()
            assert await child.wait() == 0
            return path, told
        finally:
            if child.returncode is None:
                child.kill()
                await child.wait()

    path, told = run(scenario())
    assert path == models_dir / model.file
    assert f"downloaded {path}".encode() in told
    with GGUF.open("rb") as original:
        assert path.read_bytes() == original.read(model.size)
    assert server.requests == [("shared", None)]  # the other process's request only
    assert seen
    assert all(p.elsewhere for p in seen)
    assert seen[0].done >= 1 << 20  # the other download's part, as it grew
    assert not lock_path(model, models_dir).exists()
