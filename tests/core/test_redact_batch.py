"""The door's prefilter over a whole batch (issue 22: a device catching up appends pages of received events).

``secrets.suspects`` scans many strings in one go and names those that may hold a secret;
``redact.redact_batch`` sends only those events through the door one by one. The writer's
``append_batch`` uses it, so a batch of clean events costs one scan of their joined text, and
what is written is exactly what the per-event door gives.
"""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog import redact as door
from eventlog.events import HistoryAppended, MemoryAppended, MessageAppended, Replica
from eventlog.log import Log
from eventlog.redact import redact_batch, redact_event
from eventlog.secrets import find, suspects
from tests.secret_corpus import CORPUS

PIECES = [c.text for c in CORPUS] + [c.secret for c in CORPUS] + [
    "plain words", "token", "password = ", "Authorization: Bearer ", "sk-", "\x00", "\n", "\r\n", "\u200b", "\u00ad",
    "café 日本語 🙂", "x" * 40, "ABCDEFGHIJ0123456789abcdefghij" * 2, "-----BEGIN ", "[REDACTED:openai-key]", " -p", "://u:",
]
texts = st.lists(st.sampled_from(PIECES) | st.text(max_size=30), max_size=6).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(texts, max_size=8))
def test_a_string_the_prefilter_clears_has_no_secret(strings):
    cleared = set(range(len(strings))) - suspects(strings)
    for i in cleared:
        assert find(strings[i]) == [], (i, strings[i])


def test_every_secret_of_the_corpus_is_a_suspect_among_clean_strings():
    for case in CORPUS:
        strings = ["nothing here", case.text, "nor here"]
        assert 1 in suspects(strings), case.text
        assert suspects(strings) <= {1}


def events_of(text: str, i: int) -> list:
    rep = Replica(device="dev-x", seq=i + 1, hlc=1 << 16)
    return [
        MessageAppended(session_key="s", message_id=f"m{i}", role="user", content=text, dedup=f"rep:dev-x:{i}", replica=rep),
        MessageAppended(session_key="s", message_id=f"t{i}", role="assistant", content="ok", extra={"password": text},
                        tool_calls=[{"name": "sh", "input": {"cmd": text}}]),
        MemoryAppended(fact_id=f"f{i}", scope="user", section="Notes", text=text, dedup=text[:40]),
        HistoryAppended(text=text, source="note", refs={"k": [text]}, dedup=f"note:{i}"),
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(texts, max_size=5))
def test_the_batch_door_gives_what_the_door_gives_each_event(batch):
    events = [ev for i, text in enumerate(batch) for ev in events_of(text, i)]
    got = redact_batch(list(events))
    want = [redact_event(ev) for ev in events]
    assert [msgspec.json.encode(e) for e in got] == [msgspec.json.encode(e) for e in want]
    for ev, out in zip(events, got, strict=True):
        if out == ev:
            assert out is ev  # clean: the same object back, as the door gives it


def test_a_clean_batch_reaches_the_log_with_one_scan_of_its_texts(tmp_path, monkeypatch):
    scanned: list[str] = []
    real = door.redact
    monkeypatch.setattr(door, "redact", lambda text: (scanned.append(text), real(text))[1])
    events = [MessageAppended(session_key="s", message_id=f"m{i}", role="user", content=f"plain words {i}",
                              dedup=f"rep:dev-x:{i}", replica=Replica(device="dev-x", seq=i + 1, hlc=1 << 16))
              for i in range(200)]
    events.append(MessageAppended(session_key="s", message_id="m-secret", role="user", content=CORPUS[0].text))
    log = Log.open(str(tmp_path / "log"), writable=True, create=True)
    try:
        log.append_batch(events)
        stored = [e for e in log.read() if isinstance(e, MessageAppended)]
    finally:
        log.close()
    assert scanned == [CORPUS[0].text]  # the one suspect went through the door; was 201 scans
    assert [e.content for e in stored[:200]] == [f"plain words {i}" for i in range(200)]
    assert CORPUS[0].secret not in stored[200].content and stored[200].redacted
