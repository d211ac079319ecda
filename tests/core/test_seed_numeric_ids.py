"""The seed's own format with numeric ids runs through every processor (issue 19, section 5).

A catbuddy (seed-format) session may number its messages (``"id": 1``), time them with a
number and give content as a list of parts. The session file keeps those values as the
source wrote them; every processor must still read such a session with evlog's values
(``message_id`` "1", the content's text), never the raw number or list: ``evlog run
consolidate`` and ``autocompact`` used to exit with ``history.appended: Expected str, got
int at $.message_ids[0]`` on every such session, and the daemon failed them forever.
"""

from __future__ import annotations

import json

import pytest

from eventlog.app.session_store import LocalSessionStore
from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.events import HistoryAppended, SessionConsolidated

KEY = "cli:numbered"
COUNT = 20
# Each processor after the ones it reads from; the test of one runs its prefix.
PIPELINE = ["snapshot", "digest", "consolidate", "autocompact", "dream", "archive", "recall"]


def seed_lines() -> list[dict]:
    """A seed-format session: numeric ids and times, every third message's content as parts."""
    out: list[dict] = [{"key": KEY, "title": "numbered", "created_at": "2025-11-01T09:00:00Z", "metadata": {}}]
    for i in range(1, COUNT + 1):
        text = f"Message {i}: I prefer tabs over spaces and we use Python 3.11 in this project."
        content: object = [{"type": "text", "text": text}] if i % 3 == 0 else text
        out.append({"id": i, "sessionKey": KEY, "role": "user" if i % 2 else "assistant", "content": content,
                    "timestamp": 1762000000 + 60 * i})
    return out


@pytest.fixture
def seeded(workspace, tmp_path, cli_runner):
    src = tmp_path / "numbered.jsonl"
    src.write_text("".join(json.dumps(obj) + "\n" for obj in seed_lines()))
    res = cli_runner.invoke(cli, ["ingest", str(src)])
    assert res.exit_code == 0, res.output
    return workspace


@pytest.mark.parametrize("name", PIPELINE)
def test_every_processor_runs_on_a_seed_session_with_numeric_ids(seeded, cli_runner, name):
    for step in PIPELINE[: PIPELINE.index(name) + 1]:
        res = cli_runner.invoke(cli, ["run", step, "--json"])
        assert res.exit_code == 0, f"evlog run {step}: {res.output}{res.stderr}"
    res = cli_runner.invoke(cli, ["replay", "--check"])
    assert res.exit_code == 0, res.output + res.stderr


def test_consolidate_records_evlog_ids_and_text_of_a_numbered_session(seeded, cli_runner):
    res = cli_runner.invoke(cli, ["run", "consolidate", "--json"])
    assert res.exit_code == 0, res.output + res.stderr
    with Workspace.open(seeded) as ws:
        [entry] = [e for e in ws.log.read() if isinstance(e, HistoryAppended)]
        [mark] = [e for e in ws.log.read() if isinstance(e, SessionConsolidated)]
    assert entry.message_ids == [str(i) for i in range(1, COUNT - 8 + 1)]
    assert mark.up_to_message_id == str(COUNT - 8)


def test_the_session_store_reads_a_numbered_session_with_evlog_values(seeded):
    with Workspace.open(seeded, writable=True) as ws:
        msgs = LocalSessionStore(ws).history(KEY)
        [logged] = [e for e in ws.log.read() if getattr(e, "message_id", None) == "3"]
    assert [m.id for m in msgs] == [str(i) for i in range(1, COUNT + 1)]
    third = msgs[2]
    assert (third.content, third.timestamp) == (logged.content, logged.timestamp), "the log's values, not the source's"
    assert third.extra == {} and logged.extra["id"] == 3, "the source's own values stay in the event and the file"


def test_a_device_pulling_back_a_numbered_session_it_already_has_changes_nothing(seeded, tmp_path):
    """A push whose ``sync.pushed`` was lost (the process was killed after the gateway
    committed) comes back on the next pull: the rows equal what the device has, so nothing is
    applied; they must not look different (the source's id in ``extra``) and rebuild the session."""
    import shutil

    from eventlog.app.gateway import sync
    from eventlog.app.gateway.memory_store import MemoryGateway

    copy = str(tmp_path / "copy")
    shutil.copytree(seeded, copy)  # the device as it was before the push was recorded
    gw = MemoryGateway("seed")
    with Workspace.open(seeded, writable=True) as ws:
        assert sync.push(ws, remote=gw.remote("seed@example.test")).messages == COUNT
    with Workspace.open(copy, writable=True) as ws:
        before = ws.log.last_seq
        report = sync.pull(ws, remote=gw.remote("seed@example.test"))
        added = [e.type for e in ws.log.read(before + 1) if e.type != "sync.pulled"]
    assert (report.messages, report.rebuilt, added) == (0, 0, [])


def test_a_log_an_older_evlog_wrote_with_numeric_message_ids_still_reads_and_folds(workspace, cli_runner):
    """Before validation at the door the consolidator could write a numbered session's ids as
    numbers; such a log still reads, verifies, replays and feeds every processor (I21), while
    the door refuses the shape for anything new."""
    import os

    import msgspec

    from eventlog import codec
    from eventlog.errors import InvalidEventError
    from eventlog.events import SessionCreated

    old = HistoryAppended(text="an old summary", source="consolidator", session_key=KEY, message_ids=[1, 2])
    with Workspace.open(workspace, writable=True) as ws:
        ws.append([SessionCreated(session_key=KEY)])
        with pytest.raises(InvalidEventError, match="message_ids"):
            ws.append([old])
        seq = ws.log.last_seq
    log_dir = os.path.join(workspace, "log")
    [segment] = [n for n in os.listdir(log_dir) if n.endswith(".jsonl")]
    with open(os.path.join(log_dir, segment), "ab") as f:  # as the older evlog wrote it
        f.write(codec.frame(msgspec.structs.replace(old, seq=seq + 1, ts="2026-11-30T12:00:00.000Z")))
    for args in (["verify"], ["replay", "--check"], *(["run", p] for p in PIPELINE)):
        res = cli_runner.invoke(cli, list(args))
        assert res.exit_code == 0, f"evlog {' '.join(args)}: {res.output}{res.stderr}"
    with Workspace.open(workspace) as ws:
        [entry] = [e for e in ws.log.read() if isinstance(e, HistoryAppended) and e.text == "an old summary"]
    assert entry.message_ids == ["1", "2"]
