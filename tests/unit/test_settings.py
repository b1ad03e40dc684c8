import json
from pathlib import Path

import pytest

from app.settings import Settings, SettingsError


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
