"""``evlog audit`` (issue 5): Dream runs listed, and every MEMORY.md line explained.

The human output is compared with golden files under tests/golden/audit/ after the
volatile parts (the log's timestamps, prompt hashes, temporary paths) are replaced by
placeholders. Set EVLOG_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate
change of the format (and review the diff).
"""

from __future__ import annotations

import json
import os
import re

import pytest

from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.events import MemoryAppended, MessageAppended, SessionCreated
from processors.audit import dream_runs, why
from processors.dream import remember, run_dream
from processors.llm import Completion, LLMCallError
from processors.llm.fake import FakeLLM
from tests.conftest import REPO

GOLDEN = os.path.join(REPO, "tests", "golden", "audit")


def c(text: str, i: int = 100, o: int = 20) -> Completion:
    return Completion(text=text, model="claude-test", input_tokens=i, output_tokens=o)


def ops(*items: dict) -> str:
    return json.dumps({"ops": list(items)})


def add(text: str, source: str, *, scope: str = "global", section: str = "Preferences") -> dict:
    return {"op": "add", "text": text, "subject": "project" if scope == "project" else "user", "scope": scope,
            "section": section, "sources": [source]}


def build_history(home: str, proj: str) -> None:
    """Six Dream runs, one of each kind: valid, partial, noop, failed (then retried), interrupted."""
    ws = Workspace.open(home, writable=True)
    try:
        ws.register_project(proj)  # the user named it: its MEMORY.md is mirrored there
        ws.append([SessionCreated(session_key="cli:alice", created_at="2025-04-01T09:00:00Z", project=proj)] + [
            MessageAppended(session_key="cli:alice", message_id=f"msg-{i}", role=role, content=text,
                            timestamp=f"2025-04-01T09:0{i}:00Z")
            for i, (role, text) in enumerate([
                ("user", "I prefer tabs over spaces, always."),
                ("assistant", "Understood, tabs."),
                ("user", "In this project we use pytest with -x."),
                ("assistant", "Noted."),
            ])])
        run_dream(ws, FakeLLM(c(ops(add("The user prefers tabs over spaces.", "m1"),
                                    add("The project runs pytest with -x.", "m3", scope="project",
                                        section="Project Context")), 310, 25)))
        remember(ws, "I never deploy on fridays and I review every pull request myself")
        run_dream(ws, FakeLLM(c(ops(add("The user never deploys on Fridays.", "m1"),
                                    add("The user reviews every pull request.", "m9")), 150, 30)))
        remember(ws, "thanks, that is all for today")
        run_dream(ws, FakeLLM(c(ops(), 140, 16)))
        remember(ws, "我习惯早上写代码")
        run_dream(ws, FakeLLM(c("ok", 120, 1), c("fine", 130, 1)))
        run_dream(ws, FakeLLM(c(ops(add("用户习惯早上写代码。", "m1", section="Preferences")), 125, 20)),
                  retry_failed=True)
        remember(ws, "I like dark themes")
        with pytest.raises(KeyboardInterrupt):
            run_dream(ws, FakeLLM(KeyboardInterrupt()))
    finally:
        ws.close()


@pytest.fixture
def audited(workspace, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    build_history(workspace, str(proj))
    return workspace, str(proj)


def normalise(text: str, home: str, proj: str) -> str:
    ws = Workspace.open(home)
    try:
        evs = list(ws.log.read())
    finally:
        ws.log.close()
    volatile = {e.ts[:19] for e in evs}
    for e in evs:  # a project fact's id hashes the project's (temporary) path
        if isinstance(e, MemoryAppended) and e.project:
            text = text.replace(e.fact_id, "<PROJECT-FACT-ID>")
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", lambda m: "<TIME>" if m.group(0) in volatile else m.group(0),
                  text)
    days = {e.ts[:10] for e in evs}
    text = re.sub(r"true since (\d{4}-\d\d-\d\d)", lambda m: "true since <DAY>" if m.group(1) in days else m.group(0), text)
    text = re.sub(r"xxh3_128:[0-9a-f]{32}", "<PROMPT-HASH>", text)
    return text.replace(proj, "<PROJECT>")


def golden(name: str, actual: str) -> None:
    path = os.path.join(GOLDEN, name)
    if os.environ.get("EVLOG_UPDATE_GOLDEN"):
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(actual)
    assert os.path.exists(path), f"golden file {path} is missing (EVLOG_UPDATE_GOLDEN=1 writes it)"
    with open(path, encoding="utf-8") as f:
        assert actual == f.read()


def outcome(line: str) -> str:
    return re.search(r"attempts \d+ (\S+)", line).group(1)


def ok(res):  # noqa: ANN001, ANN201
    assert res.exit_code == 0, (res.stdout, res.stderr)
    return res


# -- listing runs --------------------------------------------------------------------------


