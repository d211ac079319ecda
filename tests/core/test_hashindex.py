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


def test_the_file_form_is_the_header_then_every_high_low_and_value_column_and_takes_one_copy():
    """to_bytes writes the documented layout (all high halves, all low halves, all values, bucket order)
    and allocates about the file's size once (it allocated three times more before: a writer saves its
    index at segment rolls, ~69 MiB of peak at a million keys)."""
    import random
    import struct
    import tracemalloc
    from array import array

    import xxhash

    rng = random.Random(2)
    idx = HashIndex()
    pairs = {}
    for i in range(50_000):
        k = rng.getrandbits(128)
        if idx.add(k, i) is None:
            pairs[k] = i
    tracemalloc.start()
    data = idx.to_bytes()
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak <= len(data) * 1.1
    ordered = sorted(pairs)  # bucket order is the order of the high halves, ties by insertion (none here)
    payload = b"".join(array("Q", column).tobytes() for column in (
        [k >> 64 for k in ordered], [k & (2**64 - 1) for k in ordered], [pairs[k] for k in ordered]))
    assert bytes(data) == struct.pack("<6sQQ", b"EVHI1\n", len(pairs), xxhash.xxh3_64_intdigest(payload)) + payload
