"""Cloud keys: in the OS keychain through `keyring`, or — only with the user's explicit consent,
where no keychain exists — in one clearly labelled, owner-only plain-text file.

Keys are named `provider:<name>`, `server:<name>` and `model-server` (the local model's server).
They never reach settings files, logs or exception messages; the UI only ever shows
`masked(key)`. Every call may block on D-Bus or the disk (tens of ms): callers on an event loop
run them in a thread.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import keyring.backend
import keyring.core
from jaraco.classes.properties import classproperty
from keyring.backends import chainer, fail
from keyring.errors import KeyringError, PasswordDeleteError

from app.errors import DocentError

SERVICE = "docent"
PLAINTEXT_FILE_NAME = "UNENCRYPTED-docent-keys.json"
_WARNING = (
    "Docent API keys in PLAIN TEXT, not encrypted. This file exists because no OS keychain was "
    "found and you agreed to keep keys here; it is readable only by your user (mode 0600). "
    "Delete it to forget every key."
)


class KeychainUnavailable(DocentError):
    """No keychain exists and the user has not agreed to the plain-text file."""


class SecretStoreError(DocentError):
    """The keychain refused or failed an operation."""


def provider_key(name: str) -> str:
    return f"provider:{name}"


def server_key(name: str) -> str:
    return f"server:{name}"


def model_server_key() -> str:
    """The key of the model server the local route answers on (Settings → Local model)."""
    return "model-server"


def masked(secret: str) -> str:
    """Enough to recognise a key, never enough to use it."""
    return f"…{secret[-4:]}" if len(secret) >= 12 else "••••"


class PlaintextFileKeyring(keyring.backend.KeyringBackend):
    """The consented fallback: a JSON file created 0600, with a warning inside it."""

    @classproperty
    def priority(cls) -> float:
        # Never chosen by keyring's own detection: only SecretStore uses it, after consent.
        raise RuntimeError("used only with the user's explicit consent")

    def __init__(self, path: Path) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.path = path

    def _read(self) -> dict[str, str]:
        try:
            raw: Any = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            raise SecretStoreError(f"cannot read the key file {self.path}: {error}") from None
        keys = raw.get("keys") if isinstance(raw, dict) else None
        return {str(name): str(value) for name, value in (keys or {}).items()}

    def _write(self, keys: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        # Created 0600 from the first byte: no window in which another user could read it.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            updated = datetime.now(UTC).isoformat(timespec="seconds")
            json.dump({"warning": _WARNING, "updated": updated, "keys": keys}, handle, indent=2)
        os.replace(temporary, self.path)

    def get_password(self, service: str, username: str) -> str | None:
        return self._read().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        keys = self._read()
        keys[f"{service}/{username}"] = password
        self._write(keys)

    def delete_password(self, service: str, username: str) -> None:
        keys = self._read()
        if keys.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError("no such key")
        self._write(keys)


def system_keychain() -> keyring.backend.KeyringBackend | None:
    """The OS keychain, detected afresh (keyring's own detection is cached per process).

    Honours `PYTHON_KEYRING_BACKEND` and keyringrc (where `fail.Keyring` means "none").
    Backends keyring rates below 1 (plain-text and other "not recommended" ones) do not count as
    a keychain: they would be a silent plain-text fallback.
    """
    chosen = keyring.core.load_env() or keyring.core.load_config()
    if chosen is not None:
        return None if isinstance(chosen, fail.Keyring) else chosen
    keyring.backend._load_plugins()  # entry-point backends (e.g. kwallet); idempotent
    candidates = [
        cls
        for cls in keyring.backend.KeyringBackend.get_viable_backends()
        if cls not in (fail.Keyring, chainer.ChainerBackend) and cls.priority >= 1
    ]
    if not candidates:
        return None
    return max(candidates, key=lambda cls: cls.priority)()


class SecretStore:
    """Get, set and delete Docent's keys in whichever store the user has."""

    def __init__(self, backend: keyring.backend.KeyringBackend | None, fallback_file: Path) -> None:
        self.backend = backend
        self.fallback_file = fallback_file

    @classmethod
    def open(cls, config_dir: Path, *, plaintext_consent: bool) -> SecretStore:
        fallback_file = config_dir / PLAINTEXT_FILE_NAME
        backend = system_keychain()
        if backend is None and plaintext_consent:
            backend = PlaintextFileKeyring(fallback_file)
        return cls(backend, fallback_file)

    @property
    def available(self) -> bool:
        return self.backend is not None

    @property
    def is_plaintext(self) -> bool:
        return isinstance(self.backend, PlaintextFileKeyring)

    def describe(self) -> str:
        if self.backend is None:
            return (
                "No OS keychain was found (on Linux: no Secret Service such as GNOME Keyring or "
                "KWallet on the session D-Bus), so keys cannot be stored securely."
            )
        if isinstance(self.backend, PlaintextFileKeyring):
            return f"Keys are kept UNENCRYPTED in {self.backend.path} (owner-only, 0600)."
        return f"Keys are kept in the OS keychain ({self.backend.name})."

    def where(self) -> str:
        """Where a stored secret is, in words ("in the OS keychain", "in FILE, unencrypted")."""
        if isinstance(self.backend, PlaintextFileKeyring):
            return f"in {self.backend.path} (unencrypted, owner-only)"
        return "in the OS keychain"

    def _backend(self) -> keyring.backend.KeyringBackend:
        if self.backend is None:
            raise KeychainUnavailable(self.describe())
        return self.backend

    def get(self, name: str) -> str | None:
        if self.backend is None:
            return None
        try:
            return self.backend.get_password(SERVICE, name)
        except KeyringError as error:
            raise SecretStoreError(f"the keychain could not read {name}: {error}") from None

    def set(self, name: str, secret: str) -> None:
        try:
            self._backend().set_password(SERVICE, name, secret)
        except KeyringError as error:
            # `from None`: the backend's exception could carry the secret in its arguments.
            raise SecretStoreError(f"the keychain could not store {name}: {error}") from None

    def delete(self, name: str) -> None:
        try:
            self._backend().delete_password(SERVICE, name)
        except PasswordDeleteError:
            pass  # already gone
        except KeyringError as error:
            raise SecretStoreError(f"the keychain could not delete {name}: {error}") from None
