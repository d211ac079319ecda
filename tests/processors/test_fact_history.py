"""Changes you can see (issue 24, item 6): why shows a fact's history; forget --match previews and asks.

``audit why`` (CLI, JSON and the web's why page) lists every change of a fact with its
time: learned, edited (by whom, the text before), pinned, superseded, forgotten,
unforgotten; ``audit why TEXT`` finds forgotten facts; ``memory forget --match`` shows
what it would forget and asks, or refuses without a terminal unless --yes is given.
"""

from __future__ import annotations

import json

import pytest

from eventlog.app import memory as mem
from eventlog.app.workspace import Workspace
from eventlog.cli import cli
from eventlog.events import MemoryAppended, MemorySuperseded
from processors.audit import fact_history, why


@pytest.fixture
def changed(workspace):
    """One fact learned by Dream, edited by the user and by an agent, pinned, forgotten and brought back;
    another that replaced an older one."""
    with Workspace.open(workspace, writable=True) as ws:
        ws.append([MemoryAppended(fact_id="fact-a", scope="user", section="Preferences", text="The user likes tea.",
                                  run_id="run-1", by="dream"),
                   MemoryAppended(fact_id="fact-old", scope="user", section="Preferences", text="The user uses vim.")])
        mem.edit(ws, "fact-a", "The user likes green tea.")
        mem.edit(ws, "fact-a", "The user likes green tea, no sugar.", by="agent")
        mem.pin(ws, "fact-a")
        mem.forget(ws, ["fact-a"], reason="not true any more")
        mem.unforget(ws, "fact-a")
        ws.append([MemoryAppended(fact_id="fact-new", scope="user", section="Preferences", text="The user uses emacs."),
                   MemorySuperseded(fact_id="fact-old", by_fact_id="fact-new", reason="changed editor", by="dream")])
    return workspace


def test_the_history_names_every_change_who_made_it_and_the_old_text(changed):
    ws = Workspace.open(changed)
    try:
        steps = fact_history(ws, ["fact-a", "fact-old", "fact-new"])
    finally:
        ws.close()
    a = steps["fact-a"]
    assert [s.action for s in a] == ["learned", "edited", "edited", "pinned", "forgotten", "unforgotten"]
    assert (a[0].by, a[0].text, a[0].detail) == ("dream", "The user likes tea.", "run run-1")
    assert (a[1].by, a[1].old_text, a[1].text) == ("user", "The user likes tea.", "The user likes green tea.")
    assert (a[2].by, a[2].old_text) == ("agent", "The user likes green tea.")
    assert a[4].by == "user" and a[4].detail == "not true any more"
    assert all(s.time and s.seq for s in a) and [s.seq for s in a] == sorted(s.seq for s in a)
    assert [(s.action, s.text) for s in steps["fact-old"]][-1] == ("superseded", "The user uses emacs.")
    assert [(s.action, s.other, s.detail) for s in steps["fact-new"]][-1] == ("replaced", "fact-old", "changed editor")
    assert steps["fact-old"][-1].other == "fact-new"


def test_audit_why_shows_the_history_in_text_and_json(changed, cli_runner):
    res = cli_runner.invoke(cli, ["audit", "why", "green tea"])
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert "  history:" in out
    assert "edited by user: 'The user likes tea.' -> 'The user likes green tea.'" in out
    assert "edited by agent: 'The user likes green tea.' -> 'The user likes green tea, no sugar.'" in out
    assert "forgotten by user (not true any more)" in out and "unforgotten by user" in out
    (row,) = [json.loads(ln) for ln in cli_runner.invoke(cli, ["audit", "why", "--fact", "fact-a", "--json"]).stdout.splitlines()]
    assert [h["action"] for h in row["history"]][:2] == ["learned", "edited"]
    assert row["history"][1]["old_text"] == "The user likes tea."


