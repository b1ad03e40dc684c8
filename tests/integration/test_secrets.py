"""Keys live in a real keychain, or (only after consent) a labelled 0600 file; nowhere else."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from app.paths import Paths
from app.secrets import (
    PLAINTEXT_FILE_NAME,
    KeychainUnavailable,
    SecretStore,
    masked,
    provider_key,
)
from tests.conftest import files_containing

KEY = "sk-test-3f9a0c7e5b1d2468"


@pytest.mark.usefixtures("keychain")
def test_a_key_round_trips_through_gnome_keyring_and_no_file_holds_it(
    isolated_paths: Paths,
    tmp_path: Path,
) -> None:
    store = SecretStore.open(isolated_paths.config_dir, plaintext_consent=False)
    assert store.available
    assert not store.is_plaintext
    assert "SecretService" in store.describe()
    store.set(provider_key("openrouter"), KEY)
    assert (
        SecretStore.open(isolated_paths.config_dir, plaintext_consent=False).get(
            provider_key("openrouter")
        )
        == KEY
    )
    assert files_containing(tmp_path, KEY) == []
    store.delete(provider_key("openrouter"))
    assert store.get(provider_key("openrouter")) is None
    store.delete(provider_key("openrouter"))  # deleting twice is not an error


def test_without_a_keychain_nothing_is_stored_until_the_user_consents(
    isolated_paths: Paths,
    tmp_path: Path,
) -> None:
    store = SecretStore.open(isolated_paths.config_dir, plaintext_consent=False)
    assert not store.available
    assert "No OS keychain was found" in store.describe()
    with pytest.raises(KeychainUnavailable, match="cannot be stored securely"):
        store.set(provider_key("openrouter"), KEY)
    assert store.get(provider_key("openrouter")) is None
    assert files_containing(tmp_path, KEY) == []


def test_with_consent_keys_go_to_one_labelled_owner_only_file(
    isolated_paths: Paths, tmp_path: Path
) -> None:
    store = SecretStore.open(isolated_paths.config_dir, plaintext_consent=True)
    assert store.is_plaintext
    assert "UNENCRYPTED" in store.describe()
    store.set(provider_key("openrouter"), KEY)
    key_file = isolated_paths.config_dir / PLAINTEXT_FILE_NAME
    assert files_containing(tmp_path, KEY) == [key_file]
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert "PLAIN TEXT" in json.loads(key_file.read_text())["warning"]
    reopened = SecretStore.open(isolated_paths.config_dir, plaintext_consent=True)
    assert reopened.get(provider_key("openrouter")) == KEY
    reopened.delete(provider_key("openrouter"))
    assert files_containing(tmp_path, KEY) == []


def test_a_key_is_never_shown_back_in_full() -> None:
    assert masked(KEY) == "…2468"
    assert masked("short") == "••••"
