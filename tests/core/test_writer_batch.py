"""eventlog.writer_batch: a batch prepared before a byte is written (dedup resolved, framed, type-checked)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from eventlog import codec
from eventlog.codec import hash_key
from eventlog.errors import DuplicateInBatchError, InvalidEventError
from eventlog.events import MessageAppended, SessionCreated
from eventlog.writer_batch import prepare_batch

TS = b"2026-12-01T00:00:00.000Z"


def test_known_keys_keep_their_seq_and_the_rest_are_framed_with_more_counters():
    known = {hash_key("old"): 7}
    evs = [SessionCreated(session_key="a", dedup="old"), SessionCreated(session_key="b"),
           SessionCreated(session_key="c", dedup="new")]
    b = prepare_batch(evs, known.get, 20, lambda: TS)
    assert b.seqs == [7, 20, 21] and b.todo == [1, 2]
    assert [codec.decode(line).seq for line in b.lines] == [20, 21]
    assert [codec.FRAME_DECODER.decode(line).ts for line in b.lines] == [TS.decode()] * 2
    assert b'"more":1' in b.lines[0] and b'"more"' not in b.lines[1]


def test_a_repeated_key_in_one_batch_is_refused():
    evs = [SessionCreated(session_key="a", dedup="k"), SessionCreated(session_key="b", dedup="k")]
    with pytest.raises(DuplicateInBatchError, match="batch items 0 and 1"):
        prepare_batch(evs, {}.get, 1, lambda: TS)


def test_a_non_event_and_a_wrong_shape_are_refused_naming_the_item():
    with pytest.raises(InvalidEventError, match="batch item 1 is not an event"):
        prepare_batch([SessionCreated(session_key="a"), cast(Any, "nope")], {}.get, 1, lambda: TS)
    bad = MessageAppended(session_key="s", message_id="1", role="user", content="x", tool_calls=cast(Any, {"a": 1}))
    with pytest.raises(InvalidEventError) as e:
        prepare_batch([SessionCreated(session_key="a"), bad], {}.get, 1, lambda: TS)
    assert e.value.field == "tool_calls"


def test_all_known_means_nothing_to_write_and_no_stamp():
    stamped: list[int] = []

    def stamp() -> bytes:
        stamped.append(1)
        return TS

    b = prepare_batch([SessionCreated(session_key="a", dedup="k")], {hash_key("k"): 3}.get, 9, stamp)
    assert b.seqs == [3] and b.lines == [] and stamped == []
