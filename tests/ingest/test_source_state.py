"""``eventlog.source_state``: the quick "may this transcript hold lines not read yet?" without the ingest code.

It reads the few fields it needs from the state file ``eventlog.ingest.incremental`` writes, so its
answer must be the one the whole state (``load_state``) gives: over a real transcript read in random
chunks (capped reads, partial last lines, final reads), and for states it must not trust.
"""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.app.workspace import init_workspace
from eventlog.ingest.incremental import SourceState, ingest_file, load_state
from eventlog.log import Log
from eventlog.source_state import STATE_VERSION, needs_ingest, state_path
from tests.conftest import real_data


def full_answer(state_dir: str, path: str, final: bool) -> bool:
    """``needs_ingest`` as it was written over the whole decoded state (before this module)."""
    s = os.stat(path)
    st = load_state(state_dir, path)
    if st is None or (s.st_size, s.st_mtime_ns, s.st_ino, s.st_dev) != (st.size, st.mtime_ns, st.ino, st.dev):
        return True
    if st.capped and st.position < s.st_size and not st.error:
        return True
    return final and st.position < s.st_size and not st.error


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cuts=st.lists(st.integers(0, 40_000), min_size=1, max_size=5), caps=st.lists(st.integers(1024, 20_000)),
       finals=st.lists(st.booleans()))
def test_it_answers_what_the_whole_state_answers(tmp_path_factory, cuts, caps, finals) -> None:  # noqa: ANN001
    root = str(tmp_path_factory.mktemp("ss"))
    home = os.path.join(root, "ws")
    init_workspace(home, durability="none")
    state_dir = os.path.join(home, "state")
    path = os.path.join(root, "t.jsonl")
    with open(real_data("claude-spotter", "tool_heavy.jsonl"), "rb") as f:
        data = f.read()
    log = Log.open(os.path.join(home, "log"), writable=True, durability="none")
    try:
        for i, cut in enumerate(sorted(cuts) + [len(data)]):
            with open(path, "wb") as f:
                f.write(data[:cut])
            for final in (False, True):
                assert needs_ingest(state_dir, path, final=final) == full_answer(state_dir, path, final)
            ingest_file(log, path, state_dir=state_dir, max_bytes=caps[i] if i < len(caps) else 8 << 20,
                        final=finals[i] if i < len(finals) else False)
            for final in (False, True):
                assert needs_ingest(state_dir, path, final=final) == full_answer(state_dir, path, final)
    finally:
        log.close()


def test_a_state_it_cannot_trust_counts_as_none(tmp_path) -> None:
    path = str(tmp_path / "t.jsonl")
    with open(path, "wb") as f:
        f.write(b'{"a": 1}\n')
    s = os.stat(path)
    state_dir = str(tmp_path / "state")
    good = {"path": os.path.realpath(path), "size": s.st_size, "mtime_ns": s.st_mtime_ns, "ino": s.st_ino,
            "dev": s.st_dev, "position": s.st_size}
    target = state_path(state_dir, path)
    os.makedirs(os.path.dirname(target))

    def answer(state: object) -> bool:
        with open(target, "w", encoding="utf-8") as f:
            f.write(state if isinstance(state, str) else json.dumps(state))
        return needs_ingest(state_dir, path)

    assert answer(good) is False
    assert SourceState().version == STATE_VERSION  # the default this module assumes when the field is absent
    for bad in ({**good, "version": STATE_VERSION + 1}, {**good, "path": path + "x"}, {**good, "size": "9"},
                {**good, "ino": True}, {**good, "capped": 1}, [good], "{not json", "", {**good, "size": 1 + s.st_size}):
        assert answer(bad) is True, bad
    assert answer({**good, "capped": True, "position": 0}) is True  # a capped read with lines left
    assert answer({**good, "capped": True, "position": 0, "error": "boom"}) is False  # ... that failed at this size
    os.remove(target)
    assert needs_ingest(state_dir, path) is True and needs_ingest(state_dir, path + ".missing") is False
