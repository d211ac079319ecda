"""The door's hot path: a plain message without a dedup key is judged by one scan (issue 25, append10).

``redact.redact_event`` answers a ``message.appended`` without tool calls, extra or dedup key
whose content ``secrets.find`` finds clean with the event itself, without the general path
(``_door``: ``secrets.redact``'s rounds, the kinds list, the dedup key's check). Everything
else, and a message where ``find`` finds anything, goes through ``_door`` as before: what
the door gives back is the same, object for object and byte for byte.
"""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog import redact as door
from eventlog.events import MessageAppended
from eventlog.redact import redact_event
from tests.secret_corpus import CORPUS

PIECES = [c.text for c in CORPUS] + [c.secret for c in CORPUS] + [
    "plain words", "token", "password = ", "Authorization: Bearer ", "sk-", "\x00", "\n", "\r\n", "\u200b", "\u00ad",
    "café 日本語 🙂", "x" * 40, "ABCDEFGHIJ0123456789abcdefghij" * 2, "-----BEGIN ", "[REDACTED:openai-key]", " -p", "://u:",
]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=30), max_size=6).map("".join)


def messages(text: str) -> list[MessageAppended]:
    """The plain shape the hot path takes, and the shapes next to it that must not take it."""
    return [
        MessageAppended(session_key="s", message_id="m", role="user", content=text),
        MessageAppended(session_key="s", message_id="m", role="user", content=text, dedup=f"t:{text[:40]}"),
        MessageAppended(session_key="s", message_id="m", role="user", content=text, extra={"k": text}),
        MessageAppended(session_key="s", message_id="m", role="user", content=text, tool_calls=[{"cmd": text}]),
        MessageAppended(session_key="s", message_id="m", role="user", content=text, redacted=["openai-key"]),
    ]


@settings(max_examples=300, deadline=None)
@given(texts)
def test_the_hot_path_gives_what_the_general_door_gives(text):
    for ev in messages(text):
        got = redact_event(ev)
        want = door._door(ev)[0]
        assert msgspec.json.encode(got) == msgspec.json.encode(want)
        assert (got is ev) == (want is ev)  # clean: the same object back


def test_a_clean_plain_message_costs_one_scan_and_no_general_path(monkeypatch):
    scans: list[str] = []
    real_find = door.find

    def find(text: str) -> list:
        scans.append(text)
        return real_find(text)

    def general(ev: object) -> object:
        raise AssertionError("the general path ran for a clean plain message")

    monkeypatch.setattr(door, "find", find)
    monkeypatch.setattr(door, "_door", general)
    ev = MessageAppended(session_key="s", message_id="m", role="user", content="plain words, token bucket, café")
    assert redact_event(ev) is ev
    assert scans == [ev.content]


def test_a_message_holding_a_secret_still_loses_it():
    for case in CORPUS:
        ev = MessageAppended(session_key="s", message_id="m", role="user", content=case.text)
        out = redact_event(ev)
        assert out is not ev and case.secret not in out.content and out.redacted, case.text