def test_audit_why_text_finds_forgotten_and_superseded_facts(changed, cli_runner):
    assert cli_runner.invoke(cli, ["memory", "forget", "fact-a"]).exit_code == 0
    res = cli_runner.invoke(cli, ["audit", "why", "green tea", "--json"])
    assert res.exit_code == 0, res.stderr
    assert [json.loads(ln)["state"] for ln in res.stdout.splitlines()] == ["forgotten"]
    res = cli_runner.invoke(cli, ["audit", "why", "uses"])
    assert res.exit_code == 0
    assert res.stdout.index("The user uses emacs.") < res.stdout.index("fact-old  [")  # active first, then superseded
    ws = Workspace.open(changed)
    try:
        assert [ex.fact_id for ex in why(ws, "green tea")] == []  # the library's default stays: active facts
    finally:
        ws.close()


def test_forget_match_without_a_terminal_refuses_unless_yes(changed, cli_runner):
    res = cli_runner.invoke(cli, ["memory", "forget", "--match", "uses"])
    assert res.exit_code == 2
    assert "would forget 1 fact(s)" in res.stderr and "fact-new" in res.stderr and "--yes" in res.stderr
    ws = Workspace.open(changed)
    try:
        assert ws.memory.get("fact-new").state == "active"  # nothing was forgotten
    finally:
        ws.close()
    res = cli_runner.invoke(cli, ["memory", "forget", "--match", "uses", "--yes"])
    assert res.exit_code == 0 and "forgot 1 fact(s): fact-new" in res.stderr


def test_forget_match_on_a_terminal_asks_first(changed, cli_runner, monkeypatch):
    monkeypatch.setattr("eventlog.cli.processor_commands._interactive", lambda: True)
    res = cli_runner.invoke(cli, ["memory", "forget", "--match", "likes"], input="n\n")
    assert res.exit_code == 0 and "nothing forgotten" in res.stderr
    assert "Forget these 1 fact(s)?" in res.stderr and "fact-a" in res.stderr
    res = cli_runner.invoke(cli, ["memory", "forget", "--match", "likes"], input="y\n")
    assert res.exit_code == 0 and "forgot 1 fact(s): fact-a" in res.stderr
    res = cli_runner.invoke(cli, ["memory", "--tier", "forgotten", "--json"])
    assert [json.loads(ln)["fact_id"] for ln in res.stdout.splitlines()] == ["fact-a"]
    assert cli_runner.invoke(cli, ["memory", "unforget", "fact-a"]).exit_code == 0


def test_the_why_page_shows_the_history(changed):
    from starlette.testclient import TestClient

    from eventlog.app.web.app import key_token, local_app

    port, token = 8765, "test-token-" + "x" * 32
    app = local_app(changed, port, token=token)
    try:
        with TestClient(app, base_url=f"http://127.0.0.1:{port}", follow_redirects=False) as c:
            c.get(f"/?token={token}")
            page = c.get(f"/memory/why/{key_token('fact-a')}").text
            old = c.get(f"/memory/why/{key_token('fact-old')}").text
            assert "unforget" not in page.split("History")[0]  # fact-a is active again
            with Workspace.open(changed, writable=True) as ws:
                mem.forget(ws, ["fact-a"])
    finally:
        app.state.web.source.close()
    app = local_app(changed, port, token=token)
    try:
        with TestClient(app, base_url=f"http://127.0.0.1:{port}", follow_redirects=False) as c:
            c.get(f"/?token={token}")
            forgotten = c.get(f"/memory/why/{key_token('fact-a')}").text
    finally:
        app.state.web.source.close()
    assert "History" in page and "<del>The user likes tea.</del>" in page and "<ins>The user likes green tea.</ins>" in page
    assert "unforgotten" in page and "not true any more" in page and "by <b>agent</b>" in page
    assert f'href="/memory/why/{key_token("fact-new")}"' in old and "changed editor" in old
    assert "evlog memory unforget fact-a</code> brings it back" in forgotten
