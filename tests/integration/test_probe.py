"""Settings' "Test connection" against real peers on 127.0.0.1."""

from __future__ import annotations

import asyncio

from app.cloud.probe import probe_provider, probe_server
from app.settings import ProviderSettings
from tests.peers.everything import everything_stdio
from tests.peers.openai_compatible import misbehaving_server


def test_a_reachable_mcp_server_reports_its_latency_and_tools() -> None:
    probe = asyncio.run(probe_server(everything_stdio(), None))
    assert probe.ok
    assert probe.latency_s > 0
    assert probe.describe().startswith("OK in ")
    assert probe.describe().endswith("tools, including 'echo'")


def test_an_unstartable_mcp_server_reports_why() -> None:
    probe = asyncio.run(probe_server(everything_stdio(command="/nowhere/server"), None))
    assert not probe.ok
    assert probe.detail == "cannot start '/nowhere/server': No such file or directory"


def test_a_provider_is_probed_through_its_models_list(llama_server: str) -> None:
    provider = ProviderSettings(name="llama", base_url=llama_server, models=["qwen-mini"])
    probe = asyncio.run(probe_provider(provider, "sk-x"))
    assert (probe.ok, probe.detail) == (True, "1 models served")
    other = provider.model_copy(update={"models": ["gpt-9"]})
    assert asyncio.run(probe_provider(other, None)).detail == (
        "reachable, but it does not list gpt-9"
    )


def test_a_provider_that_is_down_or_refuses_the_key_says_so() -> None:
    down = ProviderSettings(name="x", base_url="http://127.0.0.1:9/v1", models=["m"])
    assert asyncio.run(probe_provider(down, None)).detail == "cannot reach http://127.0.0.1:9/v1"
    with misbehaving_server() as root:
        refusing = down.model_copy(update={"base_url": f"{root}/unauthorized/v1"})
        probe = asyncio.run(probe_provider(refusing, "sk-bad"))
    assert (probe.ok, probe.detail) == (False, "the key was rejected (HTTP 401)")
