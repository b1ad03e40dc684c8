"""OAuth tokens and client registrations live in the keychain (a real, private GNOME Keyring) and
nowhere else; the desktop sign-in receives its answer on 127.0.0.1."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx2
import pytest
from mcp.client.auth import OAuthFlowError
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyUrl

from app.cloud.oauth import KeychainTokenStorage, LoopbackCallback, tokens_key
from app.paths import Paths
from app.processes import free_loopback_port
from app.secrets import SecretStore
from tests.conftest import files_containing

ACCESS = "at-5c1e0a9b7d3f4e26a8b0"
REFRESH = "rt-9e2d4b6a8c0f1e3d5a7b"
CLIENT_SECRET = "cs-0f8e6d4c2b1a9e7d5c3b"
REDIRECT_URI = "http://127.0.0.1:33418/callback"


@pytest.mark.usefixtures("keychain")
def test_tokens_and_registration_round_trip_through_the_keychain_and_no_file_holds_them(
    isolated_paths: Paths, tmp_path: Path
) -> None:
    tokens = OAuthToken(
        access_token=ACCESS, refresh_token=REFRESH, expires_in=3600, scope="mcp:basic mcp:write"
    )
    client = OAuthClientInformationFull(
        client_id="docent-client-1",
        client_secret=CLIENT_SECRET,
        redirect_uris=[AnyUrl(REDIRECT_URI)],
        token_endpoint_auth_method="client_secret_basic",
    )

    def opened() -> SecretStore:
        store = SecretStore.open(isolated_paths.config_dir, plaintext_consent=False)
        assert store.available
        assert not store.is_plaintext
        return store

    async def scenario() -> None:
        storage = KeychainTokenStorage(opened(), "work")
        assert await storage.get_tokens() is None
        assert await storage.get_client_info() is None
        await storage.set_tokens(tokens)
        await storage.set_client_info(client)

        # As after a restart: a new store, a new storage object.
        again = KeychainTokenStorage(opened(), "work")
        assert await again.get_tokens() == tokens
        assert await again.get_client_info() == client
        assert await KeychainTokenStorage(opened(), "other").get_tokens() is None  # per server

        await again.forget()
        assert await storage.get_tokens() is None
        assert await storage.get_client_info() is None
        await again.forget()  # forgetting twice is not an error

    asyncio.run(scenario())
    for secret in (ACCESS, REFRESH, CLIENT_SECRET):
        assert files_containing(tmp_path, secret) == []


@pytest.mark.usefixtures("keychain")
def test_an_unreadable_record_reads_as_signed_out_without_quoting_it(
    isolated_paths: Paths,
) -> None:
    store = SecretStore.open(isolated_paths.config_dir, plaintext_consent=False)
    store.set(tokens_key("work"), f'{{"access_token": "{ACCESS}", "token_type": "Mac"}}')
    assert asyncio.run(KeychainTokenStorage(store, "work").get_tokens()) is None


def test_the_loopback_callback_receives_the_code_then_stops_listening() -> None:
    async def scenario() -> None:
        opened: list[str] = []
        callback = LoopbackCallback(free_loopback_port(), open_url=opened.append, timeout_s=10)
        await callback.redirect("https://auth.example/authorize?client_id=docent")
        assert opened == ["https://auth.example/authorize?client_id=docent"]
        async with httpx2.AsyncClient(timeout=10) as browser:
            stray = await browser.get(callback.redirect_uri.replace("/callback", "/favicon.ico"))
            assert stray.status_code == 404
            answer = await browser.get(
                callback.redirect_uri, params={"code": "c0de", "state": "st4te"}
            )
            assert answer.status_code == 200
            assert "Signed in" in answer.text
            result = await callback.callback()
            assert (result.code, result.state, result.iss) == ("c0de", "st4te", None)
            with pytest.raises(httpx2.ConnectError):
                await browser.get(callback.redirect_uri, params={"code": "again"})

    asyncio.run(scenario())


def test_a_refused_sign_in_fails_the_flow_with_the_reason() -> None:
    async def scenario() -> None:
        callback = LoopbackCallback(free_loopback_port(), open_url=lambda url: None, timeout_s=10)
        await callback.redirect("https://auth.example/authorize")
        async with httpx2.AsyncClient(timeout=10) as browser:
            answer = await browser.get(callback.redirect_uri, params={"error": "access_denied"})
        assert answer.status_code == 400
        with pytest.raises(OAuthFlowError, match="refused: access_denied"):
            await callback.callback()

    asyncio.run(scenario())


def test_no_answer_from_the_browser_times_out() -> None:
    async def scenario() -> None:
        callback = LoopbackCallback(free_loopback_port(), open_url=lambda url: None, timeout_s=0.05)
        await callback.redirect("https://auth.example/authorize")
        with pytest.raises(OAuthFlowError, match="no sign-in answer"):
            await callback.callback()

    asyncio.run(scenario())
