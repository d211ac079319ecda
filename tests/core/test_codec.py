"""Framing and hashing contracts (INVARIANTS I3, CONVENTIONS 6)."""

from __future__ import annotations

import msgspec
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog import codec
from eventlog.events import EVENT_TYPES, MessageAppended, SessionCreated

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)
messages = st.builds(
    MessageAppended,
    session_key=text, message_id=text, role=st.sampled_from(["user", "assistant", "tool"]), content=text,
    timestamp=text, tool_calls=st.none() | st.lists(json_values, max_size=2),
    extra=st.dictionaries(st.text(max_size=8), json_values, max_size=3), dedup=text,
)
sessions = st.builds(SessionCreated, session_key=text, title=text,
                     metadata=st.dictionaries(st.text(max_size=8), json_values, max_size=3))
stamps = st.tuples(st.integers(1, 2**53), st.from_regex(r"\A20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z"))


@settings(max_examples=300)
@given(ev=messages | sessions, stamp=stamps, more=st.integers(0, 50))
def test_line_is_canonical_json_with_a_checksum_and_round_trips(ev, stamp, more):
    seq, ts = stamp
    line = codec.stamp_and_frame(ev, seq, ts.encode(), more)
    stamped = msgspec.structs.replace(ev, seq=seq, ts=ts)
    assert line == codec.frame(stamped, more)  # the fast path is the canonical encoding
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert codec.checksum_ok(line)
    assert codec.decode(line) == stamped
    assert codec.frame(codec.decode(line), codec.FRAME_DECODER.decode(line).more) == line
    # the checksum can be checked from raw bytes, with the recipe in codec's docstring
    assert xxhash.xxh3_64(line[:-33]).hexdigest().encode() == line[-19:-3]
    # and the line stays plain JSON for jq: framing members are ordinary keys
    obj = msgspec.json.decode(line)
    assert obj["type"] == ev.type and obj["seq"] == seq and obj["h"].startswith("xxh3-64:")


@given(ev=messages, stamp=stamps, pos=st.integers(0, 10_000), bit=st.integers(0, 7))
def test_any_flipped_bit_fails_the_checksum(ev, stamp, pos, bit):
    line = bytearray(codec.stamp_and_frame(ev, stamp[0], stamp[1].encode()))
    pos %= len(line) - 1  # the newline is framing, checked separately
    line[pos] ^= 1 << bit
    assert not codec.checksum_ok(bytes(line))


def test_content_hash_is_prefixed_and_independent_of_key_order():
    a = codec.content_hash({"b": 1, "a": "é"})
    assert a == codec.content_hash({"a": "é", "b": 1})
    assert a.startswith("xxh3_128:") and len(a) == len("xxh3_128:") + 32
    assert codec.canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()


def test_hash_key_accepts_prefixed_hashes_and_plain_keys():
    h = codec.content_hash(["x"])
    assert codec.hash_key(h) == int(h.split(":")[1], 16)
    assert codec.hash_key("plain key") == xxhash.xxh3_128_intdigest(b"plain key")


def test_every_event_type_round_trips_with_defaults():
    for cls in EVENT_TYPES:
        samples = {str: "x", int: 1, list: [], dict: {}}
        kwargs = {f.name: samples[getattr(f.type, "__origin__", f.type)] for f in msgspec.structs.fields(cls) if f.required}
        ev = cls(**kwargs)
        line = codec.stamp_and_frame(ev, 1, b"2026-01-01T00:00:00.000Z")
        assert codec.decode(line) == msgspec.structs.replace(ev, seq=1, ts="2026-01-01T00:00:00.000Z")


@settings(max_examples=300)
@given(st.lists(messages, min_size=1, max_size=6), st.data())
def test_lines_ok_is_line_ok_of_every_line(events, data):
    """``lines_ok`` (the verified read's loop) answers ``all(line_ok)``, on intact lines and on lines with one
    byte changed, cut short or grown (anywhere: body, checksum, framing)."""
    lines = [codec.stamp_and_frame(ev, i + 1, b"2026-11-30T10:00:00.000Z")[:-1] for i, ev in enumerate(events)]
    assert codec.lines_ok(lines) and all(map(codec.line_ok, lines))
    k = data.draw(st.integers(0, len(lines) - 1), label="line")
    ln = lines[k]
    how = data.draw(st.sampled_from(["flip", "cut", "grow"]), label="how")
    at = data.draw(st.integers(0, len(ln) - 1), label="at")
    if how == "flip":
        bad = ln[:at] + bytes([ln[at] ^ data.draw(st.integers(1, 255), label="xor")]) + ln[at + 1:]
    elif how == "cut":
        bad = ln[:at] + ln[at + 1:]
    else:
        bad = ln[:at] + b"x" + ln[at:]
    damaged = lines[:k] + [bad] + lines[k + 1:]
    assert codec.lines_ok(damaged) == all(map(codec.line_ok, damaged)) is False
    assert codec.lines_ok([]) is True
