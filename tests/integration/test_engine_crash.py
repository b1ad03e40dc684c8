"""The local model in its own process: a crash or a hang in llama.cpp costs one answer, never the
app, and says why; a crash while loading or before the first token puts the model on safe
settings, remembered on this machine. Faults are real (a segmentation fault in native code, a
child that stops answering), injected in the engine's child at a chosen point
(DOCENT_ENGINE_FAULT, app/llm/worker.py); the model is the real bundled one."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from app.catalog import Catalog
from app.llm.chat_model import chat_model_config
from app.llm.engine import (
    CancelToken,
    EngineCrashed,
    GenerationDone,
    GenerationRequest,
    Message,
    TokenGenerated,
)
from app.llm.local import LocalEngine
from app.llm.safety import SafetyMemory
from app.paths import Paths
from app.settings import Settings
from tests.conftest import docent
from tests.documents import write_pdf
from tests.integration.conftest import run
from tests.integration.test_cloud_route import configure

QUESTION = GenerationRequest(
    [
        Message("system", "Answer briefly, from the source only."),
        Message(
            "user",
            "Source: Customer invoices are kept for seven years after the end of the financial "
            "year.\n\nQuestion: How long are invoices kept?",
        ),
    ],
    max_tokens=24,
    temperature=0.0,
)
CRASHED = "the local model crashed (segmentation fault) while answering"


async def answer(engine: LocalEngine) -> str:
    text = []
    async for event in engine.stream(QUESTION, CancelToken()):
        if isinstance(event, TokenGenerated):
            text.append(event.text)
    return "".join(text)


def kept_for(answer: str) -> bool:
    """What any sane reading of the source says, whatever the CPU's rounding."""
    return "seven" in answer.lower() or "7" in answer


def engine_for(paths: Paths, stall_timeout_s: float | None = None) -> LocalEngine:
    """The bundled chat model's engine, with its safe settings remembered in `paths`."""
    config = chat_model_config(Settings().local, Catalog.load(), paths.models_dir)
    if stall_timeout_s is not None:
        config = replace(config, stall_timeout_s=stall_timeout_s)
    return LocalEngine(config, SafetyMemory(paths.engine_safety))


def fault_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, point: str) -> Path:
    flag = tmp_path / f"{point}.once"
    flag.touch()
    monkeypatch.setenv("DOCENT_ENGINE_FAULT", f"{point}@{flag}")
    return flag


