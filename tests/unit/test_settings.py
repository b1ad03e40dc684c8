import json
import traceback
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.settings import LibrarySettings, Settings, SettingsError


def test_defaults_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    assert Settings.load(path) == Settings()
    settings = Settings()
    settings.local.n_threads = 3
    settings.local.chat_model = "/models/mine.gguf"
    settings.save(path)
    loaded = Settings.load(path)
    assert loaded.local.n_threads == 3
    assert loaded.local.chat_model == "/models/mine.gguf"
    assert json.loads(path.read_text())["version"] == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            '{"local": {"n_ctx": 100}}',
            r"local\.n_ctx: Input should be greater than or equal to 512",
        ),
        ('{"local": {"gpu": 1}}', r"local\.gpu: Extra inputs are not permitted"),
        ("{not json", "cannot read settings file"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"version": 99}', "written by a newer Docent"),
        (
            '{"cloud": {"servers": [{"name": "a", "url": "http://h/mcp",'
            ' "transport": "sse", "headers": {"Authorization": "Bearer x"}, "models": ["m"]}]}}',
            r"cloud\.servers\.0\.headers: Value error, header 'Authorization' looks like a "
            "credential; put it in the key field",
        ),
        (
            '{"cloud": {"servers": [{"name": "a", "env": {"OPENAI_API_KEY": "x"},'
            ' "command": "npx", "models": ["m"]}]}}',
            r"environment variable 'OPENAI_API_KEY' looks like a credential",
        ),
        (
            '{"cloud": {"servers": [{"name": "a", "transport": "stdio", "models": ["m"]}]}}',
            "a stdio server needs a command",
        ),
        (
            '{"cloud": {"servers": [{"name": "a", "transport": "streamable-http",'
            ' "url": "localhost:80", "models": ["m"]}]}}',
            "must be an http:// or https:// URL",
        ),
        (
            '{"cloud": {"providers": [{"name": "x", "base_url": "https://a/v1", "models": ["m"]}],'
            ' "servers": [{"name": "x", "command": "c", "models": ["m"]}]}}',
            "names must be unique: x",
        ),
        ('{"routing": {"mode": "fastest"}}', r"routing\.mode: Input should be 'auto', 'local'"),
    ],
)
def test_invalid_settings_are_refused_with_the_field(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    with pytest.raises(SettingsError, match=message):
        Settings.load(path)


def test_assignment_is_validated() -> None:
    settings = Settings()
    with pytest.raises(ValueError, match="greater than or equal to -1"):
        settings.local.n_gpu_layers = -5


SECRET = "sk-live-7d41c0ffee9a2b58e6"
PLAIN_KEY = "7d41c0ffee9a2b58e6"  # a key with no telltale shape: only its option names it


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ({"env": {"OPENROUTER_KEY": SECRET}}, "environment variable 'OPENROUTER_KEY' looks like"),
        ({"args": ["server.js", "--api-key", SECRET]}, "argument 2 looks like a credential"),
        ({"args": [f"--token={SECRET}"]}, "argument 1 looks like a credential"),
        ({"args": ["serve", SECRET]}, "argument 2 looks like a credential"),
        ({"args": ["serve", "-k", PLAIN_KEY]}, "argument 2 looks like a credential"),
        ({"args": ["--token", PLAIN_KEY]}, "argument 1 looks like a credential"),
        (
            {
                "transport": "sse",
                "url": "https://h/sse",
                "headers": {"Ocp-Apim-Subscription-Key": SECRET},
            },
            "header 'Ocp-Apim-Subscription-Key' looks like a credential",
        ),
        (
            {
                "transport": "sse",
                "url": "https://h/sse",
                "headers": {"Cookie": f"session={SECRET}"},
            },
            "header 'Cookie' looks like a credential",
        ),
        (
            {"transport": "sse", "url": f"https://h/sse?key={SECRET}"},
            "its query parameter 'key' looks like a credential",
        ),
        (
            {"transport": "sse", "url": f"https://h/sse?model=m&access_token={SECRET}"},
            "its query parameter 'access_token' looks like a credential",
        ),
        (
            {"transport": "sse", "url": f"https://h/sse#access_token={SECRET}"},
            "its query parameter 'access_token' looks like a credential",
        ),
        (
            {"transport": "sse", "url": f"https://me:{SECRET}@h/sse"},
            "holds a user name or password",
        ),
        (  # a token as the user name, as git hosts take it
            {"transport": "sse", "url": f"https://{SECRET}@h/sse"},
            "holds a user name or password",
        ),
        # Under names that say nothing: the value gives it away.
        ({"env": {"UPSTREAM": SECRET}}, "environment variable 'UPSTREAM' looks like"),
        ({"env": {"GITHUB_PAT": PLAIN_KEY}}, "environment variable 'GITHUB_PAT' looks like"),
        (
            {"env": {"DATABASE_URL": f"postgres://me:{PLAIN_KEY}@db/x"}},
            "environment variable 'DATABASE_URL' looks like",
        ),
        (
            {
                "transport": "sse",
                "url": "https://h/sse",
                "headers": {"X-Pass": f"Bearer {PLAIN_KEY}"},
            },
            "header 'X-Pass' looks like a credential",
        ),
        (
            {"args": ["--header", f"Authorization: Bearer {PLAIN_KEY}"]},
            "argument 2 looks like a credential",
        ),
        ({"args": ["-H", f"X-Api-Key: {PLAIN_KEY}"]}, "argument 2 looks like a credential"),
        (
            {"args": ["--upstream", f"https://me:{PLAIN_KEY}@h/v1"]},
            "argument 2 looks like a credential",
        ),
    ],
)
def test_credentials_are_refused_wherever_they_hide_and_never_repeated(
    server: dict, message: str
) -> None:
    entry = {"name": "a", "command": "node", "models": ["m"], **server}
    with pytest.raises(ValidationError, match=message) as refused:
        Settings.model_validate({"cloud": {"servers": [entry]}})
    printed = "".join(traceback.format_exception(refused.value))
    for shown in (str(refused.value), repr(refused.value), printed):
        assert PLAIN_KEY not in shown  # nor SECRET, which holds it


