"""The compact hash index behaves like a dict and survives a round trip to disk."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog.hashindex import HashIndex

keys = st.integers(0, 2**128 - 1) | st.integers(0, 2**64 - 1).map(lambda x: x << 64)  # shared high halves too


@pytest.mark.slow
@settings(max_examples=200)
@given(ops=st.lists(st.tuples(st.sampled_from(["add", "discard"]), keys, st.integers(0, 2**64 - 1)), max_size=200))
def test_hash_index_matches_a_dict(ops):
    idx, model = HashIndex(), {}
    for op, k, v in ops:
        if op == "add":
            assert idx.add(k, v) == model.get(k)
            model.setdefault(k, v)
        else:
            assert idx.discard(k) == (k in model)
            model.pop(k, None)
        assert len(idx) == len(model)
    for k, v in model.items():
        assert idx.get(k) == v and k in idx
    again = HashIndex.from_bytes(idx.to_bytes())
    assert len(again) == len(model) and all(again.get(k) == v for k, v in model.items())


def test_a_damaged_index_file_is_rejected():
    idx = HashIndex()
    for k in range(100):
        idx.add(k * 7919 << 70, k)
    data = bytearray(idx.to_bytes())
    data[-5] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        HashIndex.from_bytes(bytes(data))
    with pytest.raises(ValueError):
        HashIndex.from_bytes(b"short")


def test_a_million_keys_fit_in_24_bytes_each():
    import random

    rng = random.Random(1)
    idx = HashIndex()
    for i in range(200_000):
        idx.add(rng.getrandbits(128), i)
    assert idx.memory_bytes() <= 200_000 * 24 * 1.1
