from pathlib import Path

import pytest

from app.catalog import Catalog, ModelError
from app.llm.chat_model import LocalChatModel
from app.paths import Paths
from app.settings import LocalModelSettings


def chat_model(paths: Paths, choice: str) -> LocalChatModel:
    settings = LocalModelSettings(chat_model=choice, n_gpu_layers=-1, n_threads=3)
    return LocalChatModel(settings, Catalog.load(), paths.models_dir)


def test_a_users_own_gguf_file_is_the_chat_model(isolated_paths: Paths, tmp_path: Path) -> None:
    model = tmp_path / "My-Model.Q4_K_M.gguf"
    model.write_bytes(b"GGUF")
    config = chat_model(isolated_paths, str(model)).config()
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
    with pytest.raises(ModelError, match=message):
        chat_model(isolated_paths, choice).config()
