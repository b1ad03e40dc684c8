"""Typed, described, versioned settings, stored as JSON in the config folder.

Secrets never live here: cloud keys go to the OS keychain (`app.secrets`), and header,
environment, argument and URL entries that look like credentials are refused with a pointer to
the key field. No error ever repeats a value it was given (it may be a key).
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from app.errors import DocentError
from app.paths import write_private

SETTINGS_VERSION = 1


class SettingsError(DocentError):
    """The settings file cannot be read or holds an invalid value."""


class _Section(BaseModel):
    # hide_input_in_errors: a ValidationError printed anywhere never carries a value.
    model_config = ConfigDict(extra="forbid", validate_assignment=True, hide_input_in_errors=True)


class ModelServerSettings(_Section):
    """A model server the user runs (llama.cpp's server, vLLM, Ollama, LM Studio): the local
    route answers there, as privately as on this computer; its key is in the keychain."""

    enabled: bool = Field(
        False, description="Answer with the model on this server instead of on this computer."
    )
    base_url: str = Field(
        "", description="OpenAI-compatible base URL, ending before /chat/completions (…/v1)."
    )
    model: str = Field("", description="The model name the server serves.")
    connect_timeout_s: float = Field(
        5.0,
        gt=0,
        le=600,
        description="How long to wait for the server to accept the connection before the "
        "answer is written on this computer instead.",
    )
    first_token_timeout_s: float = Field(
        120.0,
        gt=0,
        le=3600,
        description="How long to wait for the first token (and between two tokens).",
    )

    @field_validator("base_url")
    @classmethod
    def _base_url_is_http(cls, url: str) -> str:
        return _http_url(url) if url else url

    @model_validator(mode="after")
    def _enabled_needs_its_target(self) -> ModelServerSettings:
        if self.enabled and not self.base_url:
            raise ValueError("a model server needs its base URL")
        if self.enabled and not self.model.strip():
            raise ValueError("a model server needs the name of its model")
        return self


class LocalModelSettings(_Section):
    chat_model: str = Field(
        "qwen2.5-coder-0.5b",
        description="A model name from the catalog, or the path of any GGUF file.",
    )
    n_threads: int | None = Field(
        None, ge=1, le=512, description="CPU threads for inference; empty = the CPU's cores."
    )
    n_ctx: int = Field(4096, ge=512, le=262144, description="Context window in tokens.")
    n_gpu_layers: int = Field(
        0, ge=-1, description="Layers offloaded to Metal/CUDA builds; -1 = all, 0 = CPU only."
    )
    max_tokens: int = Field(384, ge=16, le=8192, description="Longest answer, in tokens.")
    temperature: float = Field(
        0.0, ge=0.0, le=2.0, description="Sampling temperature; 0 answers greedily from sources."
    )
    server: ModelServerSettings = Field(
        default_factory=ModelServerSettings,
        description="A model server you run, answering as the local model (it falls back to "
        "the model on this computer when the server is down).",
    )


class RetrievalSettings(_Section):
    top_k: int = Field(4, ge=1, le=20, description="Passages given to the model per question.")
    context_tokens: int = Field(
        1200,
        ge=128,
        le=32768,
        description="Budget of source text per prompt; on CPU, prompt length dominates TTFT.",
    )


NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,31}$"
# Names of headers, variables, options and URL parameters that carry credentials: OPENROUTER_KEY,
# Ocp-Apim-Subscription-Key, X-Api-Key, Cookie, --token, ?access_token=, ?key=, … (a name that
# only ends in a word like key, token, auth or pat: MAX_TOKENS and --tokenizer are not).
_CREDENTIAL_NAME = re.compile(
    r"authorization|api[_-]?key|secret|passw(or)?d|credential|cookie|bearer"
    r"|(^|[_.-])(key|token|auth|pat)$",
    re.IGNORECASE,
)
# Values that are keys whatever they are called: OpenAI/Anthropic-style sk-…, GitHub, Slack, AWS.
_CREDENTIAL_VALUE = re.compile(
    r"^(bearer\s+\S+|sk-[\w-]{16,}|gh[pousr]_\w{20,}|xox[abpr]-[\w-]{10,}|AKIA[0-9A-Z]{16})$",
    re.IGNORECASE,
)
_KEY_FIELD = (
    "put it in the key field instead (keys are kept in the keychain, never in the settings file)"
)


# A header written as one value ("Authorization: Bearer …", as curl's -H takes it), and a URL
# with a user and password in it (postgres://user:password@host).
_HEADER_LINE = re.compile(r"^\s*([\w-]+)\s*:\s*(\S.*)$")
_URL_PASSWORD = re.compile(r"://[^/\s:@]+:[^/\s@]+@")


def _is_credential_value(value: str) -> bool:
    """A value that holds a key whatever the name it comes under."""
    value = value.strip()
    if _CREDENTIAL_VALUE.match(value) or _URL_PASSWORD.search(value):
        return True
    header = _HEADER_LINE.match(value)
    return header is not None and (
        _CREDENTIAL_NAME.search(header[1]) is not None or _is_credential_value(header[2])
    )


def _refuse_credentials(entries: dict[str, str], what: str) -> dict[str, str]:
    for name, value in entries.items():
        if _CREDENTIAL_NAME.search(name) or _is_credential_value(value):
            raise ValueError(f"{what} {name!r} looks like a credential; {_KEY_FIELD}")
    return entries


def _refuse_credential_arguments(arguments: list[str]) -> list[str]:
    """A key in a command line is visible to every user in `ps`, and lands in this file."""
    for position, argument in enumerate(arguments, start=1):
        option = argument.split("=", 1)[0]
        if (
            option == "-k"  # the usual short form of --key and --api-key
            or (option.startswith("-") and _CREDENTIAL_NAME.search(option.lstrip("-")))
            or _is_credential_value(argument)
            or _is_credential_value(argument.split("=", 1)[-1])
        ):
            raise ValueError(
                f"argument {position} looks like a credential (and every process could read "
                f"it in the command line); {_KEY_FIELD}, and name the environment variable "
                "that receives it"
            )
    return arguments


def _http_url(url: str) -> str:
    if not re.match(r"^https?://[^/\s]+", url):
        raise ValueError("must be an http:// or https:// URL")
    parts = urlsplit(url)
    if "@" in parts.netloc:  # user:password@, or a token as the user name (as git hosts take it)
        raise ValueError(f"holds a user name or password; {_KEY_FIELD}")
    # The fragment too: OAuth's implicit grant hands out #access_token=….
    for name, _ in parse_qsl(f"{parts.query}&{parts.fragment}", keep_blank_values=True):
        if _CREDENTIAL_NAME.search(name):
            raise ValueError(f"its query parameter {name!r} looks like a credential; {_KEY_FIELD}")
    return url.rstrip("/")


class ProviderSettings(_Section):
    """An OpenAI-compatible endpoint, reached through Docent's own MCP gateway."""

    name: str = Field(pattern=NAME_PATTERN, description="Short name, e.g. openrouter.")
    base_url: str = Field(description="Base URL ending before /chat/completions, e.g. …/v1.")
    models: list[str] = Field(min_length=1, description="Model names this provider serves.")

    @field_validator("base_url")
    @classmethod
    def _base_url_is_http(cls, url: str) -> str:
        return _http_url(url)


class ToolArguments(_Section):
    """How a chat request maps onto a server's tool arguments; empty = not sent."""

    messages: str = "messages"
    prompt: str = ""
    model: str = "model"
    max_tokens: str = "max_tokens"
    temperature: str = "temperature"


class McpServerSettings(_Section):
    """Any MCP server whose tool runs a chat completion, in the shape other MCP clients use."""

    name: str = Field(pattern=NAME_PATTERN)
    transport: Literal["stdio", "streamable-http", "sse"] = "stdio"
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    key_env: str = Field(
        "", description="stdio: the environment variable that receives the keychain-held key."
    )
    chat_tool: str = Field("chat", min_length=1)
    arguments: ToolArguments = Field(default_factory=ToolArguments)
    models: list[str] = Field(min_length=1)
    enabled: bool = True
    connect_timeout_s: float = Field(20.0, gt=0, le=600)
    first_token_timeout_s: float = Field(
        30.0,
        ge=0,
        le=3600,
        description="Deadline for the first partial text; 0 = the server "
        "does not stream (its answer arrives whole).",
    )
    timeout_s: float = Field(300.0, gt=0, le=3600, description="Longest whole answer.")
    footer_line: str = Field(
        "",
        description='A line the server puts between the answer and its own notes ("---"): '
        "the last such line and what follows are not shown.",
    )
    progress: Literal["auto", "text", "status"] = Field(
        "auto",
        description="What its progress messages carry: text (the answer as it is written), "
        "status (shown beside the answer; the answer is the tool's result), or auto: "
        "learnt from its first answer.",
    )

    @field_validator("env")
    @classmethod
    def _env_without_credentials(cls, env: dict[str, str]) -> dict[str, str]:
        return _refuse_credentials(env, "environment variable")

    @field_validator("args")
    @classmethod
    def _args_without_credentials(cls, args: list[str]) -> list[str]:
        return _refuse_credential_arguments(args)

    @field_validator("headers")
    @classmethod
    def _headers_without_credentials(cls, headers: dict[str, str]) -> dict[str, str]:
        return _refuse_credentials(headers, "header")

    @model_validator(mode="after")
    def _transport_needs_its_target(self) -> McpServerSettings:
        if self.transport == "stdio" and not self.command.strip():
            raise ValueError("a stdio server needs a command")
        if self.transport != "stdio":
            _http_url(self.url)
        return self


class RoutingSettings(_Section):
    mode: Literal["auto", "local", "cloud"] = Field(
        "auto", description="auto: the router picks per question; or always local / cloud."
    )
    privacy: Literal["never", "excerpts", "standard"] = Field(
        "excerpts",
        description="never: nothing leaves the machine; excerpts: only the question and the "
        "retrieved excerpts (no file names or history); standard: also document titles.",
    )
    monthly_budget_usd: float = Field(5.0, ge=0.0, le=100000.0)
    cache_ttl_s: int = Field(300, ge=0, le=86400, description="Answer cache lifetime; 0 = off.")
    cascade: bool = Field(
        False, description="Answer locally first; escalate with the draft when the check fails."
    )
    topic_models: dict[str, str] = Field(
        default_factory=dict, description="Topic (math, code, …) → cloud model."
    )


class CloudSettings(_Section):
    providers: list[ProviderSettings] = Field(default_factory=list)
    servers: list[McpServerSettings] = Field(default_factory=list)

    @property
    def configured(self) -> bool:
        """Whether any cloud route is set up (a provider or an MCP server)."""
        return bool(self.providers or self.servers)

    @model_validator(mode="after")
    def _unique_names(self) -> CloudSettings:
        names = [item.name for item in self.providers] + [item.name for item in self.servers]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"names must be unique: {', '.join(duplicates)}")
        return self


