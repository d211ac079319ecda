"""Transcript ingest on synthetic files written by these tests (real transcripts: test_ingest_real.py)."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eventlog.cli.ingest_command  # noqa: F401  (registers `evlog ingest` until eventlog.cli imports it)
import eventlog.ingest
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.errors import IngestError, NotFound, RefusedInput
from eventlog.events import MessageAppended, SessionCreated, SessionUpdated
from eventlog.ingest import collect_files, ingest_paths, parse_file

T0 = "2025-06-01T10:00:00.000Z"

# --------------------------------------------------------------------------- helpers


def write_jsonl(path, records, *, tail: bytes = b"", crlf: bool = False, bom: bool = False) -> str:
    """Write records (dicts, or raw bytes lines) as JSONL; ``tail`` is appended verbatim."""
    os.makedirs(os.path.dirname(str(path)) or ".", exist_ok=True)
    end = b"\r\n" if crlf else b"\n"
    data = b"".join((r if isinstance(r, bytes) else json.dumps(r, ensure_ascii=False).encode()) + end for r in records)
    with open(path, "wb") as f:
        f.write((b"\xef\xbb\xbf" if bom else b"") + data + tail)
    return str(path)


def append_jsonl(path, records) -> None:
    with open(path, "ab") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False).encode() + b"\n")


def run_ingest(home, *paths, **kw):
    ws = Workspace.open(home, writable=True)
    try:
        return ingest_paths(ws.log, [str(p) for p in paths], **kw)
    finally:
        ws.close()


def read_events(home, cls=None):
    ws = Workspace.open(home)
    try:
        evs = list(ws.log.read())
    finally:
        ws.close()
    return [e for e in evs if cls is None or isinstance(e, cls)]


def messages(home, session_key=None):
    return [e for e in read_events(home, MessageAppended) if session_key is None or e.session_key == session_key]


@pytest.fixture
def home(tmp_path):
    h = str(tmp_path / "ws")
    init_workspace(h)
    return h


def nanobot_meta(key="qq:42"):
    return {"_type": "metadata", "key": key, "created_at": "2026-03-08T14:53:54.118079", "updated_at": "2026-03-08T15:00:00",
            "metadata": {"nick": "cat"}, "last_consolidated": 0}


def nanobot_turn(n: int, ts: str):
    return [{"role": "user", "content": f"question {n}", "timestamp": ts},
            {"role": "assistant", "content": f"answer {n}", "timestamp": ts}]


def catbuddy_meta(key="desk:1", title="Groceries"):
    return {"key": key, "title": title, "preview": "", "created_at": T0, "updated_at": T0, "last_consolidated": 3,
            "metadata": {"channel": "desk"}}


def cc_user(uuid, parent, content, *, sid="sess-1", ts=T0, **kw):
    return {"parentUuid": parent, "isSidechain": False, "type": "user", "message": {"role": "user", "content": content},
            "uuid": uuid, "timestamp": ts, "sessionId": sid, "cwd": "/home/u/proj", "version": "2.1.0", **kw}


def cc_asst(uuid, parent, api_id, blocks, *, sid="sess-1", ts=T0, **kw):
    return {"parentUuid": parent, "isSidechain": False, "type": "assistant", "uuid": uuid, "timestamp": ts, "sessionId": sid,
            "message": {"id": api_id, "model": "claude-test", "role": "assistant", "content": blocks}, **kw}


def tool_result(tool_id, text, **kw):
    return {"type": "tool_result", "tool_use_id": tool_id, "content": text, **kw}


def codex_line(kind, payload, ts=T0):
    return {"timestamp": ts, "type": kind, "payload": payload}


def codex_rollout(sid="0199-abc"):
    return [
        codex_line("session_meta", {"id": sid, "timestamp": T0, "cwd": "/home/u/repo", "originator": "codex_exec",
                                    "cli_version": "0.135.0", "base_instructions": {"text": "long"}}),
        codex_line("turn_context", {"model": "gpt-test", "cwd": "/home/u/repo"}),
        codex_line("response_item", {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "be terse"}]}),
        codex_line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]}),
        codex_line("event_msg", {"type": "user_message", "message": "list files", "images": []}),
        codex_line("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "thinking"}]}),
        codex_line("response_item", {"type": "function_call", "name": "shell", "arguments": "{\"cmd\":[\"ls\"]}", "call_id": "call_1"}),
        codex_line("response_item", {"type": "function_call_output", "call_id": "call_1", "output": "a.txt\nb.txt"}),
        codex_line("event_msg", {"type": "agent_message", "message": "Two files."}),
        codex_line("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Two files."}],
                                     "phase": "final_answer"}),
        codex_line("event_msg", {"type": "token_count", "info": None}),
    ]


# --------------------------------------------------------------------------- catbuddy


def test_catbuddy_file_maps_metadata_line_to_session_and_keeps_ids_and_extra_fields(home, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        catbuddy_meta(),
        {"id": "m1", "sessionKey": "desk:1", "role": "user", "content": "buy milk", "timestamp": T0},
        {"id": "m2", "sessionKey": "desk:1", "role": "assistant", "content": "", "timestamp": T0,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "note", "arguments": "{}"}}]},
        {"id": "m3", "sessionKey": "desk:1", "role": "tool", "content": "saved", "timestamp": T0, "tool_call_id": "c1", "name": "note"},
    ])
    report = run_ingest(home, path)
    assert report.ok and report.files[0].format == "catbuddy"
    (created,) = read_events(home, SessionCreated)
    assert (created.session_key, created.title, created.created_at, created.metadata) == ("desk:1", "Groceries", T0, {"channel": "desk"})
    msgs = messages(home)
    assert [m.message_id for m in msgs] == ["m1", "m2", "m3"]
    assert msgs[1].tool_calls[0]["function"]["name"] == "note"
    assert msgs[2].extra == {"tool_call_id": "c1", "name": "note"}  # sessionKey is the session, not an extra field
    assert all(e.dedup.startswith("ingest:desk:1:") for e in read_events(home))


def test_evlog_session_files_written_by_the_projection_ingest_back_into_identical_messages(home, tmp_path):
    src = write_jsonl(tmp_path / "nb" / "qq_42.jsonl", [nanobot_meta(), *nanobot_turn(1, "2026-03-08T15:00:00"),
                                                        {"role": "tool", "content": "ok", "timestamp": "2026-03-08T15:00:00",
                                                         "tool_call_id": "t1", "name": "exec"}])
    run_ingest(home, src)  # closing the writable workspace writes sessions/
    sessions_dir = os.path.join(home, "sessions")
    files = [f for f in os.listdir(sessions_dir) if f.endswith(".jsonl")]
    assert len(files) == 1
    other = str(tmp_path / "other")
    init_workspace(other)
    with pytest.raises(RefusedInput):  # a workspace's own files are refused (issue 19): copy one out to move it
        run_ingest(other, os.path.join(sessions_dir, files[0]))
    copied = str(tmp_path / "moved.jsonl")
    shutil.copy(os.path.join(sessions_dir, files[0]), copied)
    report = run_ingest(other, copied)
    assert report.files[0].format == "catbuddy" and report.messages == 3

    def shape(m):
        return (m.session_key, m.message_id, m.role, m.content, m.tool_calls, m.extra)

    assert [shape(m) for m in messages(other)] == [shape(m) for m in messages(home)]
    # ...and into the workspace that wrote it, they are all duplicates
    again = run_ingest(home, copied)
    assert (again.messages, again.duplicates) == (0, 3)


def test_message_ids_repeated_inside_one_file_are_kept_once_and_counted_as_duplicates(home, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [catbuddy_meta(),
                                              {"id": "m1", "role": "user", "content": "a"},
                                              {"id": "m1", "role": "user", "content": "a again"}])
    report = run_ingest(home, path)
    assert report.ok and (report.messages, report.duplicates) == (1, 1)
    assert [m.content for m in messages(home)] == ["a"]


# --------------------------------------------------------------------------- nanobot


def test_nanobot_session_keeps_tool_calls_and_tool_fields_and_gets_stable_ids(home, tmp_path):
    call = {"id": "call_1", "type": "function", "function": {"name": "exec", "arguments": "{\"command\": \"dir\"}"}}
    path = write_jsonl(tmp_path / "qq_42.jsonl", [
        nanobot_meta(),
        {"role": "user", "content": "run dir", "timestamp": "2026-03-08T15:00:00"},
        {"role": "assistant", "content": "", "timestamp": "2026-03-08T15:00:00", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "name": "exec", "content": "C:\\\\Users\r\n\ufffd\ufffd", "timestamp": "2026-03-08T15:00:00"},
    ])
    run_ingest(home, path)
    (created,) = read_events(home, SessionCreated)
    assert created.session_key == "qq:42" and created.metadata == {"nick": "cat", "source_format": "nanobot"}
    user, asst, tool = messages(home)
    assert asst.tool_calls == [call] and asst.content == ""
    assert tool.role == "tool" and tool.extra == {"tool_call_id": "call_1", "name": "exec"}
    assert tool.content == "C:\\\\Users\r\n\ufffd\ufffd"
    assert user.timestamp == "2026-03-08T15:00:00"  # naive, as nanobot wrote it
    assert parse_file(path).sessions[0].messages[0].message_id == user.message_id  # derived the same way every time


def test_identical_nanobot_messages_get_distinct_ids_by_occurrence(tmp_path):
    prompt = {"role": "user", "content": "[Scheduled Task] drink water", "timestamp": "2026-03-08T09:00:00"}
    path = write_jsonl(tmp_path / "cron.jsonl", [nanobot_meta("cron:1"), prompt, prompt, prompt])
    ids = [m.message_id for m in parse_file(path).sessions[0].messages]
    assert len(set(ids)) == 3 and ids[1] == ids[0] + "#2" and ids[2] == ids[0] + "#3"


def test_grown_nanobot_file_appends_only_the_new_messages(home, tmp_path):
    path = write_jsonl(tmp_path / "qq_42.jsonl", [nanobot_meta(), *nanobot_turn(1, "2026-03-08T15:00:00"),
                                                  *nanobot_turn(1, "2026-03-08T15:00:00")])
    first = run_ingest(home, path)
    assert first.messages == 4
    append_jsonl(path, nanobot_turn(2, "2026-03-08T16:00:00"))
    second = run_ingest(home, path)
    assert (second.messages, second.duplicates) == (2, 4)
    assert [m.content for m in messages(home)][-2:] == ["question 2", "answer 2"]
    assert len(read_events(home, SessionCreated)) == 1


def test_grown_catbuddy_file_appends_only_the_new_messages(home, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [catbuddy_meta(), {"id": "m1", "role": "user", "content": "a"}])
    run_ingest(home, path)
    append_jsonl(path, [{"id": "m2", "role": "assistant", "content": "b"}])
    again = run_ingest(home, path)
    assert (again.messages, again.duplicates, again.events) == (1, 1, 1)


# --------------------------------------------------------------------------- claude code


def claude_session(sid="sess-1"):
    """A small main-session transcript: bookkeeping lines, a split response with interleaved results."""
    return [
        {"type": "file-history-snapshot", "messageId": "u1", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": T0, "sessionId": sid, "content": "hi"},
        cc_user("u1", None, "read both files", sid=sid),
        cc_asst("a1", "u1", "msg_1", [{"type": "text", "text": "\n\n"},
                                      {"type": "thinking", "thinking": "I should read them", "signature": "x"}], sid=sid),
        cc_asst("a2", "a1", "msg_1", [{"type": "text", "text": "Reading."}], sid=sid),
        cc_asst("a3", "a2", "msg_1", [{"type": "tool_use", "id": "tu1", "name": "Read", "input": {"path": "a"}}], sid=sid),
        {"type": "progress", "uuid": "p1", "parentUuid": "a3", "sessionId": sid, "timestamp": T0, "data": {"type": "hook_progress"}},
        cc_user("r1", "a3", [tool_result("tu1", "1→alpha")], sid=sid),
        cc_asst("a4", "r1", "msg_1", [{"type": "tool_use", "id": "tu2", "name": "Read", "input": {"path": "b"}}], sid=sid),
        cc_user("r2", "a4", [tool_result("tu2", [{"type": "text", "text": "no such file"}], is_error=True)], sid=sid),
        cc_asst("a5", "r2", "msg_2", [{"type": "text", "text": "b is missing."}], sid=sid),
        {"type": "system", "subtype": "turn_duration", "uuid": "y1", "parentUuid": "a5", "sessionId": sid, "timestamp": T0},
        cc_user("u2", "a5", [{"type": "text", "text": "[Request interrupted by user]"}], sid=sid),
        {"type": "last-prompt", "lastPrompt": "x", "leafUuid": "u2", "sessionId": sid},
    ]


def test_claude_response_split_over_lines_becomes_one_message_with_its_tool_calls(home, tmp_path):
    path = write_jsonl(tmp_path / "proj" / "sess-1.jsonl", claude_session())
    report = run_ingest(home, path)
    assert report.ok
    msgs = messages(home, "claude-code:sess-1")
    assert [(m.role, m.message_id) for m in msgs] == [
        ("user", "u1"), ("assistant", "a1"), ("tool", "r1"), ("tool", "r2"), ("assistant", "a5"), ("user", "u2")]
    resp = msgs[1]
    assert resp.content == "Reading."  # thinking (and a whitespace-only text block) is not content...
    assert resp.extra["thinking"] == "I should read them"  # ...it is kept aside
    assert [c["function"]["name"] for c in resp.tool_calls] == ["Read", "Read"]
    assert json.loads(resp.tool_calls[0]["function"]["arguments"]) == {"path": "a"}
    assert resp.extra["uuids"] == ["a1", "a2", "a3", "a4"] and resp.extra["api_message_id"] == "msg_1"
    assert resp.extra["model"] == "claude-test"


def test_claude_tool_results_become_tool_messages_with_the_call_id_and_tool_name(home, tmp_path):
    run_ingest(home, write_jsonl(tmp_path / "sess-1.jsonl", claude_session()))
    r1, r2 = [m for m in messages(home) if m.role == "tool"]
    assert (r1.content, r1.extra["tool_use_id"], r1.extra["tool_call_id"], r1.extra["name"]) == ("1→alpha", "tu1", "tu1", "Read")
    assert r2.content == "no such file" and r2.extra["is_error"] is True
    assert r1.extra["parentUuid"] == "a3"


def test_claude_bookkeeping_lines_are_skipped_and_counted_in_notes(home, tmp_path):
    report = run_ingest(home, write_jsonl(tmp_path / "sess-1.jsonl", claude_session()))
    (note,) = report.files[0].notes
    for kind in ("1 file-history-snapshot", "1 progress", "1 queue-operation", "1 system", "1 last-prompt"):
        assert kind in note
    assert not any("hook_progress" in m.content or m.role == "system" for m in messages(home))


def test_claude_interrupt_marker_stays_a_user_message(home, tmp_path):
    run_ingest(home, write_jsonl(tmp_path / "sess-1.jsonl", claude_session()))
    last = messages(home)[-1]
    assert (last.role, last.content) == ("user", "[Request interrupted by user]")


def test_claude_session_metadata_and_project_come_from_the_transcript_unless_project_is_given(home, tmp_path):
    path = write_jsonl(tmp_path / "sess-1.jsonl", claude_session())
    run_ingest(home, path)
    (created,) = read_events(home, SessionCreated)
    assert created.project == "/home/u/proj" and created.created_at == T0
    assert created.metadata == {"source_format": "claude-code", "sessionId": "sess-1", "cwd": "/home/u/proj", "version": "2.1.0"}
    other = str(tmp_path / "other")
    init_workspace(other)
    run_ingest(other, path, project="/srv/override")
    assert read_events(other, SessionCreated)[0].project == "/srv/override"


def test_claude_response_that_gained_lines_is_updated_in_place_under_the_same_id(home, tmp_path):
    from eventlog.app.session_store import LocalSessionStore
    from eventlog.events import MessageUpdated

    lines = claude_session()
    path = write_jsonl(tmp_path / "sess-1.jsonl", lines[:5])  # cut while msg_1 was being written
    run_ingest(home, path)
    assert messages(home)[-1].content == "Reading." and messages(home)[-1].tool_calls is None
    append_jsonl(path, lines[5:])
    again = run_ingest(home, path)
    assert [m.message_id for m in messages(home)].count("a1") == 1
    (update,) = read_events(home, MessageUpdated)
    assert update.message_id == "a1" and len(update.tool_calls) == 2
    assert again.messages == 4  # two results, the next response and the prompt (a1 is an update)
    assert run_ingest(home, path).events == 0
    with LocalSessionStore.open(home) as store:
        shown = [m for m in store.history("claude-code:sess-1") if m.id == "a1"]
    assert len(shown) == 1 and len(shown[0].tool_calls) == 2


def test_a_grown_response_is_updated_even_when_another_writer_stored_its_first_version(home, tmp_path):
    from eventlog.events import MessageUpdated
    from eventlog.log import Log

    lines = claude_session()
    path = write_jsonl(tmp_path / "sess-1.jsonl", lines[:5])  # cut while msg_1 was being written
    log_dir = os.path.join(home, "log")
    first, second = Log.open(log_dir, writable=True), Log.open(log_dir, writable=True)
    try:
        first.append(SessionCreated(session_key="other"))  # this writer's view of the log is now set
        ingest_paths(second, [path])  # another process stores the response as it was then
        append_jsonl(path, lines[5:])
        again = ingest_paths(first, [path])  # the first writer sees the grown response
    finally:
        first.close()
        second.close()
    (update,) = read_events(home, MessageUpdated)
    assert update.message_id == "a1" and len(update.tool_calls) == 2
    assert again.messages == 4
    assert [m.message_id for m in messages(home, "claude-code:sess-1")].count("a1") == 1


def test_claude_responses_with_the_same_redacted_id_stay_separate_across_a_prompt(home, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        cc_user("u1", None, "one"), cc_asst("a1", "u1", "[REDACTED]", [{"type": "text", "text": "first"}]),
        cc_user("u2", "a1", "two"), cc_asst("a2", "u2", "[REDACTED]", [{"type": "text", "text": "second"}]),
    ])
    run_ingest(home, path)
    assert [m.content for m in messages(home)] == ["one", "first", "two", "second"]


def test_claude_branches_are_flattened_in_file_order_keeping_parent_links(home, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        cc_user("u1", None, "root"), cc_asst("a1", "u1", "m1", [{"type": "text", "text": "hi"}]),
        cc_user("b1", "a1", "branch one"), cc_asst("a2", "b1", "m2", [{"type": "text", "text": "one"}]),
        cc_user("b2", "a1", "branch two (after a rewind)"), cc_asst("a3", "b2", "m3", [{"type": "text", "text": "two"}]),
    ])
    run_ingest(home, path)
    msgs = messages(home)
    assert [m.content for m in msgs] == ["root", "hi", "branch one", "one", "branch two (after a rewind)", "two"]
    assert [m.extra.get("parentUuid") for m in msgs if m.role == "user"] == [None, "a1", "a1"]


def test_claude_subagent_files_become_sessions_linked_to_their_parent(home, tmp_path):
    proj = tmp_path / "proj"
    write_jsonl(proj / "sess-1.jsonl", claude_session())
    agent = [dict(cc_user("s1", None, "Warmup"), isSidechain=True, agentId="abc"),
             dict(cc_asst("s2", "s1", "m9", [{"type": "text", "text": "ready"}]), isSidechain=True, agentId="abc")]
    write_jsonl(proj / "sess-1" / "subagents" / "agent-abc.jsonl", agent)
    write_jsonl(proj / "agent-def.jsonl", [dict(a, agentId="def", uuid=a["uuid"] + "x") for a in agent])  # 2.0.x layout
    report = run_ingest(home, proj)
    assert report.ok and len(report.files) == 3
    created = {e.session_key: e for e in read_events(home, SessionCreated)}
    assert set(created) == {"claude-code:sess-1", "claude-code:sess-1/agent-abc", "claude-code:sess-1/agent-def"}
    sub = created["claude-code:sess-1/agent-abc"]
    assert sub.metadata["parent_session"] == "claude-code:sess-1" and sub.metadata["agentId"] == "abc"
    assert sub.metadata["warmup"] is True
    assert [m.content for m in messages(home, "claude-code:sess-1/agent-abc")] == ["Warmup", "ready"]


def test_claude_inline_sidechains_become_one_session_per_root(home, tmp_path):
    side = {"isSidechain": True}
    path = write_jsonl(tmp_path / "s.jsonl", [
        cc_user("u1", None, "delegate"),
        cc_asst("a1", "u1", "m1", [{"type": "tool_use", "id": "t1", "name": "Task", "input": {"prompt": "look"}}]),
        dict(cc_user("x1", None, "look", cwd="/home/u/proj/sub"), **side),
        dict(cc_asst("x2", "x1", "m2", [{"type": "text", "text": "looked"}]), **side),
        dict(cc_user("y1", None, "look again"), **side),
        cc_user("r1", "a1", [tool_result("t1", "looked")]),
    ])
    run_ingest(home, path)
    keys = [e.session_key for e in read_events(home, SessionCreated)]
    assert keys == ["claude-code:sess-1", "claude-code:sess-1/sidechain-x1", "claude-code:sess-1/sidechain-y1"]
    assert [m.content for m in messages(home, "claude-code:sess-1/sidechain-x1")] == ["look", "looked"]
    assert [m.role for m in messages(home, "claude-code:sess-1")] == ["user", "assistant", "tool"]
    sub = read_events(home, SessionCreated)[1]
    assert sub.project == "/home/u/proj"  # the parent's project, though the agent changed directory


def test_claude_summary_in_another_file_titles_the_session_holding_its_leaf(home, tmp_path):
    proj = tmp_path / "proj"
    write_jsonl(proj / "sess-1.jsonl", claude_session())
    write_jsonl(proj / "zz-summaries.jsonl", [
        {"type": "summary", "summary": "Old branch", "leafUuid": "a1"},
        {"type": "summary", "summary": "Reading two files", "leafUuid": "u2"},  # the newest leaf wins
        {"type": "summary", "summary": "Elsewhere", "leafUuid": "not-in-this-run"},
    ])
    report = run_ingest(home, proj)
    assert report.ok
    (upd,) = read_events(home, SessionUpdated)
    assert (upd.session_key, upd.title) == ("claude-code:sess-1", "Reading two files")
    notes = report.files[1].notes
    assert any("not-in-this-run" in n and "not applied" in n for n in notes)
    assert run_ingest(home, proj).events == 0  # the title is not applied twice


def test_claude_titles_resolve_when_parsed_files_are_not_kept_in_memory(home, tmp_path, monkeypatch):
    monkeypatch.setattr(eventlog.ingest, "KEEP_PARSED_BYTES", 0)  # every file is parsed again for its append
    proj = tmp_path / "proj"
    write_jsonl(proj / "a-summaries.jsonl", [{"type": "summary", "summary": "Title", "leafUuid": "a5"}])
    write_jsonl(proj / "sess-1.jsonl", claude_session())
    report = run_ingest(home, proj)
    assert report.messages == 6
    assert [e.title for e in read_events(home, SessionUpdated)] == ["Title"]


def test_empty_and_snapshot_only_claude_files_ingest_nothing_without_error(home, tmp_path):
    proj = tmp_path / "proj"
    write_jsonl(proj / "empty.jsonl", [])
    write_jsonl(proj / "blank.jsonl", [b"", b"  "])
    write_jsonl(proj / "snap.jsonl", [{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}])
    report = run_ingest(home, proj)
    assert report.ok and report.events == 0
    assert [f.format for f in report.files] == ["empty", "empty", "claude-code"]


# --------------------------------------------------------------------------- codex


def test_codex_rollout_keeps_the_user_prompt_once_and_maps_roles_and_tool_calls(home, tmp_path):
    run_ingest(home, write_jsonl(tmp_path / "rollout.jsonl", codex_rollout()))
    (created,) = read_events(home, SessionCreated)
    assert created.session_key == "codex:0199-abc" and created.project == "/home/u/repo"
    assert created.metadata["model"] == "gpt-test" and "base_instructions" not in created.metadata
    msgs = messages(home)
    assert [(m.role, m.content) for m in msgs] == [
        ("system", "be terse"), ("user", "list files"), ("assistant", ""), ("tool", "a.txt\nb.txt"), ("assistant", "Two files.")]
    assert msgs[2].tool_calls == [{"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":[\"ls\"]}"}}]
    assert msgs[3].extra == {"tool_call_id": "call_1"}
    assert msgs[4].extra == {"phase": "final_answer", "model": "gpt-test"}


def test_grown_codex_rollout_appends_only_the_new_items(home, tmp_path):
    lines = codex_rollout()
    path = write_jsonl(tmp_path / "rollout.jsonl", lines[:4])
    assert run_ingest(home, path).messages == 2
    append_jsonl(path, lines[4:])
    again = run_ingest(home, path)
    assert (again.messages, again.duplicates) == (3, 2)


# --------------------------------------------------------------------------- bytes and text


def test_crlf_bom_astral_emoji_replacement_chars_and_ansi_escapes_are_kept_verbatim(home, tmp_path):
    text = "cat 🐈 \U0001F600 \ufffd\ufffd \x1b[31mred\x1b[0m 日本語"
    path = write_jsonl(tmp_path / "s.jsonl", [catbuddy_meta(), {"id": "m1", "role": "user", "content": text}],
                       crlf=True, bom=True)
    report = run_ingest(home, path)
    assert report.ok
    assert messages(home)[0].content == text


def test_a_seven_megabyte_message_goes_in_whole(home, tmp_path):
    big = ("0123456789abcdef" * 65536) * 7  # 7 MiB: under the 8 MiB line limit (a longer line is cut, issue 19)
    path = write_jsonl(tmp_path / "qq_1.jsonl", [nanobot_meta(), {"role": "tool", "content": big, "timestamp": "t"}])
    assert run_ingest(home, path).messages == 1
    assert messages(home)[0].content == big


# --------------------------------------------------------------------------- malformed files


def bad_files(tmp_path):
    good = write_jsonl(tmp_path / "in" / "a-good.jsonl", [nanobot_meta(), *nanobot_turn(1, "t")])
    truncated = write_jsonl(tmp_path / "in" / "b-truncated.jsonl", [nanobot_meta(), *nanobot_turn(1, "t")],
                            tail=b'{"role": "user", "content": "cut of')
    wrong_type = write_jsonl(tmp_path / "in" / "c-wrong-type.jsonl", [catbuddy_meta(), {"id": "m1", "role": "user", "content": "ok"},
                                                                      {"id": "m2", "role": 7, "content": "x"}])
    bad_utf8 = write_jsonl(tmp_path / "in" / "d-bad-utf8.jsonl", [nanobot_meta(), b'{"role": "user", "content": "caf\xe9"}'])
    not_transcript = write_jsonl(tmp_path / "in" / "e-not-transcript.jsonl", [{"name": "Alice", "age": 3}])
    return good, {truncated: (4, "truncated JSON"), wrong_type: (3, "'role' must be a non-empty string, got a number"),
                  bad_utf8: (2, "invalid UTF-8"), not_transcript: (1, "not a transcript")}


def test_malformed_files_report_path_line_and_reason_append_nothing_and_do_not_stop_the_others(home, tmp_path):
    good, bad = bad_files(tmp_path)
    report = run_ingest(home, tmp_path / "in")
    assert not report.ok
    by_path = {f.path: f for f in report.files}
    assert by_path[good].ok and by_path[good].messages == 2
    for path, (line, reason) in bad.items():
        r = by_path[path]
        assert r.error.startswith(f"{path}:{line}: ") and reason in r.error, r.error
        assert r.error_line == line and r.events == 0
    assert {e.session_key for e in read_events(home)} == {"qq:42"}  # only the good file's events


@pytest.mark.parametrize(("records", "line", "reason"), [
    ([nanobot_meta(), {"role": "user", "content": 42}], 2, "'content' must be a string, a list of parts or null, got a number"),
    ([nanobot_meta(), {"role": "assistant", "content": "", "tool_calls": "ls"}], 2, "'tool_calls' must be a list, got a string"),
    ([nanobot_meta(), ["role", "user"]], 2, "a message line must be a JSON object, got a list"),
    ([dict(nanobot_meta(), metadata=[1])], 1, "'metadata' must be a JSON object, got a list"),
    ([catbuddy_meta(), {"id": {"x": 1}, "role": "user", "content": "a"}], 2, "'id' must be a string or an integer, got an object"),
    ([cc_user("u1", None, "hi"), dict(cc_user("u2", "u1", "x"), isSidechain="yes")], 2, "'isSidechain' must be true or false"),
    ([cc_user("u1", None, "hi"), cc_asst("a1", "u1", "m", [{"type": "text", "text": None}])], 2, "'text' must be a string, got null"),
    ([cc_user("u1", None, 7)], 1, "message.content must be a string or a list of blocks, got a number"),
    ([{"type": "summary", "summary": 3, "leafUuid": "u1"}], 1, "'summary' must be a string, got a number"),
    ([codex_rollout()[0], {"timestamp": T0, "type": "response_item", "payload": "message"}], 2, "'payload' must be a JSON object"),
    ([codex_rollout()[1]], 1, "a Codex rollout starts with a session_meta line"),
    ([nanobot_meta(), b'{"role": "user", "content": "\\ud800 lone surrogate"}'], 2, "invalid JSON"),
])
def test_wrong_types_reject_the_file_naming_line_and_reason(home, tmp_path, records, line, reason):
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    report = run_ingest(home, path)
    (r,) = report.files
    assert r.error is not None and r.error.startswith(f"{path}:{line}: ") and reason in r.error, r.error
    assert read_events(home) == []


@settings(max_examples=60, deadline=None)
@given(turns=st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.sampled_from(["hi", "ok", "", "🐈"]),
                                st.sampled_from(["t1", "t2"])), max_size=12),
       cut=st.integers(min_value=0, max_value=12))
def test_message_ids_of_a_file_survive_it_growing(tmp_path_factory, turns, cut):
    d = tmp_path_factory.mktemp("grow")
    lines = [{"role": r, "content": c, "timestamp": t} for r, c, t in turns]
    cut = min(cut, len(lines))
    short = write_jsonl(d / "short.jsonl", [nanobot_meta(), *lines[:cut]])
    full = write_jsonl(d / "full.jsonl", [nanobot_meta(), *lines])
    ids_short = [m.message_id for m in parse_file(short).sessions[0].messages]
    ids_full = [m.message_id for m in parse_file(full).sessions[0].messages]
    assert ids_full[:cut] == ids_short and len(set(ids_full)) == len(ids_full)


def test_a_csv_or_markdown_file_named_on_the_command_line_is_not_a_transcript(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nnot json\n")
    with pytest.raises(IngestError, match=r"notes\.md:1: not a transcript"):
        parse_file(str(path))


def test_forcing_the_wrong_format_is_a_per_file_error(home, tmp_path):
    path = write_jsonl(tmp_path / "rollout.jsonl", codex_rollout())
    report = run_ingest(home, path, fmt="nanobot")
    assert "rollout.jsonl:1: line 1 must be nanobot's metadata line" in report.files[0].error
    assert run_ingest(home, path, fmt="codex").messages == 5


def test_each_format_is_detected_from_its_first_line(tmp_path):
    files = {
        "catbuddy": write_jsonl(tmp_path / "c.jsonl", [catbuddy_meta()]),
        "nanobot": write_jsonl(tmp_path / "n.jsonl", [nanobot_meta()]),
        "claude-code": write_jsonl(tmp_path / "cc.jsonl", claude_session()),
        "codex": write_jsonl(tmp_path / "x.jsonl", codex_rollout()),
    }
    assert {fmt: parse_file(p).format for fmt, p in files.items()} == {f: f for f in files}


# --------------------------------------------------------------------------- paths


def test_folders_are_searched_recursively_for_jsonl_files_once_each(tmp_path):
    root = tmp_path / "root"
    a = write_jsonl(root / "a.jsonl", [])
    b = write_jsonl(root / "sub" / "deeper" / "b.jsonl", [])
    write_jsonl(root / "README.jsonl.md", [])
    write_jsonl(root / ".hidden" / "c.jsonl", [])
    write_jsonl(root / ".d.jsonl", [])
    assert collect_files([str(root), a, str(root / "sub")]) == [a, b]


def test_a_missing_path_raises_before_anything_is_appended(home, tmp_path):
    good = write_jsonl(tmp_path / "a.jsonl", [nanobot_meta(), *nanobot_turn(1, "t")])
    with pytest.raises(NotFound, match="nope"):
        run_ingest(home, good, tmp_path / "nope")
    assert read_events(home) == []


# --------------------------------------------------------------------------- command line


def test_cli_ingest_exits_0_and_prints_a_line_per_file_and_a_summary_to_stderr(cli_runner, workspace, tmp_path):
    path = write_jsonl(tmp_path / "qq_1.jsonl", [nanobot_meta(), *nanobot_turn(1, "t")])
    res = cli_runner.invoke(cli, ["ingest", path])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert lines[0].startswith("ok") and path in lines[0] and "nanobot" in lines[0] and "2 new message(s)" in lines[0]
    assert lines[-1].startswith("ingested 1 of 1 file(s)")
    assert "ingesting" not in res.stderr  # no progress bar when stderr is not a terminal


def test_cli_ingest_exits_1_when_some_files_failed_and_still_ingests_the_rest(cli_runner, workspace, tmp_path):
    good, bad = bad_files(tmp_path)
    res = cli_runner.invoke(cli, ["ingest", str(tmp_path / "in")])
    assert res.exit_code == 1
    assert sum(line.startswith("FAILED") for line in res.stderr.splitlines()) == len(bad)
    assert "4 file(s) FAILED" in res.stderr
    assert len(messages(workspace)) == 2


def test_cli_ingest_exits_3_for_a_path_that_does_not_exist(cli_runner, workspace, tmp_path):
    res = cli_runner.invoke(cli, ["ingest", str(tmp_path / "missing.jsonl")])
    assert res.exit_code == 3 and "no such file or directory" in res.stderr
    assert read_events(workspace) == []


def test_cli_ingest_json_prints_one_object_per_file_on_stdout(cli_runner, workspace, tmp_path):
    good, bad = bad_files(tmp_path)
    res = cli_runner.invoke(cli, ["ingest", "--json", str(tmp_path / "in")])
    assert res.exit_code == 1
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["path"] for r in rows] == sorted([good, *bad])
    assert rows[0] == {"path": good, "format": "nanobot", "sessions": 1, "messages": 2, "duplicates": 0, "events": 3,
                       "error": None, "error_line": 0, "notes": [], "redacted": {}, "warnings": [],
                       "ok": True}
    assert all(not r["ok"] and r["error"] for r in rows[1:])
    again = cli_runner.invoke(cli, ["ingest", "--json", good])
    assert json.loads(again.stdout)["duplicates"] == 2 and json.loads(again.stdout)["messages"] == 0


def test_cli_ingest_format_and_project_options(cli_runner, workspace, tmp_path):
    path = write_jsonl(tmp_path / "rollout.jsonl", codex_rollout())
    res = cli_runner.invoke(cli, ["ingest", "--format", "codex", "--project", str(tmp_path / "p"), path])
    assert res.exit_code == 0, res.stderr
    assert read_events(workspace, SessionCreated)[0].project == str(tmp_path / "p")
    assert cli_runner.invoke(cli, ["ingest", "--format", "yaml", path]).exit_code == 2


def test_cli_ingest_draws_progress_only_on_a_terminal(cli_runner, workspace, tmp_path, monkeypatch):
    monkeypatch.setattr(eventlog.cli.ingest_command, "stderr_is_tty", lambda: True)
    path = write_jsonl(tmp_path / "qq_1.jsonl", [nanobot_meta(), *nanobot_turn(1, "t")])
    res = cli_runner.invoke(cli, ["ingest", path])
    assert res.exit_code == 0
    assert "ingesting" in res.stderr and "ok     " + path in res.stderr
