"""evlog export / import (issue 24, everything else): facts with provenance and validity, JSON lines and
Markdown, read back idempotently; bad input names its line and field and writes nothing."""

from __future__ import annotations

import json

import pytest

from eventlog.app import memory as mem
from eventlog.app.export import export_facts, import_facts, parse, render
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.errors import InvalidEventError
from eventlog.events import MemoryAppended, MemorySuperseded, MessageAppended, SessionCreated

PROJECT = "/home/dev/shop"


@pytest.fixture
def source(workspace):
    with Workspace.open(workspace, writable=True) as ws:
        [_, seq] = ws.append([SessionCreated(session_key="cli:a"),
                              MessageAppended(session_key="cli:a", message_id="m1", role="user",
                                              content="I prefer tabs over spaces.", timestamp="2025-04-01T09:00:00Z")])
        ws.append([
            MemoryAppended(fact_id="fact-tabs", scope="user", section="Preferences", text="The user prefers tabs.",
                           subject="user", when="2025-04-01T09:00:00Z", source_refs=["cli:a#m1"], source_seqs=[seq],
                           run_id="dream-1", by="dream"),
            MemoryAppended(fact_id="fact-pg", scope="project", project=PROJECT, section="Project Context",
                           text="The project uses Postgres 15.", subject="project", by="dream"),
            MemoryAppended(fact_id="fact-pg16", scope="project", project=PROJECT, section="Project Context",
                           text="The project uses Postgres 16.", subject="project", by="dream"),
            MemorySuperseded(fact_id="fact-pg", by_fact_id="fact-pg16", reason="upgraded"),
        ])
        mem.pin(ws, "fact-tabs")
    return workspace


def _fresh(tmp_path, name: str) -> str:
    home = str(tmp_path / name)
    init_workspace(home)
    return home


def _holding(home: str) -> list[tuple]:
    ws = Workspace.open(home)
    try:
        return sorted((f.target, f.section, f.text, f.subject, f.when, tuple(f.source_refs), f.pinned)
                      for f in ws.memory.all_facts("active"))
    finally:
        ws.close()


def test_an_export_carries_provenance_and_validity(source):
    ws = Workspace.open(source)
    try:
        rows = {f.fact_id: f for f in export_facts(ws, states=("active", "superseded"))}
    finally:
        ws.close()
    tabs = rows["fact-tabs"]
    assert (tabs.file, tabs.section, tabs.subject, tabs.by, tabs.run_id, tabs.pinned) == ("", "Preferences", "user", "dream",
                                                                                          "dream-1", True)
    assert tabs.valid_from == "2025-04-01T09:00:00Z" and tabs.learned_at and tabs.valid_until == ""
    assert [(s.ref, s.role, s.excerpt) for s in tabs.sources] == [("cli:a#m1", "user", "I prefer tabs over spaces.")]
    old = rows["fact-pg"]
    assert old.state == "superseded" and old.replaced_by == "fact-pg16" and old.valid_until >= old.learned_at != ""


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_export_then_import_gives_the_same_memory_and_a_second_import_adds_nothing(source, tmp_path, fmt):
    ws = Workspace.open(source)
    try:
        text = render(export_facts(ws, states=("active", "superseded")), fmt)
    finally:
        ws.close()
    target = _fresh(tmp_path, "target")
    with Workspace.open(target, writable=True) as ws:
        report = import_facts(ws, parse(text))
        assert sorted(report.added) == ["fact-pg16", "fact-tabs"] and report.not_holding == 1
        end = ws.log.last_seq
        again = import_facts(ws, parse(text))
        assert again.added == [] and again.existing == 2 and ws.log.last_seq == end
        assert all(f.by == "import" for f in ws.memory.all_facts("active"))
    assert _holding(target) == _holding(source)


def test_a_hand_written_markdown_list_imports_and_is_idempotent(workspace):
    text = "## Global\n\n### Preferences\n\n- The user drinks tea.\n- The user drinks tea.\n\n## Project `/p`\n\n- Uses make.\n"
    with Workspace.open(workspace, writable=True) as ws:
        assert len(import_facts(ws, parse(text)).added) == 2
        assert import_facts(ws, parse(text)).added == []
        facts = {(f.target, f.section, f.text) for f in ws.memory.all_facts("active")}
    assert facts == {("", "Preferences", "The user drinks tea."), ("/p", "User Profile", "Uses make.")}


def test_bad_input_names_the_line_and_field_and_writes_nothing(workspace):
    good = json.dumps({"fact_id": "fact-x", "text": "The user likes jazz."})
    for bad, where in [(json.dumps({"fact_id": "fact-y", "text": ""}), "field 'text'"),
                       (json.dumps({"text": "x", "section": 3}), "field 'section'"),
                       (json.dumps({"text": "x", "state": "gone"}), "field 'state'"),
                       ("{not json", "not JSON")]:
        with pytest.raises(InvalidEventError, match=rf"in\.jsonl:2: .*{where}|in\.jsonl:2: {where}"):
            parse(good + "\n" + bad + "\n", name="in.jsonl")
    with pytest.raises(InvalidEventError, match="version"):
        parse(json.dumps({"evlog_export": "memory", "version": 99}) + "\n")


def test_the_cli_exports_to_a_file_and_imports_it_twice(source, tmp_path, cli_runner):
    out = tmp_path / "memory.md"
    res = cli_runner.invoke(cli, ["--home", source, "export", "--format", "markdown", "-o", str(out)])
    assert res.exit_code == 0 and "exported 2 fact(s)" in res.stderr
    assert "## Project `/home/dev/shop`" in out.read_text() and "<!-- evlog: " in out.read_text()
    target = _fresh(tmp_path, "t")
    res = cli_runner.invoke(cli, ["--home", target, "import", str(out)])
    assert res.exit_code == 0 and "imported 2 fact(s)" in res.stderr
    res = cli_runner.invoke(cli, ["--home", target, "import", str(out)])
    assert res.exit_code == 0 and "imported 0 fact(s); 2 already there" in res.stderr
    lines = cli_runner.invoke(cli, ["--home", source, "export", "--state", "all"]).stdout.splitlines()
    assert json.loads(lines[0])["facts"] == 3 and len(lines) == 4
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"text": 5}\n')
    res = cli_runner.invoke(cli, ["--home", target, "import", str(bad)])
    assert res.exit_code == 3 and "bad.jsonl:2" in res.stderr and "'text'" in res.stderr
