"""The local route on a model server the user runs, against llama.cpp's server on 127.0.0.1: the
answer streams from it as the local route (free, private, its TTFT and speed measured here), a
conversation's second question reuses the server's KV prefix, privacy "never" still allows it,
and a server that stops answering hands the question to the model on this computer, saying why."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.answering import Failed, Finished, RouteDecided, SourcesFound, Token
from app.answering.conversation import Conversation
from app.answering.desk import RoutePreview
from app.bootstrap import Docent
from app.llm.engine import (
    CancelToken,
    GenerationDone,
    GenerationRequest,
    Message,
    TokenGenerated,
)
from app.llm.openai_stream import StreamError
from app.llm.server_model import ServerEngine
from app.paths import Paths
from app.settings import ModelServerSettings
from tests.conftest import SHARED_MODELS, docent
from tests.documents import write_pdf
from tests.integration.conftest import index_all, opened, run
from tests.peers.openai_compatible import Misbehaving, llama_cpp_server, misbehaving_server

MODEL = SHARED_MODELS / "qwen2.5-coder-0.5b-instruct-q4.gguf"
REPORTING = Path(__file__).parent.parent / "peers" / "llama_server_usage.py"
ON_THE_SERVER = "qwen-mini on 127.0.0.1"
QUESTION = "How long are customer invoices retained?"
RETENTION = (
    "Customer invoices are kept for seven years after the end of the financial year. "
    "Email archives are kept for two years."
)


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """llama.cpp's server reporting its usage (and its KV cache's share) as llama-server does;
    yields its base URL and its log (each request and each prefix reused is written there)."""
    log = tmp_path_factory.mktemp("model-server") / "server.log"
    with llama_cpp_server(MODEL, log, script=REPORTING) as base_url:
        yield base_url, log


def use_server(paths: Paths, base_url: str, **more: Any) -> None:
    server = {"enabled": True, "base_url": base_url, "model": "qwen-mini"}
    paths.settings_file.write_text(json.dumps({"local": {"server": server}, **more}))


def requests_served(log: Path) -> int:
    return log.read_text(errors="replace").count("POST /v1/chat/completions")


def test_docent_ask_answers_through_the_server_as_the_local_route(
    isolated_paths: Paths, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    base_url, log = model_server
    use_server(isolated_paths, base_url)
    assert docent("index", str(write_pdf(tmp_path / "report.pdf"))).returncode == 0
    before = requests_served(log)

    asked = docent("ask", "--json", QUESTION)
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    no_cloud = "local only: no cloud route is configured"
    assert result["routes"] == [{"route": "local", "model": ON_THE_SERVER, "reason": no_cloud}]
    assert "seven" in result["answer"].lower() or "7" in result["answer"]
    metrics = result["metrics"]
    assert metrics["cost_usd"] == 0
    assert 0 < metrics["retrieval_s"] < metrics["ttft_s"] < metrics["total_s"]
    assert metrics["completion_tokens"] > 1
    assert metrics["tokens_per_s"] > 0
    assert metrics["prompt_tokens"] > 100  # as the server counted it
    assert requests_served(log) > before  # the server answered, not the model on this computer

    shown = docent("ask", QUESTION)
    assert shown.returncode == 0, shown.stderr
    footer = shown.stdout.strip().splitlines()[-1]
    assert re.match(
        rf"route: local \({ON_THE_SERVER}\) · why: local only: no cloud route is configured · "
        r"TTFT \d+\.\d\d s · total \d+\.\d s · \d+\.\d tok/s · \d+\+\d+ tokens · \$0\.0000$",
        footer,
    ), footer


async def converse(docent: Docent, questions: list[str]) -> list[list[Any]]:
    conversation = Conversation()
    return [
        [event async for event in docent.desk.ask(question, conversation=conversation)]
        for question in questions
    ]


def finished(events: list[Any]) -> Finished:
    [done] = [event for event in events if isinstance(event, Finished)]
    return done


def test_a_conversation_on_the_server_reuses_its_prefix_even_with_privacy_never(
    isolated_paths: Paths, model_server: tuple[str, Path], tmp_path: Path
) -> None:
    """Privacy "never" keeps every question off the cloud (a provider is configured), and the
    user's own server still answers: it is the local route."""
    base_url, log = model_server
    cloud = {"providers": [{"name": "llama", "base_url": base_url, "models": ["qwen-mini"]}]}
    use_server(isolated_paths, base_url, routing={"privacy": "never"}, cloud=cloud)

    async def scenario() -> tuple[list[list[Any]], bool, str | None, RoutePreview]:
        async with opened() as docent:
            await index_all(docent, [write_pdf(tmp_path / "report.pdf")])
            await docent.library.embed_pending()
            preview = await docent.desk.preview_route(QUESTION)
            turns = await converse(docent, [QUESTION, "And email archives?"])
            refusal = docent.desk.cloud_refusal()
            return turns, docent.chat.loaded, None if refusal is None else refusal.code, preview

    before = log.read_text(errors="replace").count("prefix-match hit")
    turns, loaded_here, refusal, preview = run(scenario())
    assert refusal == "privacy_refuses"
    # Settings' "Try a question" hears the same, and that the local route is the server.
    assert preview.local_on_server
    assert (preview.decision.model, preview.decision.why.code) == (ON_THE_SERVER, "privacy_server")
    assert not loaded_here  # the model on this computer was never needed
    for events in turns:
        [decided] = [event for event in events if isinstance(event, RouteDecided)]
        assert (decided.route, decided.model, decided.why and decided.why.code) == (
            "local",
            ON_THE_SERVER,
            "privacy_server",
        )
        # The question went to the user's server: not "nothing leaves this machine".
        assert decided.reason == "privacy: kept on your model server (no cloud)"
        assert sum(isinstance(event, Token) for event in events) > 3  # it streamed
    first, second = (finished(events) for events in turns)
    assert "seven" in first.answer.lower() or "7" in first.answer
    assert "24" in second.answer or "two years" in second.answer.lower()
    assert first.metrics.ttft_s is not None
    assert second.metrics.ttft_s is not None
    assert (first.metrics.cost_usd, second.metrics.cost_usd) == (0.0, 0.0)
    # The follow-up's prompt starts with the first turn's: the server kept that prefix.
    assert second.metrics.cached_tokens > first.metrics.prompt_tokens // 2
    assert second.metrics.cached_tokens < second.metrics.prompt_tokens
    assert log.read_text(errors="replace").count("prefix-match hit") > before