def test_audit_lists_every_run_with_time_model_range_attempts_outcome_tokens_and_facts(audited, cli_runner):
    home, proj = audited
    lines = ok(cli_runner.invoke(cli, ["audit", "-n", "0"])).stdout.splitlines()
    assert len(lines) == 6
    outcomes = [outcome(ln) for ln in lines]
    assert outcomes == ["valid", "partial", "noop", "failed", "valid", "interrupted"]
    for ln in lines:
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d dream-\d+ ", ln), ln
        assert "claude-test" in ln or "fake-model" in ln
        assert re.search(r"entries \d+\.\.\d+ \(\d+\)", ln) and re.search(r"attempts \d", ln)
        assert re.search(r"tokens \d+\+\d+ facts \+\d+", ln)
    assert "tokens 310+25 facts +2" in lines[0]
    assert "attempts 1 partial" in lines[1] and "tokens 150+30 facts +1" in lines[1] and "m9" in lines[1]
    assert "facts +0" in lines[2]
    retry_run = lines[4].split()[1]
    assert f"retried by {retry_run}" in lines[3] and "no usable operation" in lines[3]
    assert "attempts 0 interrupted" in lines[5]


def test_audit_human_output_matches_the_golden_file(audited, cli_runner):
    home, proj = audited
    out = ok(cli_runner.invoke(cli, ["audit"])).stdout
    golden("runs.txt", normalise(out, home, proj))


def test_audit_n_shows_only_the_newest_runs(audited, cli_runner):
    lines = ok(cli_runner.invoke(cli, ["audit", "-n", "2"])).stdout.splitlines()
    assert [outcome(ln) for ln in lines] == ["valid", "interrupted"]


def test_audit_json_is_one_object_per_run_per_line(audited, cli_runner):
    home, _proj = audited
    lines = ok(cli_runner.invoke(cli, ["audit", "--json"])).stdout.splitlines()
    rows = [json.loads(ln) for ln in lines]
    assert len(rows) == 6
    for row in rows:
        for key in ("run_id", "time", "model", "input_cursors", "attempts", "input_tokens", "output_tokens",
                    "fact_ids", "prompt_hash"):
            assert key in row, key
    first = rows[0]
    assert (first["attempts"], first["input_tokens"], first["output_tokens"], len(first["fact_ids"])) == (1, 310, 25, 2)
    assert first["model"] == "claude-test" and first["prompt_hash"].startswith("xxh3_128:")
    assert rows[3]["retried_by"] == rows[4]["run_id"] and rows[4]["retry_of"] == rows[3]["run_id"]
    ws = Workspace.open(home)
    try:
        assert [r["run_id"] for r in rows] == [r.run_id for r in dream_runs(ws, 0)]
    finally:
        ws.log.close()


def test_audit_json_names_the_same_outcome_as_the_human_listing(audited, cli_runner):
    human = [outcome(ln) for ln in ok(cli_runner.invoke(cli, ["audit"])).stdout.splitlines()]
    rows = [json.loads(ln) for ln in ok(cli_runner.invoke(cli, ["audit", "--json"])).stdout.splitlines()]
    outcomes = [r["outcome"] for r in rows]
    assert outcomes == human == ["valid", "partial", "noop", "failed", "valid", "interrupted"]


def test_audit_with_no_runs_says_so_on_stderr(workspace, cli_runner):
    res = ok(cli_runner.invoke(cli, ["audit"]))
    assert res.stdout == "" and "no Dream runs yet" in res.stderr
    res = ok(cli_runner.invoke(cli, ["audit", "--json"]))
    assert res.stdout == ""


def test_audit_reads_without_the_writer_lock(audited, cli_runner):
    home, _ = audited
    ws = Workspace.open(home, writable=True)
    try:
        ok(cli_runner.invoke(cli, ["audit"]))
        ok(cli_runner.invoke(cli, ["audit", "why", "tabs"]))
    finally:
        ws.close()


# -- why -----------------------------------------------------------------------------------


def test_why_traces_a_fact_to_its_run_prompt_hash_and_exact_source_messages(audited):
    home, proj = audited
    ws = Workspace.open(home)
    try:
        [ex] = why(ws, "tabs")
        run = ws.dream_runs.s.runs[ex.run_id]
        assert (ex.text, ex.file, ex.section, ex.outcome, ex.subject) == (
            "The user prefers tabs over spaces.", "global", "Preferences", "valid", "user")
        assert ex.prompt_hash == run.prompt_hash and ex.model == "claude-test" and ex.run_time == run.started_at
        assert (ex.input_tokens, ex.output_tokens, ex.when) == (310, 25, "2025-04-01T09:00:00.000Z")
        assert [(m.session_key, m.message_id, m.timestamp, m.role) for m in ex.messages] == [
            ("cli:alice", "msg-0", "2025-04-01T09:00:00Z", "user")]
        assert ex.messages[0].excerpt == "I prefer tabs over spaces, always."
        [proj_fact] = why(ws, "pytest")
        assert proj_fact.file == proj and proj_fact.section == "Project Context"
        assert [m.message_id for m in proj_fact.messages] == ["msg-2"]
        [note] = why(ws, "Fridays")
        assert [(m.role, m.excerpt) for m in note.messages] == [
            ("note", "I never deploy on fridays and I review every pull request myself")]
        assert note.outcome == "partial"
        [retried] = why(ws, "早上")
        assert retried.run_id == ws.dream_runs.runs()[4].run_id
    finally:
        ws.log.close()


