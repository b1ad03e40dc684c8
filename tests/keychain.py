"""A real Secret Service keychain for tests: a private D-Bus session and gnome-keyring-daemon,
both started (and stopped) by PID, so no test ever touches the user's own keychain."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from jeepney import MatchRule, message_bus
from jeepney.io.blocking import open_dbus_connection

INSTALL_HINT = "the keychain tests need gnome-keyring and dbus-daemon (apt install gnome-keyring)"


def _stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _start_daemon_and_await_its_bus_name(
    address: str, environment: dict[str, str]
) -> subprocess.Popen[str]:
    """Start the daemon with an unlocked login keyring; return once it owns its bus name."""
    owner_changed = MatchRule(
        type="signal",
        sender=message_bus.bus_name,
        interface=message_bus.interface,
        member="NameOwnerChanged",
        path=message_bus.object_path,
    )
    owner_changed.add_arg_condition(0, "org.freedesktop.secrets")
    with open_dbus_connection(bus=address) as connection:
        connection.send_and_get_reply(message_bus.AddMatch(owner_changed))
        with connection.filter(owner_changed) as signals:
            daemon = subprocess.Popen(
                ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=environment,
                text=True,
            )
            assert daemon.stdin is not None
            daemon.stdin.write("login-password-of-the-test-keyring\n")
            daemon.stdin.close()
            connection.recv_until_filtered(signals, timeout=20)
    return daemon


@contextmanager
def gnome_keyring(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for program in ("dbus-daemon", "gnome-keyring-daemon"):
        if shutil.which(program) is None:
            pytest.fail(f"{program} is missing: {INSTALL_HINT}")
    runtime = folder / "runtime"
    runtime.mkdir(mode=0o700, parents=True)
    environment = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), XDG_DATA_HOME=str(folder))
    bus = subprocess.Popen(
        ["dbus-daemon", "--session", "--nofork", "--print-address=1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment,
        text=True,
    )
    try:
        assert bus.stdout is not None
        address = bus.stdout.readline().strip()
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        daemon = _start_daemon_and_await_its_bus_name(address, environment)
        try:
            monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
            monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
            monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.SecretService.Keyring")
            yield
        finally:
            _stop(daemon)
    finally:
        _stop(bus)
