"""Transcript ingest on real third-party data, read in place from ../shared/data/real (see its README).

The whole set is ingested once per module (a few hundred milliseconds); each test then
checks one promise of the mapping against facts the data's README states.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.events import MessageAppended, SessionCreated, SessionUpdated
from eventlog.ingest import ingest_paths
from tests.conftest import real_data

SPOTTER = "claude-code:4d5611e5-241a-462a-8d15-5122611a9569"
BRANCHING = "claude-code:b3edadab-bca0-4054-9b41-f7ffa6941260"
CLEAR = "claude-code:0d3b22c1-ba90-4fd3-b8d2-056ffc626725"
VIEWER_BIG = "claude-code:fe5e1c67-53e7-4862-81ae-d0e013e3270b"
VIEWER_JA = "claude-code:5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
VIEWER_SMALL = "claude-code:1af7fc5e-8455-4414-9ccd-011d40f70b2a"
CODEX = "codex:019e9625-802f-7e91-840a-cfe88d14117a"


class Ingested:
    """Everything the module's tests look at: both reports and the log's events."""

    def __init__(self, home: str, first, second, events) -> None:  # noqa: ANN001
        self.home, self.first, self.second, self.events = home, first, second, events
        self.created = {e.session_key: e for e in events if isinstance(e, SessionCreated)}
        self.titles = {e.session_key: e.title for e in events if isinstance(e, SessionUpdated)}
        self.by_session: dict[str, list[MessageAppended]] = {}
        for e in events:
            if isinstance(e, MessageAppended):
                self.by_session.setdefault(e.session_key, []).append(e)

    def messages(self, key: str) -> list[MessageAppended]:
        return self.by_session.get(key, [])

    def result(self, name: str):  # noqa: ANN201
        (r,) = [f for f in self.first.files if os.path.basename(f.path) == name]
        return r


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> Ingested:
    paths = [
        real_data("claude-spotter"),
        real_data("claude-code-viewer"),
        real_data("claude-kfischer-branching", "-Users-user-project"),
        real_data("nanobot-sessions"),
        real_data("agent-history-real-sessions"),
    ]
    home = str(tmp_path_factory.mktemp("real") / "ws")
    init_workspace(home)
    ws = Workspace.open(home, writable=True)
    try:
        first = ingest_paths(ws.log, paths)
        last = ws.log.last_seq
        second = ingest_paths(ws.log, paths)
        assert ws.log.last_seq == last
    finally:
        ws.close()
    ro = Workspace.open(home)
    try:
        events = list(ro.log.read())
    finally:
        ro.close()
    return Ingested(home, first, second, events)


# --------------------------------------------------------------------------- the whole set


def test_every_real_transcript_file_ingests_without_error(real):
    assert [f.error for f in real.first.files if f.error] == []
    # 6 spotter + 3 viewer + 29 in the branching project folder + 5 nanobot + 2 agent-history
    assert len(real.first.files) == 45
    assert real.first.messages > 900


def test_ingesting_the_real_data_again_appends_no_message_events(real):
    assert real.second.ok
    assert (real.second.messages, real.second.events) == (0, 0)
    assert real.second.duplicates == real.first.messages


def test_every_event_carries_an_ingest_dedup_key(real):
    assert all(e.dedup.startswith("ingest:") for e in real.events)


# --------------------------------------------------------------------------- claude code


def test_claude_responses_split_over_lines_become_one_message_each(real):
    msgs = [m for m in real.messages(SPOTTER) if m.role == "assistant"]
    per_response = Counter(m.extra["api_message_id"] for m in msgs)
    assert len(per_response) == 139 and set(per_response.values()) == {1}
    (tools3,) = [m for m in msgs if m.extra["api_message_id"] == "msg_01Aci2WjhVxhEoZK5GJvwVrD"]
    assert len(tools3.tool_calls) == 3 and len(tools3.extra["uuids"]) >= 3


def test_claude_tool_results_follow_the_response_that_called_them(real):
    msgs = real.messages(SPOTTER)
    called_at: dict[str, int] = {}
    for i, m in enumerate(msgs):
        for call in m.tool_calls or ():
            called_at[call["id"]] = i
        if m.role == "tool":
            assert called_at[m.extra["tool_call_id"]] < i
            assert m.extra["name"]


def test_claude_bookkeeping_lines_are_not_messages(real):
    note = real.result("4d5611e5-241a-462a-8d15-5122611a9569.jsonl").notes[0]
    assert "1083 progress" in note and "14 file-history-snapshot" in note and "6 system" in note  # hooks, durations, compaction
    assert not any(m.role == "system" for m in real.messages(SPOTTER))
    (session_01,) = [k for k in real.by_session if k.startswith("claude-code:06090cb1")]
    assert [m.role for m in real.messages(session_01)] == ["user", "assistant"]  # queue-operation, last-prompt skipped


def test_claude_compact_summary_stays_a_flagged_user_message(real):
    (summary,) = [m for m in real.messages(SPOTTER) if m.extra.get("isCompactSummary")]
    assert summary.role == "user" and summary.message_id == "e95c1e9a-5084-4e69-bf3d-42c8d45f3985"


def test_claude_subagent_files_become_sessions_linked_to_the_parent(real):
    for agent, count in (("a2898e3", 46), ("acompact-e1f845", 5)):
        key = f"{SPOTTER}/agent-{agent}"
        assert real.created[key].metadata["parent_session"] == SPOTTER
        assert len(real.messages(key)) == count
    task = f"{BRANCHING}/agent-a434715"
    assert real.created[task].metadata["agentId"] == "a434715" and "warmup" not in real.created[task].metadata
    assert any(m.tool_calls for m in real.messages(task))
    warmups = [k for k, e in real.created.items() if e.metadata.get("warmup")]
    assert len(warmups) == 18  # 19 agent-*.jsonl in the folder: 18 "Warmup" probes and the real Task agent
    assert not any(m.extra.get("isSidechain") for m in real.messages(SPOTTER))


def test_claude_inline_sidechains_become_one_session_per_root(real):
    big = [k for k in real.created if k.startswith(VIEWER_BIG + "/sidechain-")]
    ja = [k for k in real.created if k.startswith(VIEWER_JA + "/sidechain-")]
    assert (len(big), len(ja)) == (5, 2)  # 6 and 3 roots, one of them the main conversation
    assert sum(len(real.messages(k)) for k in big) > len(real.messages(VIEWER_BIG))  # most lines are sidechain
    assert all(real.created[k].project == "/path/to/Demo" for k in big)


def test_claude_summaries_title_sessions_across_files_newest_leaf_first(real):
    assert real.titles[BRANCHING] == "Testing file creation, editing, and agent task handling"  # branch 5, in 3f6ddfee
    assert real.titles[CLEAR] == "Claude Code CLI Session Started"  # its summary is in a751b8dd
    assert real.titles[VIEWER_SMALL] == "Empty Repo Setup: CLAUDE.md Foundation Created"  # from fe5e1c67's first line
    assert real.result("be89c3cd-bfbf-4c4f-a515-5af6e13249bf.jsonl").sessions == 0


def test_claude_branches_are_flattened_and_the_interrupt_marker_kept(real):
    msgs = real.messages(BRANCHING)
    children = Counter(m.extra.get("parentUuid") for m in msgs if m.role == "user")
    assert children.most_common(1)[0][1] >= 3  # the rewinds fork one parent
    assert [m.role for m in msgs if m.content == "[Request interrupted by user]"] == ["user"]
    assert any(m.content == "Ok ultrathink and try again" for m in msgs)


def test_claude_thinking_is_kept_aside_not_in_content(real):
    thought = [m for m in real.messages(BRANCHING) if "thinking" in m.extra]
    assert thought
    assert all(m.extra["thinking"] not in m.content for m in thought)


def test_claude_empty_files_ingest_nothing_without_error(real):
    for name in ("0f13eeba-e6ed-42ea-ad8c-d8db37e1304e.jsonl", "34d48ba8-bf7c-478e-aa05-b568b8be4cd1.jsonl"):
        r = real.result(name)
        assert r.ok and (r.format, r.sessions, r.events) == ("empty", 0, 0)


def test_claude_error_results_ansi_escapes_japanese_and_emoji_survive(real):
    viewer = [m for k, ms in real.by_session.items() if k.startswith(VIEWER_BIG) for m in ms]
    assert sum(1 for m in viewer if m.extra.get("is_error")) == 23
    assert any("\x1b[" in m.content for m in viewer)
    assert any(any(ord(ch) > 0xFFFF for ch in m.content) for m in viewer)
    assert any("@CLAUDE.md を最新の状態にアップデートしてください" in m.content for m in real.messages(VIEWER_JA))
    (short,) = [k for k in real.by_session if k.startswith("claude-code:55604662")]
    (stdout,) = [m for m in real.messages(short) if "\x1b[" in m.content]  # /model's output, a local_command line
    assert stdout.content == "<local-command-stdout>Kept model as \x1b[1mDefault (recommended)\x1b[22m</local-command-stdout>"
    assert (stdout.role, stdout.extra["subtype"]) == ("user", "local_command")


# --------------------------------------------------------------------------- nanobot


def test_nanobot_tool_calls_and_tool_replies_are_kept(real):
    msgs = real.messages("qq:D536FE422F10DDB19442A6AAE7AB66FC")
    calls = {c["id"]: c["function"]["name"] for m in msgs for c in m.tool_calls or ()}
    replies = [m for m in msgs if m.role == "tool"]
    assert calls and replies
    assert all(calls[m.extra["tool_call_id"]] == m.extra["name"] for m in replies)
    assert sum(m.content.count("\ufffd") for m in msgs) == 92  # the mojibake is kept, not repaired


def test_nanobot_repeated_scheduled_prompts_are_all_kept(real):
    msgs = real.messages("cron:ee40e6bb")
    prompts = [m for m in msgs if m.role == "user" and m.content.startswith("[Scheduled Task]")]
    assert len(prompts) == 5 and len({m.message_id for m in prompts}) == 5
    assert real.created["cron:ee40e6bb"].metadata["source_format"] == "nanobot"


# --------------------------------------------------------------------------- codex


def test_codex_user_prompt_appears_once_and_developer_becomes_system(real):
    msgs = real.messages(CODEX)
    assert [m.role for m in msgs] == ["system", "user", "user", "assistant"]
    assert [m.content for m in msgs].count("[REDACTED_PROMPT]") == 1
    assert msgs[-1].content == "[REDACTED_ASSISTANT_TEXT]" and msgs[-1].extra["phase"] == "final_answer"
    assert real.created[CODEX].project == "/tmp/agent-history-real-agent/codex/workspace"