def test_a_crash_before_the_first_token_fails_that_answer_and_the_restart_answers_safely(
    isolated_paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every start with the normal settings crashes before its first token (as the AMX
    # repacking did on Sapphire Rapids): one answer fails, then safe settings take over.
    monkeypatch.setenv("DOCENT_ENGINE_FAULT", "first-token")

    async def scenario() -> None:
        engine = engine_for(isolated_paths)
        await engine.start()
        assert engine.state is not None
        assert engine.state.safe_mode is None
        with pytest.raises(EngineCrashed) as crash:
            await answer(engine)
        assert str(crash.value) == CRASHED
        notice = engine.take_notice()
        assert notice is not None
        assert "crashed (segmentation fault) before its first token on this computer" in notice
        assert "safe settings (weight repacking off)" in notice
        assert engine.take_notice() is None  # told once
        assert kept_for(await answer(engine))  # the restarted child, safe settings
        assert engine.state.safe_mode is not None
        assert engine.state.safe_mode.level == 1
        await engine.close()
        # Remembered on this machine: the next start (a new session) does not crash first.
        again = engine_for(isolated_paths)
        await again.start()
        assert kept_for(await answer(again))
        assert again.take_notice() is None
        await again.close()

    run(scenario())
    stored = json.loads(isolated_paths.engine_safety.read_text())
    (models,) = stored.values()
    assert models["qwen2.5-coder-0.5b"]["level"] == 1


def test_a_crash_mid_answer_changes_no_setting_and_the_next_question_is_answered(
    isolated_paths: Paths, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fault_once(monkeypatch, tmp_path, "mid-answer")

    async def scenario() -> None:
        engine = engine_for(isolated_paths)
        await engine.start()
        with pytest.raises(EngineCrashed, match="segmentation fault"):
            await answer(engine)
        assert engine.take_notice() is None
        assert kept_for(await answer(engine))
        assert engine.state is not None
        assert engine.state.safe_mode is None
        await engine.close()

    run(scenario())


def test_a_child_that_stops_answering_is_killed_and_replaced(
    isolated_paths: Paths, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fault_once(monkeypatch, tmp_path, "hang")

    async def scenario() -> None:
        engine = engine_for(isolated_paths, stall_timeout_s=10)
        await engine.start()
        with pytest.raises(EngineCrashed) as stalled:
            await answer(engine)
        assert str(stalled.value) == (
            "the local model stopped responding (nothing for 10 s) while answering"
        )
        assert kept_for(await answer(engine))
        await engine.close()

    run(scenario())


def test_stop_reaches_the_child_between_two_tokens(isolated_paths: Paths) -> None:
    async def scenario() -> GenerationDone:
        engine = engine_for(isolated_paths)
        await engine.start()
        cancel = CancelToken()
        long = replace(QUESTION, max_tokens=200)
        done = None
        tokens = 0
        async for event in engine.stream(long, cancel):
            if isinstance(event, TokenGenerated):
                tokens += 1
                if tokens == 2:
                    cancel.cancel()
            elif isinstance(event, GenerationDone):
                done = event
        # The same child answers the next question: nothing of the stopped one is left over.
        assert kept_for(await answer(engine))
        await engine.close()
        assert done is not None
        return done

    done = run(scenario())
    assert done.finish_reason == "cancelled"
    assert done.completion_tokens <= 3


def test_the_cli_says_why_and_exits_non_zero(
    isolated_paths: Paths, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert docent("index", str(write_pdf(tmp_path / "report.pdf"))).returncode == 0
    monkeypatch.setenv("DOCENT_ENGINE_FAULT", "mid-answer")
    asked = docent("ask", "How long are invoices kept?")
    assert asked.returncode == 1
    assert f"docent: {CRASHED}" in asked.stderr
    as_json = docent("ask", "--json", "How long are invoices kept?")
    assert as_json.returncode == 1
    assert json.loads(as_json.stdout)["error"] == CRASHED


def test_a_crash_on_load_switches_to_safe_settings_and_the_second_start_answers(
    isolated_paths: Paths, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert docent("index", str(write_pdf(tmp_path / "report.pdf"))).returncode == 0
    monkeypatch.setenv("DOCENT_ENGINE_FAULT", "load")  # every start with the normal settings
    first = docent("ask", "--json", "How long are invoices kept?")
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)
    assert kept_for(result["answer"])
    assert "crashed (segmentation fault) while loading on this computer" in result["notice"]
    models = docent("models")
    assert models.returncode == 0, models.stderr
    assert "llama.cpp here: CPU, " in models.stdout
    assert "qwen2.5-coder-0.5b: safe settings since " in models.stdout
    assert "(weight repacking off): it crashed (segmentation fault) while loading" in models.stdout
    second = docent("ask", "--json", "How long are invoices kept?")
    assert second.returncode == 0, second.stderr
    assert "notice" not in json.loads(second.stdout)  # told once


def test_a_crash_is_retried_in_the_cloud_where_the_user_allows_it(
    isolated_paths: Paths, llama_server: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    configure(isolated_paths, llama_server)
    assert docent("index", str(write_pdf(tmp_path / "report.pdf"))).returncode == 0
    monkeypatch.setenv("DOCENT_ENGINE_FAULT", "mid-answer")
    asked = docent("ask", "--json", "How long are invoices kept?")
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    assert [(r["route"], r["model"]) for r in result["routes"]] == [
        ("local", "qwen2.5-coder-0.5b"),
        ("fallback", "llama/qwen-mini"),
    ]
    assert result["route"]["reason"] == f"{CRASHED}; the cloud answered instead"
    assert kept_for(result["answer"])
    assert result["metrics"]["route"] == "fallback"

    settings = json.loads(isolated_paths.settings_file.read_text())
    settings["routing"] = {"mode": "local"}  # this computer only: nothing goes to the cloud
    isolated_paths.settings_file.write_text(json.dumps(settings))
    local_only = docent("ask", "--json", "How long are invoices kept?")
    assert local_only.returncode == 1
    assert json.loads(local_only.stdout)["error"] == CRASHED


def test_engines_answering_at_once_do_not_share_a_crash(
    isolated_paths: Paths, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Three engines answer at once (the window, its MCP server, the speed check); one child
    crashes mid-answer and the other two finish."""
    flag = fault_once(monkeypatch, tmp_path, "mid-answer")

    async def scenario() -> list[str | BaseException]:
        engines = [engine_for(isolated_paths) for _ in range(3)]
        await asyncio.gather(*(engine.start() for engine in engines))
        try:
            results = await asyncio.gather(
                *(answer(engine) for engine in engines), return_exceptions=True
            )
        finally:
            await asyncio.gather(*(engine.close() for engine in engines))
        return results

    results = run(scenario())
    assert not flag.exists()
    crashed = [r for r in results if isinstance(r, EngineCrashed)]
    answered = [r for r in results if isinstance(r, str)]
    assert len(crashed) == 1
    assert len(answered) == 2
    assert all(kept_for(text) for text in answered)
