"""The local route on a model server the user runs, against llama.cpp's server on 127.0.0.1: the
answer streams from it as the local route (free, private, its TTFT and speed measured here), a
conversation's second question reuses the server's KV prefix, privacy "never" still allows it,
and a server that stops answering hands the question to the model on this computer, saying why."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.answering import Finished, RouteDecided, SourcesFound, Token
from app.answering.conversation import Conversation
from app.bootstrap import Docent
from app.paths import Paths
from app.settings import ModelServerSettings
from tests.conftest import SHARED_MODELS, docent
from tests.documents import write_pdf
from tests.integration.conftest import index_all, opened, run
from tests.peers.openai_compatible import llama_cpp_server

MODEL = SHARED_MODELS / "qwen2.5-coder-0.5b-instruct-q4.gguf"
REPORTING = Path(__file__).parent.parent / "peers" / "llama_server_usage.py"
ON_THE_SERVER = "qwen-mini on 127.0.0.1"
QUESTION = "How long are customer invoices retained?"


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

    async def scenario() -> tuple[list[list[Any]], bool, str | None]:
        async with opened() as docent:
            await index_all(docent, [write_pdf(tmp_path / "report.pdf")])
            await docent.library.embed_pending()
            turns = await converse(docent, [QUESTION, "And email archives?"])
            refusal = docent.desk.cloud_refusal()
            return turns, docent.chat.loaded, None if refusal is None else refusal.code

    before = log.read_text(errors="replace").count("prefix-match hit")
    turns, loaded_here, refusal = run(scenario())
    assert refusal == "privacy_refuses"
    assert not loaded_here  # the model on this computer was never needed
    for events in turns:
        [decided] = [event for event in events if isinstance(event, RouteDecided)]
        assert (decided.route, decided.model, decided.why and decided.why.code) == (
            "local",
            ON_THE_SERVER,
            "privacy",
        )
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
