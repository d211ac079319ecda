"""Opening a workspace that is caught up: nothing new in the log, so nothing is written or read beyond the checkpoints.

(tools/bench_open.py times it at 1M and 10M events; these tests pin the behaviour its figures rest on.)
"""

from __future__ import annotations

import os

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended, SessionCreated
from projections.projector import CHECKPOINT, Projector
from projections.sessions import SessionsProjection


def _identity(path: str) -> tuple[int, int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns


def _home(tmp_path, sessions: int = 3) -> str:
    home = str(tmp_path / "home")
    init_workspace(home, durability="none")
    with Workspace.open(home, writable=True) as ws:
        for s in range(sessions):
            ws.append([SessionCreated(session_key=f"cli:s{s}", title=f"s{s}"),
                       *(MessageAppended(session_key=f"cli:s{s}", message_id=f"m{s}-{i}", role="user", content=f"hello {i}")
                         for i in range(4))])
    return home


def test_a_writer_that_opens_a_caught_up_workspace_and_closes_rewrites_no_checkpoint(tmp_path):
    home = _home(tmp_path)
    ckpt = os.path.join(home, CHECKPOINT)
    before = _identity(ckpt)
    with Workspace.open(home, writable=True) as ws:
        ws.catch_up()
        assert ws.projections.seq == ws.log.last_seq
        ws.flush()
    assert _identity(ckpt) == before


def test_a_writer_that_appended_writes_the_checkpoint_at_close(tmp_path):
    home = _home(tmp_path)
    ckpt = os.path.join(home, CHECKPOINT)
    before = _identity(ckpt)
    with Workspace.open(home, writable=True) as ws:
        ws.catch_up()
        ws.append([MessageAppended(session_key="cli:s0", message_id="new", role="user", content="one more")])
    assert _identity(ckpt) != before
    with Workspace.open(home) as ws:
        assert ws.sessions.index["cli:s0"].count == 5


def test_a_checkpoint_of_an_older_version_is_replayed_and_written_again(tmp_path):
    home = _home(tmp_path)
    ckpt = os.path.join(home, CHECKPOINT)
    with open(ckpt, "rb") as f:
        data = f.read()
    with open(ckpt, "wb") as f:
        f.write(data.replace(b'{"version":', b'{"version":1', 1))  # a version this code does not know
    with Workspace.open(home, writable=True) as ws:
        ws.catch_up()
    with open(ckpt, "rb") as f:
        assert f.read() == data  # replayed from the log and saved: the same state


def test_a_deleted_session_file_is_missing_and_the_writer_gives_it_back(tmp_path):
    home = _home(tmp_path)
    with Workspace.open(home, writable=True) as ws:
        ws.catch_up()
        files = [os.path.join(home, rel) for rel in ws.views.sessions.outputs()]
    assert len(files) == 3 and all(os.path.isfile(f) for f in files)
    with Workspace.open(home) as ws:
        ws.catch_up()
        assert not ws._proj().outputs_missing()  # noqa: SLF001
        os.remove(files[1])
        assert ws._proj().outputs_missing()  # noqa: SLF001
    with Workspace.open(home, writable=True) as ws:
        ws.catch_up()
    assert os.path.isfile(files[1])


def test_a_directory_or_a_link_in_place_of_a_file_counts_as_present_as_os_path_exists_says(tmp_path):
    home = _home(tmp_path, sessions=2)
    with Workspace.open(home) as ws:
        ws.catch_up()
        proj: Projector = ws._proj()  # noqa: SLF001
        first, second = (os.path.join(home, rel) for rel in proj.get("sessions").outputs())
        os.rename(first, first + ".moved")
        os.symlink(first + ".moved", first)  # a link to the file: present
        os.remove(second)
        os.mkdir(second)  # a directory: os.path.exists is True, so not "missing" (as before)
        assert not proj.outputs_missing()
        os.remove(first + ".moved")  # the link now dangles: missing
        assert proj.outputs_missing()


def test_the_sessions_checkpoint_decodes_typed_to_the_state_it_saved(tmp_path):
    home = _home(tmp_path)
    with Workspace.open(home) as ws:
        saved = ws.views.sessions.state()
        assert SessionsProjection.checkpoint_type is type(saved)
    with Workspace.open(home) as ws:
        assert ws.views.sessions.state() == saved


def test_a_processors_lag_is_counted_in_a_bounded_look(tmp_path, monkeypatch):
    import processors

    home = _home(tmp_path, sessions=4)  # 20 events, none processed by snapshot yet: 16 messages are its input
    monkeypatch.setattr(processors, "LAG_SCAN_RECORDS", 10)
    with Workspace.open(home) as ws:
        rows = {r.processor: r for r in processors.offsets(ws)}
    snap = rows["snapshot"]
    assert snap.behind == 20 and snap.lag == 8  # the first 10 events: 2 session.created, 8 messages
    assert snap.detail == "at least 8 input event(s) pending (in the next 10 of 20 events)"
    monkeypatch.setattr(processors, "LAG_SCAN_RECORDS", 20)
    with Workspace.open(home) as ws:
        snap = {r.processor: r for r in processors.offsets(ws)}["snapshot"]
    assert snap.lag == 16 and snap.detail == "16 input event(s) pending"


def test_dreams_pending_inputs_are_counted_in_the_same_bounded_look(tmp_path, monkeypatch):
    import processors

    home = _home(tmp_path, sessions=4)
    with Workspace.open(home) as ws:
        full = {r.processor: r for r in processors.offsets(ws)}["dream"]
    monkeypatch.setattr(processors, "LAG_SCAN_RECORDS", 10)
    with Workspace.open(home) as ws:
        dream = {r.processor: r for r in processors.offsets(ws)}["dream"]
    assert full.detail == f"{full.lag} input(s) pending" and full.lag >= dream.lag
    assert dream.detail == f"at least {dream.lag} input(s) pending (in the next 10 events)"