def test_a_stopped_server_hands_the_question_to_the_model_on_this_computer(
    isolated_paths: Paths, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"

    async def ask(docent: Docent) -> list[Any]:
        return [event async for event in docent.desk.ask(QUESTION)]

    async def scenario() -> tuple[list[Any], list[Any]]:
        async with opened() as docent:
            await index_all(docent, [write_pdf(tmp_path / "report.pdf")])
            await docent.library.embed_pending()
            with llama_cpp_server(MODEL, log) as base_url:  # llama-cpp-python's: no usage
                settings = docent.settings.model_copy(deep=True)
                settings.local.server = ModelServerSettings(
                    enabled=True, base_url=base_url, model="qwen-mini"
                )
                settings.routing.cache_ttl_s = 0  # the same question is asked again
                await docent.apply_settings(settings)
                served = await ask(docent)
            stopped = await ask(docent)  # the server is gone now
            return served, stopped

    served, stopped = run(scenario())
    assert [e.route for e in served if isinstance(e, RouteDecided)] == ["local"]
    answered = finished(served)
    assert answered.metrics.model == ON_THE_SERVER
    assert answered.metrics.cached_tokens == 0  # this server does not say: nothing invented
    assert answered.metrics.prompt_tokens > 100  # counted here

    decisions = [e for e in stopped if isinstance(e, RouteDecided)]
    assert [(d.route, d.model) for d in decisions] == [
        ("local", ON_THE_SERVER),
        ("fallback", "qwen2.5-coder-0.5b"),
    ]
    why = decisions[1].why
    assert why is not None
    assert why.code == "server_failed"
    assert re.fullmatch(
        r"the model server failed before its first token \(cannot reach 127\.0\.0\.1 at "
        r"http://127\.0\.0\.1:\d+/v1\); answered on this computer",
        decisions[1].reason,
    ), decisions[1].reason
    fallback = finished(stopped)
    assert (fallback.metrics.route, fallback.metrics.model) == ("fallback", "qwen2.5-coder-0.5b")
    assert fallback.metrics.cost_usd == 0
    assert "seven" in fallback.answer.lower() or "7" in fallback.answer
    assert [e for e in stopped if isinstance(e, SourcesFound)]


def server_engine(base_url: str) -> ServerEngine:
    settings = ModelServerSettings(
        enabled=True, base_url=base_url, model="flaky-1", first_token_timeout_s=20
    )
    return ServerEngine(settings, None)


async def generate(
    engine: ServerEngine, cancel: CancelToken | None = None, into: list[Any] | None = None
) -> list[Any]:
    """The engine's events (also appended to `into` as they come, kept when it fails)."""
    events = [] if into is None else into
    request = GenerationRequest([Message("user", "How long are invoices kept?")], 32, 0.0)
    async for event in engine.stream(request, cancel or CancelToken()):
        events.append(event)
    return events


def test_the_server_engine_reports_the_usage_it_is_given_and_counts_it_when_not() -> None:
    async def scenario(root: str) -> tuple[GenerationDone, GenerationDone]:
        reported, silent = server_engine(f"{root}/ok/v1"), server_engine(f"{root}/silent-usage/v1")
        try:
            return (await generate(reported))[-1], (await generate(silent))[-1]
        finally:
            await reported.close()
            await silent.close()

    with misbehaving_server() as root:
        reported, silent = run(scenario(root))
    assert (reported.prompt_tokens, reported.completion_tokens) == (42, 3)
    assert (silent.completion_tokens, silent.finish_reason) == (3, "stop")  # a chunk a token
    assert 0 < silent.prompt_tokens < 42  # estimated from the question here
    assert reported.first_token_at is not None
    assert reported.last_token_at is not None
    assert reported.cost_usd == 0.0


def test_a_server_failing_before_its_first_token_is_not_asked_again_at_once() -> None:
    """What makes the answer fall back (nothing was written), and the steps of one answer do
    not each wait for it again; a stream cut after its first token is an error, not a
    fall-back (the answer has begun)."""

    async def scenario(root: str) -> tuple[str, str, list[Any], str]:
        broken, cut = server_engine(f"{root}/broken/v1"), server_engine(f"{root}/cut/v1")
        written: list[Any] = []
        try:
            errors = []
            for _ in range(2):
                with pytest.raises(StreamError) as failed:
                    await generate(broken)
                assert failed.value.received == 0
                errors.append(str(failed.value))
            with pytest.raises(StreamError) as cut_off:
                await generate(cut, into=written)
            assert cut_off.value.received > 0
            return errors[0], errors[1], written, str(cut_off.value)
        finally:
            await broken.close()
            await cut.close()

    with misbehaving_server() as root:
        first, again, written, cut = run(scenario(root))
        assert Misbehaving.calls["broken"] == 1  # the second question did not wait for it
    assert (
        first
        == again
        == ('127.0.0.1 failed with a server error (HTTP 503): {"error": "upstream overloaded"}')
    )
    assert [e.text for e in written if isinstance(e, TokenGenerated)] == ["Seven", " years"]
    assert cut == "the stream from 127.0.0.1 was cut off mid-answer after 11 characters"


def test_stop_ends_a_server_answer_that_has_not_started() -> None:
    async def scenario(root: str) -> GenerationDone:
        engine, cancel = server_engine(f"{root}/stalled/v1"), CancelToken()
        try:
            asyncio.get_running_loop().call_later(0.2, cancel.cancel)
            return (await generate(engine, cancel))[-1]
        finally:
            await engine.close()

    with misbehaving_server() as root:
        done = run(scenario(root))
    assert done.finish_reason == "cancelled"
    assert done.first_token_at is None


def test_a_summary_is_written_on_the_server_and_on_this_computer_when_it_stops(
    isolated_paths: Paths, tmp_path: Path
) -> None:
    """A summary goes where answers go: on the server (saying so, not "on this computer"),
    and, once the server is gone, on the model on this computer, the route saying why."""
    log = tmp_path / "server.log"
    # One section: one step each time (the steps are those of any summary, tested elsewhere).
    report = write_pdf(tmp_path / "retention.pdf", [("Retention", RETENTION)])

    async def summarize(docent: Docent, route: str | None) -> list[Any]:
        (document,) = await docent.library.match_documents([str(report)])
        job = await docent.desk.summary(document.id)
        return [event async for event in job.run(route)]

    async def scenario() -> tuple[list[Any], list[Any], bool]:
        async with opened(embeddings=False) as docent:
            await index_all(docent, [report])
            with llama_cpp_server(MODEL, log) as base_url:
                settings = docent.settings.model_copy(deep=True)
                settings.local.server = ModelServerSettings(
                    enabled=True, base_url=base_url, model="qwen-mini"
                )
                await docent.apply_settings(settings)
                served = await summarize(docent, None)
                loaded_for_it = docent.chat.loaded
            stopped = await summarize(docent, "local")  # written again: the server is gone
            return served, stopped, loaded_for_it

    served, stopped, loaded_for_it = run(scenario())
    assert not loaded_for_it  # the server wrote it: the model here was not even loaded
    [decided] = [e for e in served if isinstance(e, RouteDecided)]
    assert (decided.route, decided.model, decided.why and decided.why.code) == (
        "local",
        ON_THE_SERVER,
        "summary_server",
    )
    assert decided.reason == (
        "summaries are written on your model server unless you pick a cloud model"
    )
    made = finished(served)
    assert (made.metrics.route, made.metrics.model, made.metrics.cost_usd) == (
        "local",
        ON_THE_SERVER,
        0.0,
    )
    assert made.answer.strip()

    decisions = [e for e in stopped if isinstance(e, RouteDecided)]
    assert [(d.route, d.model) for d in decisions] == [
        ("local", ON_THE_SERVER),
        ("fallback", "qwen2.5-coder-0.5b"),
    ]
    assert decisions[0].why is not None
    assert decisions[0].why.code == "asked_server"
    why = decisions[1].why
    assert why is not None
    assert why.code == "server_failed"
    assert "cannot reach 127.0.0.1" in decisions[1].reason
    assert not [e for e in stopped if isinstance(e, Failed)]
    fallback = finished(stopped)
    assert (fallback.metrics.route, fallback.metrics.model) == ("fallback", "qwen2.5-coder-0.5b")
    assert fallback.metrics.completion_tokens > 1
    assert "seven" in fallback.answer.lower() or "7" in fallback.answer
