"""The catalog and the joining of a model split across packages (with packages made here)."""

import hashlib
from pathlib import Path

import pytest

from app.catalog import Catalog, Evaluation, ModelError, ensure_model


@pytest.fixture
def parts_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, bytes]:
    root = tmp_path / "site"
    blobs = [b"GGUF" + bytes(range(200)) * 50, bytes(range(256)) * 40]
    for number, blob in enumerate(blobs, start=1):
        package = root / f"fake_model_part{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{number}.bin").write_bytes(blob)
    monkeypatch.syspath_prepend(str(root))
    return root, b"".join(blobs)


def catalog_for(whole: bytes, digest: str | None = None, prefix: str = "fake_model") -> Catalog:
    return Catalog.load(
        f"""
[[model]]
name = "fake"
title = "Fake"
role = "chat"
default = true
file = "fake.gguf"
size = {len(whole)}
sha256 = "{digest or hashlib.sha256(whole).hexdigest()}"
licence = "MIT"
source = "test"
upstream = "nowhere"
parts = [
  {{ package = "{prefix}_part1", path = "data/part1.bin" }},
  {{ package = "{prefix}_part2", path = "data/part2.bin" }},
]
"""
    )


def test_parts_are_joined_verified_and_reused(
    parts_packages: tuple[Path, bytes], tmp_path: Path
) -> None:
    _, whole = parts_packages
    model = catalog_for(whole).default("chat")
    seen: list[int] = []
    path = ensure_model(model, tmp_path / "models", lambda done, total: seen.append(done))
    assert path.read_bytes() == whole
    assert seen[-1] == len(whole)
    mtime = path.stat().st_mtime_ns
    assert ensure_model(model, tmp_path / "models") == path  # stamped: not joined again
    assert path.stat().st_mtime_ns == mtime


def test_a_packaged_app_uses_its_joined_copy_in_place(
    parts_packages: tuple[Path, bytes], tmp_path: Path
) -> None:
    """The packaged app carries the model already joined: verified once, never copied."""
    _, whole = parts_packages
    model = catalog_for(whole).default("chat")
    shipped = tmp_path / "bundle" / "models" / "joined"
    shipped.mkdir(parents=True)
    (shipped / model.file).write_bytes(whole)
    path = ensure_model(model, tmp_path / "models", shipped=shipped)
    assert path == shipped / model.file
    assert not (tmp_path / "models" / model.file).exists()
    (shipped / model.file).write_bytes(whole[:-1] + b"X")  # damaged after its check
    with pytest.raises(ModelError, match="sha256"):
        ensure_model(model, tmp_path / "models", shipped=shipped)


def test_a_corrupted_model_file_is_rebuilt(
    parts_packages: tuple[Path, bytes], tmp_path: Path
) -> None:
    _, whole = parts_packages
    model = catalog_for(whole).default("chat")
    path = ensure_model(model, tmp_path / "models")
    path.write_bytes(b"truncated")
    assert ensure_model(model, tmp_path / "models").read_bytes() == whole


def test_a_checksum_mismatch_is_refused_and_leaves_no_file(
    parts_packages: tuple[Path, bytes], tmp_path: Path
) -> None:
    _, whole = parts_packages
    model = catalog_for(whole, digest="0" * 64).default("chat")
    with pytest.raises(ModelError, match="joined parts do not match the catalog"):
        ensure_model(model, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


def test_a_missing_package_is_named() -> None:
    model = catalog_for(b"x", prefix="absent_model").default("chat")
    with pytest.raises(ModelError, match="package 'absent_model_part1' is not installed"):
        ensure_model(model, Path("/nonexistent"))


def test_the_shipped_catalog_names_both_bundled_defaults() -> None:
    catalog = Catalog.load()
    chat, embedding = catalog.default("chat"), catalog.default("embedding")
    assert chat.bundled
    assert embedding.bundled
    assert all(len(m.sha256) == 64 and m.licence and m.upstream for m in catalog.models)
    with pytest.raises(ModelError, match="unknown model 'nope'"):
        catalog.get("nope")


def test_the_evaluated_chat_models_carry_the_readmes_numbers() -> None:
    catalog = Catalog.load()
    manuals = "the manuals set's 77 questions, local only"
    assert catalog.get("qwen2.5-coder-0.5b").evaluation == Evaluation(0.61, manuals)
    assert catalog.get("qwen2.5-coder-1.5b").evaluation == Evaluation(0.71, manuals)
    assert catalog.get("qwen2.5-7b-instruct").evaluation is None  # never evaluated
