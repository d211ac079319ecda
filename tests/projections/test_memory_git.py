"""A registered project's MEMORY.md under git: a checkout is not a hand edit, an edit still is.

The mirror ``<project>/memory/MEMORY.md`` is read back on every write to learn the user's
hand edits. When the file is tracked by git, reads exactly as the file at HEAD, and HEAD got
there by git moving it (checkout, switch, reset, pull, merge, rebase: the last reflog entry is
not a commit made here), the change came from git, not from the user: no fact changes and
evlog writes the log's version back. Any other change (uncommitted, staged, or committed
here) is a hand edit, as before. Real ``git`` repos in tmp_path.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from eventlog.app import memory
from eventlog.app.workspace import Workspace
from eventlog.events import MemoryAppended, MemoryEdited, MemoryForgotten

GIT_ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
FACTS = ["Tests run with pytest -x", "The API lives in api/", "Deploys go through staging first"]


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True, env=GIT_ENV,
                          timeout=30).stdout


def hand_events(ws: Workspace) -> list:
    return [e for e in ws.log.read() if isinstance(e, (MemoryAppended, MemoryEdited, MemoryForgotten))
            and e.by == "hand-edit"]


@pytest.fixture
def repo(workspace, tmp_path) -> str:
    """A git repo registered as a project, its MEMORY.md written by evlog and committed on 'main'."""
    project = str(tmp_path / "repo")
    os.makedirs(project)
    git(project, "init", "-q", "-b", "main")
    with Workspace.open(workspace, writable=True) as ws:
        ws.register_project(project)
        for text in FACTS:
            memory.add(ws, text, section="Project Context", project=project)
    git(project, "add", "memory/MEMORY.md")
    git(project, "commit", "-q", "-m", "memory")
    return project


def mirror(project: str) -> str:
    with open(os.path.join(project, "memory", "MEMORY.md"), encoding="utf-8") as f:
        return f.read()


def test_checking_out_a_branch_with_another_memory_md_changes_no_fact(workspace, repo) -> None:
    ours = mirror(repo)
    git(repo, "checkout", "-q", "-b", "other")
    with open(os.path.join(repo, "memory", "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write(ours.replace(FACTS[0], "Tests run with nose").replace(f"- {FACTS[1]}\n", ""))
    git(repo, "commit", "-q", "-am", "another memory")
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "other")  # evlog did not run on 'other': its file is git's, not the user's
    assert "nose" in mirror(repo)
    with Workspace.open(workspace, writable=True) as ws:
        ws.flush()
        assert hand_events(ws) == []
        assert sorted(f.text for f in ws.memory.facts(repo)) == sorted(FACTS)
    assert mirror(repo) == ours  # the log's version is written back


@pytest.mark.parametrize("how", ["staged", "committed"])
def test_an_edit_staged_or_committed_here_is_the_users(workspace, repo, how: str) -> None:
    edited = mirror(repo).replace(FACTS[2], "Deploys go straight to production")
    with open(os.path.join(repo, "memory", "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write(edited)
    git(repo, "add", "memory/MEMORY.md")
    if how == "committed":
        git(repo, "commit", "-q", "-m", "my edit")
    with Workspace.open(workspace, writable=True) as ws:
        ws.flush()
        assert [getattr(e, "text", "") for e in hand_events(ws)] == ["Deploys go straight to production"]
    assert mirror(repo) == edited


def test_a_hard_reset_to_an_older_memory_md_changes_no_fact(workspace, repo) -> None:
    ours = mirror(repo)
    with Workspace.open(workspace, writable=True) as ws:
        memory.add(ws, "Releases are tagged vX.Y", section="Project Context", project=repo)
    git(repo, "commit", "-q", "-am", "a fourth fact")
    git(repo, "reset", "-q", "--hard", "HEAD~1")  # the file goes back to three facts: git did it
    assert mirror(repo) == ours
    with Workspace.open(workspace, writable=True) as ws:
        ws.flush()
        assert hand_events(ws) == []
        assert len(ws.memory.facts(repo)) == 4
    assert "Releases are tagged" in mirror(repo)


def test_an_uncommitted_edit_in_a_tracked_file_is_still_a_hand_edit(workspace, repo) -> None:
    edited = mirror(repo).replace(FACTS[0], "Tests run with pytest -x -q")
    with open(os.path.join(repo, "memory", "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write(edited)
    with Workspace.open(workspace, writable=True) as ws:
        ws.flush()
        assert [(type(e).__name__, getattr(e, "text", "")) for e in hand_events(ws)] == [
            ("MemoryEdited", "Tests run with pytest -x -q")]
    assert mirror(repo) == edited


def test_git_environment_variables_cannot_point_the_check_elsewhere(workspace, repo, tmp_path, monkeypatch) -> None:
    decoy = str(tmp_path / "decoy")
    os.makedirs(decoy)
    git(decoy, "init", "-q", "-b", "main")
    edited = mirror(repo).replace(FACTS[0], "Tests run with tox")
    os.makedirs(os.path.join(decoy, "memory"))
    with open(os.path.join(decoy, "memory", "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write(edited)
    git(decoy, "add", "memory/MEMORY.md")
    git(decoy, "commit", "-q", "-m", "decoy")
    monkeypatch.setenv("GIT_DIR", os.path.join(decoy, ".git"))  # would make the edit look like git's version
    with open(os.path.join(repo, "memory", "MEMORY.md"), "w", encoding="utf-8") as f:
        f.write(edited)
    with Workspace.open(workspace, writable=True) as ws:
        ws.flush()
        assert [getattr(e, "text", "") for e in hand_events(ws)] == ["Tests run with tox"]
