"""Fact extraction on real transcripts written by others (read in place from ../shared/data/real).

Each source folder is ingested with the ``evlog`` command line into a temporary
workspace, its ``message.appended`` events become entries, and the offline extractor
runs over them as Dream batches them (tools/eval_memory.py). The facts must be what a
reader of those transcripts would record, and none may come from injected, skill,
system, tool or subagent text. LoCoMo is checked the same way against the issue's
targets.
"""

from __future__ import annotations

import functools
import os
import re
import sys

import pytest

from processors.extract.model import ExistingFact
from processors.extract.text import skip_reason
from tests.conftest import REPO, real_data

sys.path.insert(0, os.path.join(REPO, "tools"))
import eval_memory


@functools.cache
def _run(name: str) -> tuple[dict, list[ExistingFact]]:
    entries = eval_memory.real_entries(real_data(name))
    facts, _ops = eval_memory.extract_in_batches(entries)
    return {e.ref: e for e in entries}, [f for f in facts if f.state == "active"]


def facts_of(name: str) -> tuple[dict, list[ExistingFact]]:
    real_data(name)  # skips (with the reason) when the data is absent
    return _run(name)


SOURCES = ["claude-spotter", "claude-code-viewer", "claude-kfischer-branching", "nanobot-sessions",
           "agent-history-real-sessions"]


@pytest.mark.parametrize("name", SOURCES)
def test_no_fact_comes_from_injected_generated_or_tool_text(name):
    by_ref, facts = facts_of(name)
    for f in facts:
        assert 1 <= len(f.sources) <= 3, f
        for ref in f.sources:
            e = by_ref[ref]
            if e.role == "assistant" and e.meta.get("tool_calls"):  # a command run, a manifest read: never text
                assert f.scope == "project" and f.subject == "project", (f.text, e.meta)
                assert f.text.startswith(("The project is worked on with `", "The project's ")), f.text
                continue
            assert e.role == "user" and skip_reason(e) is None, (f.text, e.role, e.meta)
            assert not e.meta.get("isMeta") and not e.meta.get("isCompactSummary"), f.text
            assert "/agent-" not in e.session_key and "/sidechain-" not in e.session_key, f.text
        assert f.subject and f.when, f


def test_the_skill_expansion_is_not_learned():
    by_ref, facts = facts_of("claude-spotter")
    skill = [e for e in by_ref.values() if e.meta.get("isMeta") and "plan mode" in e.text]
    assert skill, "the spotter transcripts hold the create-beads skill expansion"
    assert not any(re.search(r"plan mode|DO NOT|beads until", f.text, re.IGNORECASE) for f in facts)


def test_spotter_conventions_are_found():
    _by_ref, facts = facts_of("claude-spotter")
    texts = [f.text for f in facts]
    assert "Work on the project is tracked as beads, with the bd command." in texts
    assert "The project uses xterm.js." in texts  # a library named the JavaScript way, in no list of names
    assert any("Elixir" in t for t in texts)  # from the mix.exs the agent read
    assert any("`mix credo" in t for t in texts)  # a command of the verification loop
    assert not any(t.startswith("The user writes to the agent in") for t in texts)
    projects = ("/home/USER/projects/spotter", "/home/marco/projects/spotter")
    assert all(f.scope == "project" and f.project.startswith(projects) for f in facts)


def test_claude_code_viewer_stack_from_slash_command_arguments():
    by_ref, facts = facts_of("claude-code-viewer")
    texts = {f.text: f for f in facts}
    assert "The project uses Next.js." in texts
    assert "The project keeps instructions for the coding agent in CLAUDE.md." in texts
    # the subagents' prompts (TypeScript, Tailwind CSS, ...) were written by the orchestrating agent, not the user
    assert not any("Tailwind" in t or "TypeScript" in t for t in texts)
    next_js = texts["The project uses Next.js."]
    assert all("<command-args>" in by_ref[s].text for s in next_js.sources)


def test_nanobot_questions_to_the_bot_are_no_facts():
    _by_ref, facts = facts_of("nanobot-sessions")
    assert [f.text for f in facts] == []  # questions and requests to a chat assistant; its language is no fact


def test_redacted_transcripts_give_nothing():
    _by_ref, facts = facts_of("agent-history-real-sessions")
    assert facts == []


def test_locomo_targets(monkeypatch):
    monkeypatch.setenv("EVLOG_LOCOMO", real_data("locomo", "locomo10.json"))

    class Args:
        conversations = 0
        max_lines = 200
        max_bytes = 25_000

    rows, _facts = eval_memory.run_locomo(Args())
    total = eval_memory.locomo_summary(rows)
    assert total["questions"] == 1540
    assert total["coverage"] >= 0.30, total
    assert total["cut_mid_word"] == 0 and total["near_duplicate_pairs"] == 0 and total["no_subject_or_date"] == 0
    assert total["max_sources"] <= 3
    assert all(r["file_sizes"] and all(v["lines"] <= 200 and v["bytes"] <= 25_000 for v in r["file_sizes"].values())
               for r in rows)
