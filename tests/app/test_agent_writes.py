"""What an agent may write (issue 21, item 1): its calling project only, a forget budget, confirm, own budget share.

The library functions of ``eventlog.app.memory`` the MCP server calls, through the real
pipeline (Dream with the offline extractor), with real git repositories for the project.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from click.testing import CliRunner

from eventlog.app import memory
from eventlog.app.memory import (
    AGENT_FORGETS_PER_CALL,
    AGENT_FORGETS_PER_SESSION,
    AgentSession,
    agent_forget,
    agent_remember,
    calling_project,
    confirm,
)
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.errors import InvalidEventError
from processors.audit import why
from processors.extract.budget import apply_split_budget
from processors.extract.model import ExistingFact
from tests.memory_pipeline import dream

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}


def git(cwd: str, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def repo(path: str) -> str:
    os.makedirs(path)
    git(path, "init", "-q")
    git(path, "commit", "-q", "--allow-empty", "-m", os.path.basename(path))
    return path


@pytest.fixture
def ws(tmp_path):
    home = str(tmp_path / "home")
    init_workspace(home)
    w = Workspace.open(home, writable=True)
    yield w
    w.close()


@pytest.fixture
def projects(tmp_path) -> dict[str, str]:
    a = repo(str(tmp_path / "a"))
    os.makedirs(os.path.join(a, "src"))
    wt = str(tmp_path / "a-wt")
    git(a, "worktree", "add", "-q", "-b", "wt", wt)
    return {"a": a, "wt": wt, "b": repo(str(tmp_path / "b")), "plain": str(tmp_path)}


def test_the_calling_project_is_the_repository_top(projects) -> None:
    assert calling_project(os.path.join(projects["a"], "src")) == os.path.realpath(projects["a"])
    assert calling_project(projects["plain"]) == projects["plain"]


def test_an_agent_remembers_for_its_own_project_and_never_another_or_the_global_file(ws, projects) -> None:
    session = AgentSession(calling_project(projects["a"]))
    agent_remember(ws, "The project deploys with Fly.io.", session=session)
    agent_remember(ws, "The worktree tests the new parser.", session=session, project=projects["wt"])
    with pytest.raises(InvalidEventError, match="only remember for the project it works in"):
        agent_remember(ws, "The project b uses Rails 7.", session=session, project=projects["b"])
    with pytest.raises(InvalidEventError, match="never global"):
        agent_remember(ws, "The project deploys with Fly.io.", session=AgentSession(""))
    dream(ws)
    facts = memory.facts(ws)
    assert sorted(f.project for f in facts) == sorted([session.project, projects["wt"]])
    assert all(f.scope == "project" and f.text.startswith("An agent noted:") for f in facts)
    assert not memory.facts(ws, project="") and not memory.facts(ws, project=projects["b"])


def test_an_agent_forgets_within_its_budget_and_every_forget_is_undone_by_unforget(ws, projects) -> None:
    session = AgentSession(calling_project(projects["a"]))
    ids = [memory.add(ws, f"Project fact {i}", section="Project Context", project=session.project) for i in range(8)]
    with pytest.raises(InvalidEventError, match="at most 3 facts a call"):
        agent_forget(ws, ids[: AGENT_FORGETS_PER_CALL + 1], session=session)
    assert len(memory.facts(ws)) == 8  # a refused call forgets nothing
    done = agent_forget(ws, ids[:3], session=session) + agent_forget(ws, ids[3:5], session=session)
    assert done == ids[:AGENT_FORGETS_PER_SESSION] and session.forgets_left == 0
    with pytest.raises(InvalidEventError, match="may forget 0 more"):
        agent_forget(ws, ids[5:6], session=session)
    assert len(memory.facts(ws)) == 3
    for fid in done:
        assert memory.unforget(ws, fid)
    assert len(memory.facts(ws)) == 8
    assert {f.by for f in memory.facts(ws, state=None)} == {"user"}


def test_an_agent_cannot_forget_another_projects_facts(ws, projects) -> None:
    session = AgentSession(calling_project(projects["a"]))
    other = memory.add(ws, "Project b uses Rails 7", section="Project Context", project=projects["b"])
    mine = memory.add(ws, "Project a uses Django 5", section="Project Context", project=projects["wt"])
    user = memory.add(ws, "The user prefers short answers", section="Preferences")
    with pytest.raises(InvalidEventError, match="belongs to the project"):
        agent_forget(ws, [mine, other], session=session)
    assert agent_forget(ws, [mine, user], session=session) == [mine, user]  # its own repository and the global file
    assert memory.find(ws, other).state == "active"


def test_the_user_confirms_an_agent_proposed_fact_and_audit_why_says_who_proposed_it(ws, projects) -> None:
    session = AgentSession(calling_project(projects["a"]))
    agent_remember(ws, "The project deploys with Fly.io.", session=session)
    dream(ws)
    (fact,) = memory.facts(ws)
    (ex,) = why(ws, fact_id=fact.fact_id)
    assert ex.proposed.startswith("agent, not confirmed")
    assert confirm(ws, fact.fact_id)
    assert memory.find(ws, fact.fact_id).text == "The project deploys with Fly.io."
    assert not confirm(ws, fact.fact_id)  # already confirmed
    (ex,) = why(ws, fact_id=fact.fact_id)
    assert ex.proposed == "agent, confirmed by the user"
    user = memory.add(ws, "The user prefers short answers", section="Preferences")
    with pytest.raises(InvalidEventError, match="not proposed by an agent"):
        confirm(ws, user)


def test_evlog_memory_confirm_and_audit_why_on_the_command_line(ws, projects) -> None:
    session = AgentSession(calling_project(projects["a"]))
    agent_remember(ws, "The project deploys with Fly.io.", session=session)
    dream(ws)
    (fact,) = memory.facts(ws)
    home = ws.home
    ws.close()
    runner = CliRunner()
    shown = runner.invoke(cli, ["--home", home, "audit", "why", "--fact", fact.fact_id])
    assert shown.exit_code == 0 and "proposed by an agent, not confirmed" in shown.output
    r = runner.invoke(cli, ["--home", home, "memory", "confirm", fact.fact_id])
    assert r.exit_code == 0, r.output
    assert "confirmed" in r.output and "The project deploys with Fly.io." in r.output
    with Workspace.open(home) as w2:
        assert memory.find(w2, fact.fact_id).text == "The project deploys with Fly.io."


def _fact(i: int, agent: bool, pinned: bool = False) -> ExistingFact:
    text = ("An agent noted: the build step " if agent else "The user fact ") + f"number {i:03d}"
    return ExistingFact(fact_id=f"{'a' if agent else 'u'}{i:03d}", text=text, subject="project", scope="project",
                        project="/p", section="Project Context", when=f"2025-01-01T00:00:{i % 60:02d}Z",
                        pinned=pinned)


def test_agent_notes_compete_in_their_own_budget_and_never_push_the_users_facts_out() -> None:
    users = [_fact(i, False) for i in range(30)]
    agents = [_fact(i, True) for i in range(300)]
    kept, archived = apply_split_budget(users + agents, is_agent=lambda f: f.text.startswith("An agent noted:"),
                                        max_lines=60, max_bytes=25_000, header="# Memory\n\n")
    assert all(f in kept for f in users)
    assert 0 < sum(1 for f in kept if f in agents) <= int(60 * 0.2)
    assert len(kept) + 3 <= 60 and len(archived) == 330 - len(kept)


def test_agent_notes_only_take_what_the_users_facts_leave() -> None:
    users = [_fact(i, False) for i in range(55)]
    agents = [_fact(i, True) for i in range(20)]
    kept, _ = apply_split_budget(users + agents, is_agent=lambda f: f.text.startswith("An agent noted:"),
                                 max_lines=60, max_bytes=25_000, header="# Memory\n\n")
    assert all(f in kept for f in users) and len(kept) + 3 == 60  # header (2 lines) and one section heading


def test_flooding_remember_leaves_the_users_facts_in_memory_md(ws, projects) -> None:
    ws.config.memory_max_lines = 40
    session = AgentSession(calling_project(projects["a"]))
    mine = [memory.add(ws, f"The project uses tool number {i}", section="Project Context", project=session.project)
            for i in range(5)]
    for i in range(60):
        agent_remember(ws, f"The module number {i} parses configuration files.", session=session)
    dream(ws)
    active = {f.fact_id for f in memory.facts(ws)}
    assert set(mine) <= active
    assert 0 < len(active - set(mine)) <= 8
