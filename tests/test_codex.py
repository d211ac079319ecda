"""Codex (issue 24): ``evlog setup codex`` round-trips a real-looking ~/.codex, ``evlog hook codex`` handles
Codex's payloads, and Codex's injected turns are stored as harness text."""

from __future__ import annotations

import json
import os
import tomllib

import pytest

from eventlog.ingest import parse_file
from processors.dream import Entry
from processors.extract.text import skip_reason
from tests.conftest import real_data

CODEX_REAL = ("agent-history-real-sessions", "codex-session-01.jsonl")


# --------------------------------------------------------------------------- harness text


def _entry(m) -> Entry:  # noqa: ANN001
    return Entry(ref="m", seq=1, session_key="codex:x", message_id=m.message_id, project="", speaker="user",
                 role=m.role, time=m.timestamp, text=m.content, meta=m.extra)


def test_codex_developer_prompt_and_environment_context_are_harness_text():
    parsed = parse_file(real_data(*CODEX_REAL))
    (session,) = parsed.sessions
    by_text = {m.content.split("\n")[0]: m for m in session.messages}
    env = by_text["<environment_context>"]
    dev = by_text["[REDACTED_DEVELOPER_CONTEXT]"]
    prompt = by_text["[REDACTED_PROMPT]"]
    assert env.role == "user" and env.extra.get("isMeta") is True and env.extra.get("harness") == "environment_context"
    assert dev.role == "system" and dev.extra.get("isMeta") is True and dev.extra.get("harness") == "developer"
    assert "isMeta" not in prompt.extra and "harness" not in prompt.extra
    assert skip_reason(_entry(env)) is not None
    assert skip_reason(_entry(prompt)) is None


@pytest.mark.parametrize("text,name", [
    ("<user_instructions>\nAlways answer in French.\n</user_instructions>", "user_instructions"),
    ("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nuse ruff\n</INSTRUCTIONS>", "agents_md"),
    ("<turn_aborted>\nThe user interrupted the turn.\n</turn_aborted>", "turn_aborted"),
])
def test_codex_other_injected_user_turns_are_harness_text(tmp_path, text, name):
    rollout = tmp_path / "rollout-2026-06-05T04-58-20-0000.jsonl"
    lines = [{"timestamp": "2026-06-05T04:58:20Z", "type": "session_meta", "payload": {"id": "s1", "cwd": "/repo"}},
             {"timestamp": "2026-06-05T04:58:21Z", "type": "response_item",
              "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}},
             {"timestamp": "2026-06-05T04:58:22Z", "type": "response_item",
              "payload": {"type": "message", "role": "user",
                          "content": [{"type": "input_text", "text": "<b>bold</b> is what I want"}]}}]
    rollout.write_text("".join(json.dumps(x) + "\n" for x in lines))
    first, second = parse_file(str(rollout)).sessions[0].messages
    assert first.extra.get("isMeta") is True and first.extra.get("harness") == name
    assert "isMeta" not in second.extra  # a user's own text that happens to start with a tag
