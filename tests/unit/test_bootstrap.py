from pathlib import Path

import pytest

from app.bootstrap import Docent
from app.catalog import ModelError
from app.paths import Paths
from app.settings import Settings


def settings_with_model(choice: str) -> Settings:
    settings = Settings()
    settings.local.chat_model = choice
    settings.local.n_gpu_layers = -1
    settings.local.n_threads = 3
    return settings


def test_a_users_own_gguf_file_is_the_chat_model(isolated_paths: Paths, tmp_path: Path) -> None:
    model = tmp_path / "My-Model.Q4_K_M.gguf"
    model.write_bytes(b"GGUF")
    config = Docent(isolated_paths, settings_with_model(str(model)), embeddings=False).chat_model()
    assert (config.name, config.path, config.n_gpu_layers, config.threads) == (
        "My-Model.Q4_K_M",
        model,
        -1,
        3,
    )


@pytest.mark.parametrize(
    ("choice", "message"),
    [
        ("/nowhere/model.gguf", "the chat model file /nowhere/model.gguf does not exist"),
        ("multilingual-e5-small", "is an embedding model, not a chat model"),
        ("gpt-17", "unknown model 'gpt-17'"),
    ],
)
def test_a_bad_chat_model_choice_is_explained(
    isolated_paths: Paths, choice: str, message: str
) -> None:
    docent = Docent(isolated_paths, settings_with_model(choice), embeddings=False)
    with pytest.raises(ModelError, match=message):
        docent.chat_model()
