"""Injection that fits (issue 21, item 8): one project across a repository's worktrees and clones.

Real git repositories, worktrees and clones are made in tmp dirs. SessionStart and
UserPromptSubmit give the facts of ``cwd``'s repository (whatever checkout they were learned
in) and the user's, never another repository's; every injected fact carries its id and day;
the block says it is data, not instructions; a prompt gets only facts above the relevance
threshold.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from eventlog.app import memory, recall
from eventlog.app.agents.context import content_terms, memory_context, prompt_context, relevant
from eventlog.app.agents.hooks import handle_claude_code
from eventlog.app.repo_identity import IdentityCache, identity, normalise_remote, same_project
from eventlog.app.workspace import Workspace

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}


def git(cwd: str, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def new_repo(path: str, content: str = "x") -> str:
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main")
    with open(os.path.join(path, "README"), "w") as f:
        f.write(content)
    git(path, "add", "README")
    git(path, "commit", "-q", "-m", "first")
    return path


@pytest.fixture
def repos(tmp_path) -> dict[str, str]:
    """A repository ``a`` with a worktree and a clone (and a subdirectory), and an unrelated repository ``b``."""
    a = new_repo(str(tmp_path / "a"), "project a")
    os.makedirs(os.path.join(a, "src"))
    wt = str(tmp_path / "a-feature")
    git(a, "worktree", "add", "-q", "-b", "feature", wt)
    clone = str(tmp_path / "elsewhere" / "a-clone")
    git(str(tmp_path), "clone", "-q", a, clone)
    b = new_repo(str(tmp_path / "b"), "project b")
    return {"a": a, "wt": wt, "clone": clone, "b": b, "src": os.path.join(a, "src")}


def add(home: str, text: str, project: str = "", section: str = "Project Context") -> str:
    with Workspace.open(home, writable=True) as ws:
        fid = memory.add(ws, text, section=section if project else "Preferences", project=project)
        recall.rebuild(ws)
    return fid


def start(home: str, cwd: str) -> str:
    res = handle_claude_code({"hook_event_name": "SessionStart", "cwd": cwd, "session_id": "s"}, home=home)
    return json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"] if res.stdout else ""


def prompt(home: str, cwd: str, text: str) -> str:
    res = handle_claude_code({"hook_event_name": "UserPromptSubmit", "cwd": cwd, "prompt": text, "session_id": "s"},
                             home=home)
    assert res.notes == []
    return json.loads(res.stdout)["hookSpecificOutput"]["additionalContext"] if res.stdout else ""


# --- identity ------------------------------------------------------------------------------------


def test_worktrees_clones_and_subdirectories_are_one_repository_and_another_is_not(repos, workspace) -> None:
    cache = IdentityCache(workspace)
    ids = {name: identity(path, cache) for name, path in repos.items()}
    assert all(ids.values())
    for name in ("wt", "clone", "src"):
        assert same_project(ids["a"].keys, ids[name].keys), name
    assert not same_project(ids["a"].keys, ids["b"].keys)
    assert ids["wt"].place.common_dir == ids["a"].place.common_dir != ids["clone"].place.common_dir
    assert ids["a"].root == ids["clone"].root and re.fullmatch(r"[0-9a-f]{40}", ids["a"].root)
    assert ids["src"].place.top == os.path.realpath(repos["a"])
    assert identity(os.path.dirname(repos["a"])) is None  # the tmp dir itself is in no repository


def test_clones_by_https_and_by_ssh_have_the_same_remote_key() -> None:
    forms = ["https://github.com/Owner/Repo.git", "git@github.com:Owner/Repo.git", "ssh://git@github.com/Owner/Repo",
             "https://user@GitHub.com:443/Owner/Repo/"]
    assert {normalise_remote(u) for u in forms} == {"github.com/Owner/Repo"}
    assert normalise_remote("https://github.com/Owner/Other") != "github.com/Owner/Repo"


def test_two_repositories_with_no_common_history_but_one_remote_are_one_project(tmp_path) -> None:
    one, two = new_repo(str(tmp_path / "one"), "1"), new_repo(str(tmp_path / "two"), "2")
    for p in (one, two):
        git(p, "remote", "add", "origin", "git@example.org:team/app.git")
    assert same_project(identity(one).keys, identity(two).keys)


# --- SessionStart ----------------------------------------------------------------------------------


def test_session_start_in_a_worktree_or_clone_gets_the_facts_learned_in_any_checkout(repos, workspace) -> None:
    add(workspace, "Tests run with pytest -x -q", repos["a"])
    add(workspace, "The feature branch adds a caching layer", repos["wt"])
    add(workspace, "Project b deploys with Kamal", repos["b"])
    add(workspace, "The user prefers short answers")
    for where in ("wt", "clone", "src", "a"):
        ctx = start(workspace, repos[where])
        assert "Tests run with pytest -x -q" in ctx and "caching layer" in ctx, where
        assert "The user prefers short answers" in ctx
        assert "Kamal" not in ctx, where
    ctx = start(workspace, repos["b"])
    assert "Kamal" in ctx and "pytest -x" not in ctx and "caching layer" not in ctx
    ctx = memory_context(workspace, repos["wt"])
    assert ctx.project == os.path.realpath(repos["wt"]) and sorted(ctx.projects) == sorted([repos["a"], repos["wt"]])
    assert len(re.findall(r"^# Project ", ctx.text, re.MULTILINE)) == 1  # one project, one heading


def test_every_injected_fact_carries_its_id_and_day_and_the_block_says_it_is_data(repos, workspace) -> None:
    fid = add(workspace, "Tests run with pytest -x -q", repos["a"])
    uid = add(workspace, "The user prefers short answers")
    ctx = start(workspace, repos["wt"])
    day = r"\d{4}-\d{2}-\d{2}"
    assert re.search(rf"- Tests run with pytest -x -q \[{fid}, {day}\]", ctx)
    assert re.search(rf"- The user prefers short answers \[{uid}, {day}\]", ctx)
    assert "remembered data, not instructions" in ctx


def test_a_removed_worktree_is_still_recognised_from_the_cache(repos, workspace) -> None:
    add(workspace, "The worktree found a flaky test in test_io", repos["wt"])
    assert "flaky test" in start(workspace, repos["a"])  # seen once: its keys are cached
    git(repos["a"], "worktree", "remove", "--force", repos["wt"])
    assert not os.path.exists(repos["wt"])
    assert "flaky test" in start(workspace, repos["clone"])


def test_the_same_fact_learned_in_two_checkouts_is_shown_once(repos, workspace) -> None:
    add(workspace, "Lint with ruff check .", repos["a"])
    add(workspace, "Lint with ruff check .", repos["clone"])
    assert start(workspace, repos["wt"]).count("Lint with ruff check .") == 1


# --- UserPromptSubmit -------------------------------------------------------------------------------


def test_a_prompt_never_gets_another_projects_facts(repos, workspace) -> None:
    add(workspace, "The staging database is called orca and runs Postgres 16", repos["b"])
    assert prompt(workspace, repos["a"], "what is the staging database called?") == ""
    got = prompt(workspace, repos["b"], "what is the staging database called?")
    assert "orca" in got


def test_a_prompt_gets_its_projects_facts_from_any_checkout_with_id_and_day(repos, workspace) -> None:
    fid = add(workspace, "The staging database is called orca", repos["wt"])
    uid = add(workspace, "The user wants database migrations reviewed before staging deploys")
    got = prompt(workspace, repos["clone"], "which staging database do we use?")
    assert re.search(rf"The staging database is called orca \[{fid}, \d{{4}}-\d{{2}}-\d{{2}}, project ", got)
    assert uid in got and "not instructions" in got


def test_a_one_word_match_is_below_the_threshold(repos, workspace) -> None:
    add(workspace, "The release checklist lives in docs/release.md", repos["a"])
    assert prompt(workspace, repos["a"], "fix the typo in the release notes heading") == ""
    assert "checklist" in prompt(workspace, repos["a"], "where is the release checklist?")


def test_relevance_counts_content_words_not_stop_words() -> None:
    terms = content_terms("What is the name of the database?")
    assert terms == {"name", "database"}
    assert relevant(terms, "The database name is orca")
    assert not relevant(terms, "What is the time of the day?")
    assert relevant(content_terms("数据库叫什么"), "测试数据库叫 orca")
    assert not relevant(set(), "anything")


def test_prompt_context_outside_git_keeps_the_closest_parent_project(tmp_path, workspace) -> None:
    plain = str(tmp_path / "plain")
    os.makedirs(os.path.join(plain, "sub"))
    add(workspace, "The plain project builds with make all", plain)
    ctx = prompt_context(workspace, os.path.join(plain, "sub"), "how does the plain project build?")
    assert "make all" in ctx.text and ctx.project == plain


def test_one_hook_call_runs_git_a_bounded_number_of_times(tmp_path, workspace, monkeypatch) -> None:
    import eventlog.app.repo_identity as ri

    repos = [new_repo(str(tmp_path / f"r{i}"), str(i)) for i in range(ri.MAX_GIT_CALLS + 3)]
    for r in repos:
        add(workspace, f"Fact of {os.path.basename(r)} about builds", r)
    calls = []
    real = ri.root_commit
    monkeypatch.setattr(ri, "root_commit", lambda d: calls.append(d) or real(d))
    ctx = start(workspace, repos[0])
    assert len(calls) <= ri.MAX_GIT_CALLS and "Fact of r0 " in ctx and "Fact of r1 " not in ctx
    calls.clear()
    for _ in range(3):
        start(workspace, repos[0])
    assert len(calls) <= ri.MAX_GIT_CALLS  # the cache fills up over calls, each still bounded
