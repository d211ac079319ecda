"""The consolidator (issue 5): old messages of a session -> a summary in Dream's history.

Only messages older than the newest 8 and not consolidated yet are sent (each cut to 300
characters); the summary (``history.appended``) and the mark (``session.consolidated``)
are one atomic batch; reruns do nothing; one consolidation per session at a time; a
failure records ``consolidation.failed`` and nothing else.
"""

from __future__ import annotations

import json
import os
import threading

import pytest

import processors
from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.errors import NotFound
from eventlog.events import (
    ConsolidationFailed,
    HistoryAppended,
    MessageAppended,
    SessionConsolidated,
    SessionCreated,
)
from processors.consolidator import (
    KEEP_RECENT,
    MESSAGE_CHARS,
    consolidate_session,
    is_consolidating,
    run_consolidate,
)
from processors.llm import Completion, LLMCallError, OfflineExtractor, Prompt
from processors.llm.fake import FakeLLM
from projections.naming import safe_name
from projections.sessions import MAX_FILE_MESSAGES

SUMMARY = "The user set up the project and prefers tabs."


@pytest.fixture
def ws(workspace):
    w = Workspace.open(workspace, writable=True)
    yield w
    w.close()


def add_messages(ws: Workspace, key: str, n: int, *, start: int = 0, size: int = 40, project: str = "") -> list[str]:
    """n messages (user/assistant alternating), each ``size`` characters with a unique head; returns their ids."""
    evs = []
    if start == 0:
        evs.append(SessionCreated(session_key=key, project=project, created_at="2025-01-01T00:00:00Z"))
    ids = []
    for i in range(start, start + n):
        head = f"<{key}#{i}>"
        evs.append(MessageAppended(session_key=key, message_id=f"{key}-{i}", role="user" if i % 2 == 0 else "assistant",
                                   content=(head + " " + "lorem ipsum " * (size // 12 + 1))[:size],
                                   timestamp=f"2025-01-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z"))
        ids.append(f"{key}-{i}")
    ws.append(evs)
    return ids


def events(ws: Workspace, cls: type | None = None, since: int = 1) -> list:
    return [e for e in ws.log.read(since) if cls is None or isinstance(e, cls)]


def test_only_messages_older_than_the_newest_8_are_sent_each_cut_at_a_word_within_300_characters(ws):
    ids = add_messages(ws, "s", 20, size=500)
    llm = FakeLLM(SUMMARY)
    result = consolidate_session(ws, llm, "s")
    assert (result.status, result.messages, result.up_to_count) == ("consolidated", 12, 12)
    [prompt] = llm.history
    sent = prompt.inputs["messages"]
    assert [m["content"].split(" ")[0] for m in sent] == [f"<s#{i}>" for i in range(12)]
    for m in sent:  # cut to at most 300 characters, at a word boundary, marked
        assert len(m["content"]) <= MESSAGE_CHARS and m["content"].endswith("…")
        assert m["content"][:-1].split(" ")[-1] in ("lorem", "ipsum"), "a message was cut mid-word"
    assert [m["role"] for m in sent] == ["user", "assistant"] * 6
    assert prompt.purpose == "consolidate"
    assert "<s#12>" not in prompt.user and "<s#11>" in prompt.user
    for line in prompt.user.splitlines():
        role, _, content = line.partition(": ")
        assert role in ("user", "assistant") and len(content) <= MESSAGE_CHARS
    assert KEEP_RECENT == 8 and MESSAGE_CHARS == 300
    [entry] = ws.history.entries
    assert entry.message_ids == ids[:12]


def test_a_session_with_8_messages_or_fewer_is_left_alone_without_a_model_call(ws):
    add_messages(ws, "short", 8)
    llm = FakeLLM(SUMMARY)
    end = ws.log.last_seq
    assert consolidate_session(ws, llm, "short").status == "nothing-to-do"
    assert run_consolidate(ws, llm).results == []
    assert llm.history == [] and ws.log.last_seq == end


def test_the_summary_and_the_consolidation_mark_are_one_atomic_batch(ws, monkeypatch, tmp_path):
    proj = str(tmp_path / "proj")
    ids = add_messages(ws, "s", 11, project=proj)
    batches: list[list[str]] = []
    real_append = ws.append

    def spy(evs):  # noqa: ANN001, ANN202
        batches.append([e.type for e in evs])
        return real_append(evs)

    monkeypatch.setattr(ws, "append", spy)
    start = ws.log.last_seq + 1
    consolidate_session(ws, FakeLLM(Completion(text=f"  {SUMMARY}\n", model="m-1", input_tokens=50, output_tokens=9)), "s")
    assert batches == [["history.appended", "session.consolidated"]]
    hist, mark = events(ws, since=start)
    assert isinstance(hist, HistoryAppended) and isinstance(mark, SessionConsolidated)
    assert mark.seq == hist.seq + 1
    assert (hist.text, hist.source, hist.session_key, hist.project) == (SUMMARY, "consolidator", "s", proj)
    assert hist.message_ids == ids[:3] and hist.refs == {"from_count": 0, "to_count": 3}
    assert (mark.session_key, mark.up_to_count, mark.up_to_message_id) == ("s", 3, ids[2])
    assert (mark.model, mark.input_tokens, mark.output_tokens) == ("m-1", 50, 9)
    ws.flush()
    with open(ws.path("sessions", safe_name("s", ".jsonl")), encoding="utf-8") as f:
        meta = json.loads(f.readline())
    assert meta["last_consolidated"] == 3


def test_consolidation_is_idempotent_and_later_picks_up_only_the_new_old_messages(ws):
    ids = add_messages(ws, "s", 12)
    llm = FakeLLM(SUMMARY, "second summary of later messages")
    assert consolidate_session(ws, llm, "s").up_to_count == 4
    end = ws.log.last_seq
    assert consolidate_session(ws, llm, "s").status == "nothing-to-do"
    assert run_consolidate(ws, llm).results == []
    assert run_consolidate(ws, llm, "s").results[0].status == "nothing-to-do"
    assert ws.log.last_seq == end and len(llm.history) == 1
    ids += add_messages(ws, "s", 5, start=12)
    [result] = run_consolidate(ws, llm).results
    assert (result.status, result.messages, result.up_to_count) == ("consolidated", 5, 9)
    assert [m["content"].split(" ")[0] for m in llm.history[1].inputs["messages"]] == [f"<s#{i}>" for i in range(4, 9)]
    marks = events(ws, SessionConsolidated)
    assert [(m.up_to_count, m.up_to_message_id) for m in marks] == [(4, ids[3]), (9, ids[8])]
    entries = ws.history.entries
    assert [e.message_ids for e in entries] == [ids[:4], ids[4:9]]


def test_consolidation_survives_a_restart_without_redoing_anything(workspace):
    ws = Workspace.open(workspace, writable=True)
    add_messages(ws, "s", 15)
    run_consolidate(ws, FakeLLM(SUMMARY))
    ws.close()
    import shutil

    shutil.rmtree(os.path.join(workspace, "state"))
    ws = Workspace.open(workspace, writable=True)
    try:
        llm = FakeLLM(SUMMARY)
        assert run_consolidate(ws, llm).results == [] and llm.history == []
    finally:
        ws.close()


class BlockingLLM(FakeLLM):
    """Waits inside ``complete`` until released, so a consolidation can be held open."""

    def __init__(self, *outputs) -> None:  # noqa: ANN002
        super().__init__(*outputs)
        self.entered = threading.Event()
        self.release = threading.Event()

    def complete(self, prompt: Prompt) -> Completion:
        self.entered.set()
        assert self.release.wait(10), "never released"
        return super().complete(prompt)


def test_only_one_consolidation_of_a_session_runs_at_a_time(ws):
    add_messages(ws, "s", 14)
    add_messages(ws, "other", 10)
    slow = BlockingLLM(SUMMARY)
    results = []
    t = threading.Thread(target=lambda: results.append(consolidate_session(ws, slow, "s")))
    t.start()
    try:
        assert slow.entered.wait(5)
        assert is_consolidating(ws, "s") and not is_consolidating(ws, "other")
        fast = FakeLLM(SUMMARY, SUMMARY)
        second = consolidate_session(ws, fast, "s")
        assert second.status == "busy" and fast.history == []
        # another session is not held up
        assert consolidate_session(ws, fast, "other").status == "consolidated"
    finally:
        slow.release.set()
        t.join(10)
    assert not t.is_alive()
    assert results[0].status == "consolidated" and results[0].up_to_count == 6
    assert not is_consolidating(ws, "s")
    marks = [m for m in events(ws, SessionConsolidated) if m.session_key == "s"]
    assert len(marks) == 1
    assert len([e for e in ws.history.entries if e.session_key == "s"]) == 1


def test_two_threads_racing_on_one_session_consolidate_it_exactly_once(ws):
    add_messages(ws, "s", 30)
    barrier = threading.Barrier(2)
    results = []

    class Racing(FakeLLM):
        def complete(self, prompt: Prompt) -> Completion:
            try:
                barrier.wait(0.5)  # the other thread, if it got in, is here too
            except threading.BrokenBarrierError:
                pass
            return super().complete(prompt)

    def go() -> None:
        results.append(consolidate_session(ws, Racing(SUMMARY), "s"))

    threads = [threading.Thread(target=go) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(r.status for r in results) in (["busy", "consolidated"], ["consolidated", "nothing-to-do"])
    assert len(events(ws, SessionConsolidated)) == 1 and len(events(ws, HistoryAppended)) == 1


@pytest.mark.parametrize("answer", [LLMCallError("timed out", kind="timeout"), LLMCallError("429", kind="rate_limit"),
                                    "", "   \n  "])
def test_a_failed_consolidation_records_consolidation_failed_and_nothing_else(ws, answer):
    add_messages(ws, "s", 12)
    start = ws.log.last_seq + 1
    result = consolidate_session(ws, FakeLLM(answer), "s")
    assert result.status == "failed" and result.reason
    [failed] = events(ws, since=start)
    assert isinstance(failed, ConsolidationFailed) and failed.session_key == "s" and failed.reason
    assert ws.sessions.index["s"].last_consolidated == 0
    assert ws.history.entries == []
    assert ws.compaction.streaks["s"].failures == 1
    # nothing was marked: the next attempt sends the same messages again
    llm = FakeLLM(SUMMARY)
    assert consolidate_session(ws, llm, "s").up_to_count == 4
    assert len(llm.history[0].inputs["messages"]) == 4
    assert "s" not in ws.compaction.streaks


def test_a_failure_message_never_leaks_into_history(ws):
    add_messages(ws, "s", 12)
    consolidate_session(ws, FakeLLM(LLMCallError("boom", kind="server")), "s")
    assert events(ws, HistoryAppended) == [] and events(ws, SessionConsolidated) == []
    assert not is_consolidating(ws, "s")


def test_consolidating_an_unknown_session_is_a_clear_error(ws):
    with pytest.raises(NotFound, match="nope"):
        run_consolidate(ws, FakeLLM(SUMMARY), "nope")


def test_every_message_a_session_marks_consolidated_was_sent_even_past_the_file_cap(ws):
    """The session file keeps the newest 2000 messages; the log keeps them all, and so must the consolidator."""
    n = MAX_FILE_MESSAGES + 30
    add_messages(ws, "big", n, size=20)
    llm = FakeLLM(SUMMARY, SUMMARY, SUMMARY, SUMMARY)
    for _ in range(4):
        consolidate_session(ws, llm, "big")
    sent = [m["content"].split(" ")[0] for p in llm.history for m in p.inputs["messages"]]
    marked = max(m.up_to_count for m in events(ws, SessionConsolidated))
    missing = sorted(set(range(marked)) - {int(h[5:-1]) for h in sent})
    assert missing == [], (f"messages {missing[0]}..{missing[-1]} were marked consolidated (up to {marked}) "
                           "but never sent to the model")


def test_run_consolidate_key_on_the_command_line(workspace, cli_runner):
    ws = Workspace.open(workspace, writable=True)
    add_messages(ws, "cli:1", 12)
    add_messages(ws, "cli:2", 12)
    ws.close()
    res = cli_runner.invoke(cli, ["run", "consolidate", "cli:1", "--llm", "offline", "--json"])
    assert res.exit_code == 0, res.stderr
    report = json.loads(res.stdout)
    assert [(r["session_key"], r["status"], r["up_to_count"]) for r in report["results"]] == [("cli:1", "consolidated", 4)]
    res = cli_runner.invoke(cli, ["run", "consolidate", "--llm", "offline", "--json"])
    assert [(r["session_key"], r["status"]) for r in json.loads(res.stdout)["results"]] == [("cli:2", "consolidated")]
    res = cli_runner.invoke(cli, ["run", "consolidate", "missing-key"])
    assert res.exit_code == 3 and "missing-key" in res.stderr


def test_offline_consolidation_summary_keeps_the_users_preferences(ws):
    evs = [SessionCreated(session_key="zh", created_at="2025-01-01T00:00:00Z")]
    said = ["我习惯早上写代码，不要在晚上十点以后给我发提醒", "好的", "I prefer tabs over spaces.", "Noted."] + ["ok", "ok"] * 5
    for i, text in enumerate(said):
        evs.append(MessageAppended(session_key="zh", message_id=f"z{i}", role="user" if i % 2 == 0 else "assistant",
                                   content=text, timestamp=f"2025-01-01T10:00:{i:02d}Z"))
    ws.append(evs)
    processors.run(ws, "consolidate", llm=OfflineExtractor())
    [entry] = ws.history.entries
    assert "我习惯早上写代码" in entry.text and "I prefer tabs over spaces" in entry.text
    assert entry.message_ids == [f"z{i}" for i in range(6)]



def test_two_processes_consolidating_one_session_at_once_record_it_once(ws, workspace, monkeypatch):
    """The recheck before recording and the append are one write turn: another process's
    consolidation cannot land between them (the per-session guard only covers one process)."""
    from processors import consolidator

    add_messages(ws, "s", 20)
    other = Workspace.open(workspace, writable=True, lock_timeout=30)  # as another process would
    real_pending = consolidator.pending_messages
    calls = {"n": 0}
    finished = threading.Event()

    def recheck_then_let_the_other_in(w, key):
        got = real_pending(w, key)
        calls["n"] += 1
        if w is ws and calls["n"] == 2:  # ws's recheck just passed: the other consolidates now, if it can
            threading.Thread(target=lambda: (consolidator._consolidate(other, FakeLLM(SUMMARY), "s"),
                                             finished.set()), daemon=True).start()
            finished.wait(1.0)
        return got

    monkeypatch.setattr(consolidator, "pending_messages", recheck_then_let_the_other_in)
    try:
        assert consolidate_session(ws, FakeLLM(SUMMARY), "s").status == "consolidated"
        assert finished.wait(30)
    finally:
        other.close()
    assert len(events(ws, HistoryAppended)) == 1 and len(events(ws, SessionConsolidated)) == 1


# -- following message.appended by seq (issue 20) ---------------------------------------


def seq_of(ws: Workspace, message_id: str) -> int:
    return next(r.seq for r in ws.log.records() if getattr(r.event, "message_id", None) == message_id)


def test_the_position_is_the_seq_of_the_last_summarised_message_and_follows_the_log(ws):
    """The mark records the seq; the next run reads the messages after it, not a count from the file."""
    from processors.consolidator import position

    ids = add_messages(ws, "s", 12)
    ws.append([MessageAppended(session_key="other", message_id="o-1", role="user", content="interleaved")])
    ids += add_messages(ws, "s", 6, start=12)
    consolidate_session(ws, FakeLLM(SUMMARY), "s")
    [mark] = events(ws, SessionConsolidated)
    assert (mark.up_to_count, mark.up_to_seq) == (10, seq_of(ws, ids[9]))
    assert position(ws, "s") == consolidator_position(mark.up_to_seq, 10)
    ids += add_messages(ws, "s", 5, start=18)
    llm = FakeLLM(SUMMARY)
    assert consolidate_session(ws, llm, "s").status == "consolidated"
    sent = [m["content"].split(" ")[0] for m in llm.history[0].inputs["messages"]]
    assert sent == [f"<s#{i}>" for i in range(10, 15)]
    assert events(ws, SessionConsolidated)[-1].up_to_seq == seq_of(ws, ids[14])


def consolidator_position(seq: int, count: int):
    from processors.consolidator import Position

    return Position(seq, count)


def test_a_position_an_older_evlog_recorded_as_a_count_is_converted_to_a_seq(ws):
    """Existing logs: a ``session.consolidated`` with a count only (no seq) is read as the seq of
    that many-th message of the session, so nothing is summarised twice or skipped."""
    ids = add_messages(ws, "s", 20)
    ws.append([SessionConsolidated(session_key="s", up_to_count=4, up_to_message_id=ids[3])])  # as an older evlog
    llm = FakeLLM(SUMMARY)
    result = consolidate_session(ws, llm, "s")
    assert (result.status, result.messages, result.up_to_count) == ("consolidated", 8, 12)
    assert "count" in result.reason
    [entry] = events(ws, HistoryAppended)
    assert entry.message_ids == ids[4:12]
    mark = events(ws, SessionConsolidated)[-1]
    assert (mark.up_to_count, mark.up_to_seq, mark.up_to_message_id) == (12, seq_of(ws, ids[11]), ids[11])
    assert consolidate_session(ws, FakeLLM(SUMMARY), "s").status == "nothing-to-do"


def test_a_projection_state_without_positions_falls_back_to_the_sessions_count(ws):
    """A compaction checkpoint saved before positions were kept has none: the session's count stands in."""
    ids = add_messages(ws, "s", 20)
    consolidate_session(ws, FakeLLM(SUMMARY), "s")
    ws.compaction.positions.clear()
    ids += add_messages(ws, "s", 3, start=20)
    llm = FakeLLM(SUMMARY)
    assert consolidate_session(ws, llm, "s").messages == 3
    assert events(ws, HistoryAppended)[-1].message_ids == ids[12:15]


@pytest.mark.parametrize("bad", ["not-a-message", "another-session", "past-the-end"])
def test_a_recorded_seq_that_does_not_hold_is_validated_and_converted_from_the_count(ws, bad):
    from processors.consolidator import position, position_problem

    ids = add_messages(ws, "s", 20)
    ws.append([MessageAppended(session_key="t", message_id="t-1", role="user", content="x")])
    seq = {"not-a-message": 1, "another-session": ws.log.last_seq, "past-the-end": ws.log.last_seq + 50}[bad]
    ws.append([SessionConsolidated(session_key="s", up_to_count=4, up_to_message_id=ids[3], up_to_seq=seq)])
    assert position_problem(ws, "s", seq, ws.sessions.index["s"].created_seq) is not None
    pos = position(ws, "s")
    assert (pos.seq, pos.count) == (seq_of(ws, ids[3]), 4) and "does not hold" in pos.note
    consolidate_session(ws, FakeLLM(SUMMARY), "s")
    assert events(ws, HistoryAppended)[-1].message_ids == ids[4:12]


def test_the_latest_content_of_an_updated_message_is_summarised(ws):
    from eventlog.events import MessageUpdated

    ids = add_messages(ws, "s", 10)
    ws.append([MessageUpdated(session_key="s", message_id=ids[1], content="<s#1> the finished answer")])
    llm = FakeLLM(SUMMARY)
    consolidate_session(ws, llm, "s")
    assert llm.history[0].inputs["messages"][1]["content"] == "<s#1> the finished answer"


def test_a_session_a_sync_pull_rebuilt_restarts_from_its_count_only_mark(ws):
    """A rebuild deletes and re-creates the session with a count-only mark (sync_plan.rebuild): the
    old seq is before the new session and its count is not the new one; the new count is converted."""
    from eventlog.events import SessionDeleted
    from processors.consolidator import position

    ids = add_messages(ws, "s", 30)
    consolidate_session(ws, FakeLLM(SUMMARY), "s")  # up to 22, by seq
    ws.append([SessionDeleted(session_key="s")])
    new = add_messages(ws, "s", 20)
    ws.append([SessionConsolidated(session_key="s", up_to_count=5)])
    pos = position(ws, "s")
    assert (pos.seq, pos.count) == (seq_of_last(ws, new[4]), 5) and new == ids[:20]
    consolidate_session(ws, FakeLLM(SUMMARY), "s")
    assert events(ws, HistoryAppended)[-1].message_ids == new[5:12]


def seq_of_last(ws: Workspace, message_id: str) -> int:
    return [r.seq for r in ws.log.records() if getattr(r.event, "message_id", None) == message_id][-1]


def test_a_session_longer_than_its_file_sends_exactly_the_next_200_messages(ws):
    """Before following by seq, a session past the file's window (2000) sent its first 200
    messages read from the log plus 1700 more from the file's slice, and recorded 200."""
    from processors.consolidator import MAX_MESSAGES

    ids = add_messages(ws, "s", MAX_FILE_MESSAGES + 500, size=12)
    result = consolidate_session(ws, FakeLLM(SUMMARY), "s")
    assert (result.messages, result.up_to_count) == (MAX_MESSAGES, MAX_MESSAGES)
    assert events(ws, HistoryAppended)[-1].message_ids == ids[:MAX_MESSAGES]
    consolidate_session(ws, FakeLLM(SUMMARY), "s")
    assert events(ws, HistoryAppended)[-1].message_ids == ids[MAX_MESSAGES : 2 * MAX_MESSAGES]
