"""``ClaudeCodeLLM``: Claude through Claude Code's headless mode, with the user's own sign-in (no API key).

One call runs ``claude -p --output-format json --max-turns 1 --system-prompt <system>
[--model M] --disallowedTools <every tool>`` with the prompt on stdin, in an empty
temporary directory (no project's CLAUDE.md, settings or files), with
``EVLOG_HEADLESS=1`` in its environment so evlog's own Claude Code hooks ignore the
session (an extraction is never captured and learned again). Claude Code prints one JSON
object: ``{"type": "result", "subtype": "success", "is_error": false, "result": <text>,
"usage": {...}, "modelUsage": {<model>: ...}}``; the answer is ``result``, the usage its
input tokens (plus cache creation and reads) and output tokens.

Everything else is an ``LLMCallError``: no ``claude`` program (``config``), no answer
within ``timeout`` seconds (``timeout``; the process is killed), a non-zero exit or
``is_error`` (``auth`` when it says the user is not logged in, ``rate_limit`` for a usage
limit, else ``server``), and output that is not that JSON object or holds no text result
(``bad_request``: a hostile or broken program). Output beyond ``MAX_OUTPUT_BYTES`` is cut
and refused. Messages quote at most a short, redacted excerpt of what the program said.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from typing import ClassVar

from eventlog.secrets import redact
from processors.llm import LLM, Completion, LLMCallError, LLMErrorKind, Prompt

PROGRAM_ENV = "EVLOG_CLAUDE"  # another claude executable (default: "claude" on PATH)
HEADLESS_ENV = "EVLOG_HEADLESS"  # set for the child: evlog's hooks do nothing in that session
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
#: Claude Code's built-in tools, all refused: an extraction reads text and answers, nothing more.
TOOLS = ("Bash", "BashOutput", "Edit", "MultiEdit", "Write", "NotebookEdit", "Read", "Glob", "Grep", "LS",
         "WebFetch", "WebSearch", "Task", "TodoWrite", "KillShell", "SlashCommand", "Skill")


def find_program(program: str | None = None) -> str | None:
    """The ``claude`` executable: ``program``, else ``$EVLOG_CLAUDE``, else ``claude`` on PATH; None if none."""
    name = program or os.environ.get(PROGRAM_ENV, "").strip() or "claude"
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name)


class ClaudeCodeLLM(LLM):
    """Claude through ``claude -p`` (see the module docstring)."""

    name: ClassVar[str] = "claude-code"

    def __init__(self, *, program: str | None = None, model: str | None = None, timeout: float = 180.0) -> None:
        found = find_program(program)
        if found is None:
            raise LLMCallError("the claude-code LLM needs Claude Code's 'claude' program on PATH (or $EVLOG_CLAUDE); "
                               "install Claude Code and sign in, or choose another LLM", kind="config")
        if timeout <= 0:
            raise LLMCallError(f"timeout must be positive, not {timeout}", kind="config")
        self.program = found
        self.model = model or "claude-code-default"
        self._model_arg = model
        self.timeout = float(timeout)

    def __repr__(self) -> str:
        return f"<ClaudeCodeLLM program={self.program!r} model={self.model!r} timeout={self.timeout}>"

    def command(self, prompt: Prompt) -> list[str]:
        """The argument list of one call (the prompt itself goes on stdin)."""
        cmd = [self.program, "-p", "--output-format", "json", "--max-turns", "1", "--disallowedTools", *TOOLS]
        if prompt.system:
            cmd += ["--system-prompt", prompt.system]
        if self._model_arg:
            cmd += ["--model", self._model_arg]
        return cmd

    def complete(self, prompt: Prompt) -> Completion:
        """One headless run; failures become ``LLMCallError`` (see the module docstring)."""
        env = {**os.environ, HEADLESS_ENV: "1"}
        with tempfile.TemporaryDirectory(prefix="evlog-claude-") as cwd:
            try:
                proc = subprocess.run(self.command(prompt), input=prompt.user.encode("utf-8"), capture_output=True,
                                      timeout=self.timeout, cwd=cwd, env=env, check=False)
            except subprocess.TimeoutExpired:
                raise LLMCallError(f"claude -p did not answer within {self.timeout:g} s", kind="timeout") from None
            except OSError as e:
                raise LLMCallError(f"could not run {self.program}: {e.strerror or e}", kind="config") from None
        return self._parse(proc.returncode, proc.stdout, proc.stderr)

    def _parse(self, status: int, out: bytes, err: bytes) -> Completion:
        if len(out) > MAX_OUTPUT_BYTES:
            raise LLMCallError(f"claude -p printed {len(out)} bytes, more than {MAX_OUTPUT_BYTES}", kind="bad_request")
        try:
            data = json.loads(out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            data = None
        if not isinstance(data, dict):
            if status != 0:
                raise LLMCallError(f"claude -p exited with status {status}: {_excerpt(err or out)}",
                                   kind=_error_kind(err or out))
            raise LLMCallError(f"claude -p printed no JSON result object: {_excerpt(out)}", kind="bad_request")
        result = data.get("result")
        if data.get("is_error") or status != 0 or data.get("subtype") not in (None, "success"):
            said = result if isinstance(result, str) else str(data.get("subtype") or "")
            raise LLMCallError(f"claude -p reported an error (status {status}, {data.get('subtype', '?')}): "
                               f"{_excerpt(said.encode())}", kind=_error_kind(said.encode()))
        if not isinstance(result, str):
            raise LLMCallError("claude -p's JSON holds no text 'result'", kind="bad_request")
        raw_usage = data.get("usage")
        usage: dict = raw_usage if isinstance(raw_usage, dict) else {}
        models = data.get("modelUsage")
        model = next(iter(models), self.model) if isinstance(models, dict) and models else self.model
        return Completion(text=result, model=str(model)[:100], input_tokens=_tokens(usage, "input_tokens")
                          + _tokens(usage, "cache_creation_input_tokens") + _tokens(usage, "cache_read_input_tokens"),
                          output_tokens=_tokens(usage, "output_tokens"), stop_reason="end_turn")


def _tokens(usage: dict, key: str) -> int:
    v = usage.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10**9 else 0


def _excerpt(raw: bytes) -> str:
    text = " ".join(raw.decode("utf-8", "replace").split())
    text = redact(text)[0]
    return (text[:200] + "...") if len(text) > 200 else (text or "(nothing)")


def _error_kind(raw: bytes) -> LLMErrorKind:
    text = raw.decode("utf-8", "replace").casefold()
    if any(w in text for w in ("log in", "login", "logged in", "invalid api key", "authenticat", "unauthori")):
        return "auth"
    if any(w in text for w in ("usage limit", "rate limit", "limit reached", "too many requests")):
        return "rate_limit"
    return "server"
