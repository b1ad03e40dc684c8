"""The model-server route's settings, names and token counts, without a server."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from app.catalog import Catalog
from app.llm.chat_model import LocalChatModel
from app.llm.openai_stream import Counts, StreamEnd, counts
from app.llm.server_model import ServerEngine
from app.llm.server_names import served_on, server_model_name
from app.paths import Paths
from app.settings import LocalModelSettings, ModelServerSettings

ON_A_SERVER = {"enabled": True, "base_url": "http://192.168.1.5:8080/v1/", "model": "qwen-mini"}


def test_a_server_is_named_by_its_model_and_host_and_read_back() -> None:
    server = ModelServerSettings.model_validate(ON_A_SERVER)
    assert server.base_url == "http://192.168.1.5:8080/v1"
    assert server_model_name(server) == "qwen-mini on 192.168.1.5"
    assert served_on("qwen-mini on 192.168.1.5") == ("qwen-mini", "192.168.1.5")
    assert served_on("Qwen/Qwen2.5-7B-Instruct on gpu-box.lan") == (
        "Qwen/Qwen2.5-7B-Instruct",
        "gpu-box.lan",
    )
    assert served_on("qwen2.5-coder-0.5b") is None  # a model on this computer


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"enabled": True, "model": "m"}, "a model server needs its base URL"),
        ({"enabled": True, "base_url": "http://h/v1"}, "a model server needs the name of"),
        ({"base_url": "ftp://h/v1"}, "must be an http:// or https:// URL"),
        ({"base_url": "http://me:secret@h/v1"}, "holds a user name or password"),
        ({"base_url": "http://h/v1?api_key=abc"}, "looks like a credential"),
    ],
)
def test_a_server_setting_that_cannot_work_or_holds_a_key_is_refused(
    values: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message) as refused:
        ModelServerSettings.model_validate(values)
    assert "secret" not in str(refused.value)  # never repeats a value it was given


def test_without_a_server_the_local_route_runs_on_this_computer(isolated_paths: Paths) -> None:
    assert not LocalModelSettings().server.enabled
    model = LocalChatModel(LocalModelSettings(), Catalog.load(), isolated_paths.models_dir)
    assert model.shown == "qwen2.5-coder-0.5b"


def test_the_server_engine_is_made_with_the_keychains_key_once(isolated_paths: Paths) -> None:
    asked: list[str] = []

    async def key() -> str:
        asked.append("key")
        return "sk-model-server-0123456789"

    settings = LocalModelSettings(server=ModelServerSettings.model_validate(ON_A_SERVER))
    model = LocalChatModel(settings, Catalog.load(), isolated_paths.models_dir, server_key=key)

    async def scenario() -> tuple[object, object, object]:
        first, again = await asyncio.gather(model.engine(), model.engine())
        await model.apply(settings)  # reached anew: the key may have changed
        later = await model.engine()
        await model.unload()
        return first, again, later

    first, again, later = asyncio.run(scenario())
    assert isinstance(first, ServerEngine)
    assert first is again
    assert later is not first
    assert (first.route, first.model) == ("local", "qwen-mini on 192.168.1.5")
    assert model.shown == "qwen-mini on 192.168.1.5"
    assert "sk-model" not in repr(first._endpoint)
    assert asked == ["key", "key"]  # once for each engine made
    assert not model.loaded  # the model on this computer was not loaded


def end(usage: dict[str, object] | None, timings: dict[str, object] | None = None) -> StreamEnd:
    return StreamEnd("stop", "m", chunks=5, usage=usage, timings=timings)


def test_the_servers_usage_and_its_cache_share_are_read_as_each_server_says_them() -> None:
    openai = {"prompt_tokens": 284, "completion_tokens": 15}
    details = openai | {"prompt_tokens_details": {"cached_tokens": 268}}
    assert counts(end(details), ["x"]) == Counts(284, 15, 268, estimated=False)
    llama_cpp = end(openai, {"cache_n": 250, "prompt_n": 34})
    assert counts(llama_cpp, ["x"]).cached_tokens == 250
    assert counts(end(openai), ["x"]).cached_tokens == 0  # not said: nothing invented
    estimated = counts(end(None), ["How long are invoices kept?"])
    assert (estimated.completion_tokens, estimated.cached_tokens, estimated.estimated) == (
        5,
        0,
        True,
    )
    assert estimated.prompt_tokens > 0