def test_why_shows_the_supersede_chain(audited):
    from eventlog.app import memory as mem
    from eventlog.events import MemorySuperseded

    home, _proj = audited
    ws = Workspace.open(home, writable=True)
    try:
        [old] = why(ws, "tabs")
        new = MemoryAppended(fact_id="fact-new", scope="user", section="Preferences", text="The user prefers spaces now.",
                             by="user")
        ws.append([new, MemorySuperseded(fact_id=old.fact_id, by_fact_id="fact-new", by="user")])
        [ex] = why(ws, "spaces now")
        assert [(c.fact_id, c.state) for c in ex.chain] == [(old.fact_id, "superseded"), ("fact-new", "active")]
        [gone] = why(ws, fact_id=old.fact_id)
        assert gone.state == "superseded"
        assert mem.find(ws, old.fact_id).superseded_by == "fact-new"
    finally:
        ws.close()


def test_audit_why_text_and_fact_id_on_the_command_line(audited, cli_runner):
    home, proj = audited
    out = ok(cli_runner.invoke(cli, ["audit", "why", "TABS"])).stdout
    assert "The user prefers tabs over spaces." in out and "[global / Preferences]" in out
    assert re.search(r"run dream-\d+ \(valid\) at \S+, model claude-test, prompt xxh3_128:[0-9a-f]{32}", out)
    assert "from message msg-0 (user, 2025-04-01T09:00:00, cli:alice): I prefer tabs over spaces, always." in out
    fact_id = out.split()[0]
    assert fact_id.startswith("fact-")
    assert ok(cli_runner.invoke(cli, ["audit", "why", "--fact", fact_id])).stdout == out
    rows = [json.loads(ln) for ln in ok(cli_runner.invoke(cli, ["audit", "why", "--fact", fact_id, "--json"])).stdout
            .splitlines()]
    assert len(rows) == 1 and rows[0]["fact_id"] == fact_id
    assert rows[0]["messages"][0]["message_id"] == "msg-0" and rows[0]["messages"][0]["session_key"] == "cli:alice"


def test_audit_why_human_output_matches_the_golden_file(audited, cli_runner):
    home, proj = audited
    parts = []
    for query in ("tabs", "pytest", "Fridays", "早上"):
        parts.append(ok(cli_runner.invoke(cli, ["audit", "why", query])).stdout)
    golden("why.txt", normalise("".join(parts), home, proj))


def test_audit_why_explains_every_line_of_every_memory_md_with_the_messages_that_say_it(audited):
    home, proj = audited
    files = [os.path.join(home, "memory", "MEMORY.md"), os.path.join(proj, "memory", "MEMORY.md")]
    ws = Workspace.open(home)
    try:
        for path in files:
            with open(path, encoding="utf-8") as f:
                lines = [ln[2:] for ln in f.read().splitlines() if ln.startswith("- ")]
            assert lines
            for line in lines:
                found = [ex for ex in why(ws, line) if ex.text == line]
                assert len(found) == 1 and found[0].messages, line
    finally:
        ws.log.close()


def test_audit_why_with_nothing_matching_fails_with_a_clear_message(audited, cli_runner):
    res = cli_runner.invoke(cli, ["audit", "why", "kubernetes"])
    assert res.exit_code != 0 and res.stdout == ""
    assert "no fact in MEMORY.md matches 'kubernetes'" in res.stderr
    res = cli_runner.invoke(cli, ["audit", "why", "--fact", "fact-000000000000"])
    assert res.exit_code != 0 and "fact-000000000000" in res.stderr


def test_audit_why_needs_exactly_one_of_text_and_fact(audited, cli_runner):
    for args in (["audit", "why"], ["audit", "why", "tabs", "--fact", "fact-1"]):
        res = cli_runner.invoke(cli, args)
        assert res.exit_code == 2 and "--fact" in res.stderr


def test_a_failed_run_is_listed_with_its_reason(workspace, cli_runner):
    ws = Workspace.open(workspace, writable=True)
    remember(ws, "I prefer tabs")
    run_dream(ws, FakeLLM(LLMCallError("rate limited after 3 tries", kind="rate_limit")))
    ws.close()
    [line] = ok(cli_runner.invoke(cli, ["audit"])).stdout.splitlines()
    assert " failed " in line and "rate limited after 3 tries" in line
    [row] = [json.loads(ln) for ln in ok(cli_runner.invoke(cli, ["audit", "--json"])).stdout.splitlines()]
    assert row["outcome"] == "failed" and "rate limited" in row["reason"]
