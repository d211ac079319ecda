"""An event ``redact_events`` found clean is not scanned again by the writer's door (issue 25).

``Workspace.append`` runs ``redact_events`` (its in-memory fold must see what the writer
writes) and then the writer's door runs ``redact_event`` on every event again. The door now
takes a one-shot mark for each event ``redact_events`` gave back unchanged and returns it
without a second scan; what is written is the same, byte for byte.
"""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from eventlog import redact as door
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended, SessionCreated
from eventlog.redact import redact_event, redact_events
from tests.secret_corpus import CORPUS


def counting_scans(monkeypatch) -> list[str]:
    """Record every text the door's plain-message path scans."""
    seen: list[str] = []
    real = door.redact

    def redact(text: str) -> tuple[str, list[str]]:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(door, "redact", redact)
    return seen


def message(i: int, content: str) -> MessageAppended:
    return MessageAppended(session_key="s", message_id=f"m{i}", role="user", content=content, dedup=f"t:m{i}")


def test_a_workspace_append_scans_each_clean_message_once(tmp_path, monkeypatch):
    home = str(tmp_path / "ws")
    init_workspace(home)
    events = [SessionCreated(session_key="s", dedup="t:s")] + [message(i, f"plain words number {i}") for i in range(40)]
    with Workspace.open(home, writable=True) as ws:
        ws.views  # noqa: B018  (the projections exist: append folds in memory)
        seen = counting_scans(monkeypatch)
        ws.append(events)
        assert len(seen) == 40  # was 80: redact_events, then the door again
        stored = [e for e in ws.log.read() if isinstance(e, MessageAppended)]
        assert [e.content for e in stored] == [e.content for e in events[1:]]
    assert not door._passed  # every mark was taken by the door


def test_an_event_that_lost_a_secret_is_scanned_again_at_the_door(monkeypatch):
    ev = message(0, CORPUS[0].text)
    seen = counting_scans(monkeypatch)
    (once,) = redact_events([ev])
    assert once is not ev and once.redacted
    assert redact_event(once) is once and len(seen) == 2  # no mark: the door made sure again
    assert not door._passed


def test_a_mark_is_for_that_very_object_and_taken_once(monkeypatch):
    ev = message(0, "nothing to see here")
    twin = message(0, "nothing to see here")  # equal, not the same object
    seen = counting_scans(monkeypatch)
    assert redact_events([ev]) == [ev] and len(seen) == 1
    assert redact_event(twin) is twin and len(seen) == 2
    assert redact_event(ev) is ev and len(seen) == 2  # the mark
    assert redact_event(ev) is ev and len(seen) == 3  # taken: scanned as before


def test_marks_are_bounded(monkeypatch):
    monkeypatch.setattr(door, "PASSED_MAX", 4)
    redact_events([message(i, "clean") for i in range(3)])
    assert len(door._passed) == 3
    redact_events([message(i, "clean") for i in range(2)])  # 3 + 2 > 4: the old marks go
    assert len(door._passed) == 2
    redact_events([message(i, "clean") for i in range(5)])  # a batch larger than the bound marks nothing
    assert not door._passed
    door._passed.clear()


contents = st.one_of(st.text(max_size=80), st.sampled_from([c.text for c in CORPUS]),
                     st.sampled_from(["plain", "the token is here", "password: hunter22!"]))


@settings(max_examples=40, deadline=None)
@given(st.lists(contents, min_size=1, max_size=12))
def test_what_the_log_holds_is_what_one_door_pass_gives(tmp_path_factory, texts):
    home = str(tmp_path_factory.mktemp("ws") / "ws")
    init_workspace(home)
    events = [message(i, t) for i, t in enumerate(texts)]
    door._passed.clear()
    expected = [redact_event(ev) for ev in events]  # the door alone, no marks
    with Workspace.open(home, writable=True) as ws:
        ws.views  # noqa: B018
        ws.append(events)
        stored = [e for e in ws.log.read() if isinstance(e, MessageAppended)]
    strip = msgspec.structs.replace
    assert [strip(e, seq=0, ts="") for e in stored] == [strip(e, seq=0, ts="") for e in expected]
    assert not door._passed
