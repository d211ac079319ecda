"""The writer skips validation only where it could not fail.

``validate.plain_message`` answers True for a ``message.appended`` whose fields hold exactly
their declared types, within the limits; the writer then writes it without ``validate_event``
and without decoding the framed line back. This proves, over arbitrary field values of any
type, that whenever it says True both checks pass, and that a wrong-typed or out-of-limit
message is still refused by ``Log.append`` (one at a time and in a batch).
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog.codec import DECODER, stamp_and_frame
from eventlog.errors import InvalidEventError
from eventlog.events import MessageAppended
from eventlog.log import Log
from eventlog.validate import MAX_KEY_CHARS, plain_message, validate_event


class Str(str):
    pass


json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_any = st.recursive(json_leaf, lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
                        max_leaves=8)
anything = json_any | st.builds(Str, st.text(max_size=4)) | st.dictionaries(st.integers(), json_leaf, max_size=2) \
    | st.lists(st.text(max_size=3) | st.integers(), max_size=3) | st.tuples(st.integers())


PLAIN = {"session_key": "s", "message_id": "m", "role": "user", "content": "hi", "timestamp": "", "tool_calls": None,
         "extra": {}, "redacted": [], "dedup": ""}


long_key = st.text(min_size=MAX_KEY_CHARS - 1, max_size=MAX_KEY_CHARS + 2, alphabet="ab")
role = st.sampled_from(["user", "assistant", "tool", "x y", "", "9", "r" * 40, "User", "assistant\n"])


@settings(max_examples=800, deadline=None)
@given(changes=st.dictionaries(st.sampled_from(sorted(PLAIN)), anything | long_key | role, min_size=1, max_size=3))
def test_plain_means_the_decode_cannot_fail(changes):
    ev = MessageAppended(**{**PLAIN, **changes})  # a plain message with one to three fields of any value
    try:
        line = stamp_and_frame(ev, 1, b"2026-11-30T00:00:00.000Z")
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError, RecursionError):
        return  # refused before any type check
    if plain_message(ev):
        DECODER.decode(line)  # must not raise
        validate_event(ev)  # nor this


BAD = [{"tool_calls": {"id": 1}}, {"extra": ["x"]}, {"content": 5}, {"redacted": "k"}, {"role": None},
       {"extra": {"a": 1}, "redacted": [1]}, {"role": "no role"}, {"session_key": "k" * (MAX_KEY_CHARS + 1)},
       {"dedup": "d" * (MAX_KEY_CHARS + 1)}]


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("how", ["append", "batch"])
def test_a_wrongly_typed_message_is_still_refused(tmp_path, bad, how):
    log = Log.open(str(tmp_path / "log"), writable=True, create=True)
    try:
        fields = {"session_key": "s", "message_id": "m", "role": "user", "content": "hi", **bad}
        with pytest.raises(InvalidEventError):
            if how == "append":
                log.append(MessageAppended(**fields))
            else:  # the bad one among plain ones: nothing of the batch is written
                log.append_batch([MessageAppended(**PLAIN), MessageAppended(**fields),
                                  MessageAppended(**{**PLAIN, "message_id": "m2"})])
        assert log.last_seq == 0
    finally:
        log.close()


def testplain_messages_are_recognised():
    ev = MessageAppended(session_key="s", message_id="m", role="user", content="hi", tool_calls=[{"id": "c"}],
                         extra={"k": [1, {"x": None}]}, redacted=["openai"])
    assert plain_message(ev)
    assert not plain_message(msgspec.structs.replace(ev, content=Str("hi")))