DEFAULT_MCP_PORT = 8765


class ServeMcpSettings(_Section):
    """Docent's own MCP server (`docent serve-mcp`), run in the background of the desktop app."""

    enabled: bool = Field(
        False,
        description="While the app runs, serve the library to other MCP clients over "
        "Streamable HTTP on 127.0.0.1.",
    )
    port: int = Field(DEFAULT_MCP_PORT, ge=1024, le=65535, description="The port on 127.0.0.1.")


SHARED_SCHEMES = ("postgresql", "postgres")


def is_shared_url(location: str) -> bool:
    """A shared library's URL (app.index.shared), as against a local path."""
    return urlsplit(location).scheme in SHARED_SCHEMES


class LibrarySettings(_Section):
    shared_url: str = Field(
        "",
        description="A shared library on PostgreSQL (postgresql://user@host/database; the "
        "password in the keychain): the window, the command line and the MCP server read and "
        "index the documents there. Empty: the library on this computer.",
    )
    watched_folders: list[str] = Field(
        default_factory=list,
        description="Folders whose documents are indexed, re-indexed and removed as they change "
        "(also changes made while Docent was closed).",
    )
    parse_timeout_s: float = Field(
        120.0,
        ge=5.0,
        le=86400.0,
        description="Longest time one document may take to read; then it fails and the next "
        "one is read.",
    )
    parse_memory_mb: int = Field(
        1024,
        ge=256,
        le=1048576,
        description="Most memory the document reader may use for one document.",
    )
    max_unpacked_mb: int = Field(
        100,
        ge=1,
        le=1048576,
        description="Most an archive-based document (EPUB, XPS, DOCX, PPTX, XLSX) may inflate "
        "to when it inflates far beyond its packed size (a zip bomb).",
    )

    @field_validator("shared_url")
    @classmethod
    def _shared_url_without_password(cls, url: str) -> str:
        url = url.strip()
        if not url:
            return ""
        if not is_shared_url(url):
            raise ValueError("a shared library is a postgresql://user@host/database URL")
        parts = urlsplit(url)
        try:
            parts.port  # noqa: B018 - read for the ValueError a port that is not a number raises
        except ValueError:
            raise ValueError("not a valid postgresql:// URL: its port is not a number") from None
        if parts.password:  # an empty one ("user:@host") keeps nothing secret
            raise ValueError(
                "keep the password out of the URL: type it in the Password field, which keeps "
                "it in the keychain"
            )
        return url

    @field_validator("watched_folders")
    @classmethod
    def _absolute_folders(cls, folders: list[str]) -> list[str]:
        expanded = [str(Path(folder).expanduser()) for folder in folders]
        for folder in expanded:
            if not Path(folder).is_absolute():
                raise ValueError(f"{folder!r} must be an absolute path")
        return list(dict.fromkeys(expanded))


