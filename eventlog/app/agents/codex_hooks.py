"""``evlog hook codex``: what evlog does when Codex runs a hook (``hooks.json``, see ``codex_setup``).

Codex runs a command hook with one JSON object on stdin: ``session_id``, ``transcript_path``
(the rollout file, or null), ``cwd``, ``hook_event_name``, ``model``, and per event a few more
fields (``source`` at SessionStart, ``prompt`` and ``turn_id`` at UserPromptSubmit,
``stop_hook_active`` and ``last_assistant_message`` at Stop, ``trigger`` at PreCompact). It
reads the hook's stdout as JSON, in Claude Code's shape
(``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}``).

* ``Stop``, ``PreCompact``: **capture**: the rollout file is ingested incrementally (only the
  bytes added since the last capture), exactly as the Claude Code hook does
  (``eventlog.app.agents.hooks``). A null ``transcript_path`` falls back to Codex's layout:
  ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<session_id>.jsonl``.
* ``SessionStart``: the memory for ``cwd`` as additional context; ``UserPromptSubmit``: the facts
  that match the prompt (installed with ``evlog setup codex --prompt-context``).
* Anything else: nothing.

Pausing and exclusions (``evlog capture``) apply as in the Claude Code hook (``hooks.capture_gate``).

Like every evlog hook it never fails Codex: problems are notes for stderr, exit status 0.
"""

from __future__ import annotations

import glob
import os
import re
import time
from typing import Any

from eventlog.app.agents import hooks as claude_hooks
from eventlog.app.agents.codex_setup import codex_home
from eventlog.errors import EvlogError

CAPTURE_EVENTS = ("Stop", "PreCompact")
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,200}$")


def rollout_path(session_id: str, root: str | None = None) -> str:
    """The newest rollout file of a Codex session ('' when there is none)."""
    if not _SAFE_ID.match(session_id):
        return ""
    pattern = os.path.join(root or codex_home(), "sessions", "*", "*", "*", f"rollout-*-{session_id}.jsonl")
    found = sorted(glob.glob(pattern))
    return found[-1] if found else ""


def handle_codex(payload: dict[str, Any] | bytes | str, *, home: str, budget: int | None = None,
                 lock_timeout: float = claude_hooks.HOOK_LOCK_TIMEOUT,
                 max_bytes: int = claude_hooks.HOOK_MAX_BYTES) -> claude_hooks.HookResult:
    """Handle one Codex hook call (see the module docstring); never raises for bad input."""
    started = time.monotonic()
    data, result = claude_hooks.read_hook_input(payload)
    if data is None:
        return result
    event = result.event
    if event in CAPTURE_EVENTS:
        data = _with_transcript(data, event, result.notes)
    if claude_hooks.capture_gate(data, event, home, result, CAPTURE_EVENTS):
        return result
    try:
        if event in CAPTURE_EVENTS:
            if data.get("transcript_path"):
                claude_hooks._capture(data, event, home, result, lock_timeout=lock_timeout, max_bytes=max_bytes)
        elif event == "SessionStart":
            claude_hooks._session_start(data, home, budget, result)
        elif event == "UserPromptSubmit":
            claude_hooks._prompt_context(data, home, min(budget or claude_hooks.PROMPT_CONTEXT_BYTES,
                                                         claude_hooks.PROMPT_CONTEXT_BYTES), result)
    except EvlogError as e:
        result.notes.append(f"{event}: {e}")
    except OSError as e:
        result.notes.append(f"{event}: {e.strerror or e}" + (f" ({e.filename})" if e.filename else ""))
    result.elapsed = time.monotonic() - started
    return result


def _with_transcript(data: dict[str, Any], event: str, notes: list[str]) -> dict[str, Any]:
    """``data`` with ``transcript_path`` set: the payload's, else the session's rollout file."""
    path = claude_hooks._text_field(data, "transcript_path", notes)
    if not path:
        sid = claude_hooks._text_field(data, "session_id", notes)
        path = rollout_path(sid) if sid else ""
        if not path:
            notes.append(f"{event}: the hook input names no transcript_path and no rollout file of session "
                         f"{sid or '?'} was found; nothing captured")
    return {**data, "transcript_path": path}
