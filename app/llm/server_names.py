"""How a model on a server the user runs is named ("qwen-mini on 192.168.1.5"): apart from the
engine, so that the window can name it without loading an HTTP client."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from app.settings import ModelServerSettings

_SERVED_ON = re.compile(r"^(?P<model>.+) on (?P<host>[^\s]+)$")


def server_host(base_url: str) -> str:
    """The server as the badge names it: its host name or address."""
    return urlsplit(base_url).hostname or base_url


def server_model_name(settings: ModelServerSettings) -> str:
    """ "qwen-mini on 192.168.1.5": the model, and where it runs."""
    return f"{settings.model} on {server_host(settings.base_url)}"


def served_on(model: str) -> tuple[str, str] | None:
    """(model, host) of a name `server_model_name` wrote; None for a model on this computer."""
    match = _SERVED_ON.match(model)
    return None if match is None else (match["model"], match["host"])