class SecretSettings(_Section):
    plaintext_file_consent: bool = Field(
        False,
        description="Where no keychain exists, the user agreed to keep keys in a labelled "
        "owner-only (0600) plain-text file.",
    )


class SpeedCheck(_Section):
    """This computer's measured speed with the bundled chat model, and the chat model chosen
    from it (app/llm/speed.py): measured at first run, or again from Settings."""

    measured_on: datetime.date = Field(description="When it was measured.")
    model: str = Field(description="The model timed: the bundled one.")
    prefill_tok_s: float = Field(gt=0, description="Prompt tokens read per second.")
    decode_tok_s: float = Field(gt=0, description="Answer tokens written per second.")
    candidate: str = Field(description="The larger model considered.")
    prompt_tokens: int = Field(gt=0, description="A typical question's prompt, in tokens.")
    predicted_ttft_s: float = Field(gt=0, description="The candidate's predicted wait.")
    predicted_decode_tok_s: float = Field(gt=0, description="The candidate's predicted rate.")
    chosen: str = Field(description="The chat model the speeds call for.")
    pending: bool = Field(
        False,
        description="Docent switches to the chosen model once it is ready, unless a chat "
        "model is chosen before (the user's choice wins).",
    )


class Settings(_Section):
    version: int = SETTINGS_VERSION
    local: LocalModelSettings = Field(default_factory=LocalModelSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    routing: RoutingSettings = Field(default_factory=RoutingSettings)
    cloud: CloudSettings = Field(default_factory=CloudSettings)
    secrets: SecretSettings = Field(default_factory=SecretSettings)
    library: LibrarySettings = Field(default_factory=LibrarySettings)
    serve_mcp: ServeMcpSettings = Field(default_factory=ServeMcpSettings)
    embedding_model: str = Field(
        "multilingual-e5-small", description="Embedding model name from the catalog."
    )
    speed_check: SpeedCheck | None = None
    language: Literal["system", "en", "zh_CN"] = Field(
        "system",
        description="The window's language: the system's (Simplified Chinese or English), "
        "or one chosen; applied at the next start.",
    )

    @classmethod
    def load(cls, path: Path) -> Settings:
        if not path.exists():
            return cls()
        try:
            raw: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise SettingsError(f"cannot read settings file {path}: {error}") from error
        if not isinstance(raw, dict):
            raise SettingsError(f"settings file {path} must hold a JSON object")
        if raw.get("version", SETTINGS_VERSION) > SETTINGS_VERSION:
            raise SettingsError(
                f"settings file {path} was written by a newer Docent (version {raw['version']})"
            )
        try:
            return cls.model_validate(raw)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(part) for part in issue['loc'])}: {issue['msg']}"
                for issue in error.errors()
            )
            raise SettingsError(f"invalid settings in {path}: {problems}") from None

    def save(self, path: Path) -> None:
        """Write atomically and privately (app/paths.py)."""
        write_private(path, self.model_dump_json(indent=2))