def test_the_settings_file_error_never_repeats_a_value(tmp_path: Path) -> None:
    """Loading is where a user meets the refusal: the message names the place, not the key."""
    path = tmp_path / "settings.json"
    server = {"name": "a", "command": "node", "models": ["m"], "env": {"OPENROUTER_KEY": SECRET}}
    path.write_text(
        json.dumps({"cloud": {"servers": [server]}, "local": {"n_ctx": SECRET}}), "utf-8"
    )
    with pytest.raises(SettingsError, match=r"cloud\.servers\.0\.env: .*key field") as refused:
        Settings.load(path)
    assert "local.n_ctx" in str(refused.value)
    assert SECRET not in "".join(traceback.format_exception(refused.value))


def test_a_provider_url_with_a_key_in_it_is_refused() -> None:
    with pytest.raises(ValidationError, match="query parameter 'api_key'") as refused:
        Settings.model_validate(
            {
                "cloud": {
                    "providers": [
                        {"name": "p", "base_url": f"https://h/v1?api_key={SECRET}", "models": ["m"]}
                    ]
                }
            }
        )
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize(
    "server",
    [
        {"args": ["--max-tokens", "512", "--tokenizer", "bpe"]},
        {"env": {"MAX_TOKENS": "512", "TOKENIZERS_PARALLELISM": "false", "PATH": "/usr/bin"}},
        {"args": ["--header", "Accept: text/event-stream", "--url", "https://h/v1?m=a:b"]},
        {"transport": "sse", "url": "https://h/sse?model=qwen&stream=1"},
    ],
)
def test_settings_that_only_look_like_credential_names_are_kept(server: dict) -> None:
    entry = {"name": "a", "command": "node", "models": ["m"], **server}
    Settings.model_validate({"cloud": {"servers": [entry]}})


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("", ""),
        ("  postgresql://docent@db.example/library ", "postgresql://docent@db.example/library"),
        ("postgres://docent@db.example:5433/library?sslmode=verify-full", None),
        ("postgresql://postgres:@/library?host=/run/postgresql", None),  # an empty password
    ],
)
def test_a_shared_library_url_is_kept_without_a_password(url: str, kept: str | None) -> None:
    assert LibrarySettings(shared_url=url).shared_url == (url if kept is None else kept)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://db.example/library", "a shared library is a postgresql://"),
        ("/home/me/library.sqlite3", "a shared library is a postgresql://"),
        ("postgresql://docent:s3cret-word@db.example/library", "keep the password out of the URL"),
        ("postgresql://docent@db.example:port/library", "not a valid postgresql:// URL"),
    ],
)
def test_a_shared_library_url_with_a_password_or_another_scheme_is_refused(
    url: str, message: str
) -> None:
    with pytest.raises(ValidationError, match=message) as refused:
        LibrarySettings(shared_url=url)
    assert "s3cret-word" not in str(refused.value)
