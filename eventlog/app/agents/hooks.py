"""``evlog hook claude-code``: what evlog does when Claude Code runs a hook.

Claude Code runs the hook with a JSON object on stdin (``hook_event_name``,
``session_id``, ``transcript_path``, ``cwd``, and per event a few more fields) and reads
its stdout. ``handle_claude_code(payload, home=...)`` returns what to print and the notes
for stderr:

* ``Stop``, ``SubagentStop``, ``PreCompact``, ``SessionEnd``: **capture**. The transcript
  (and a subagent's ``agent_transcript_path``) is ingested incrementally
  (``eventlog.ingest.incremental``): only the bytes added since the last ingest of that
  file are read, so the cost follows the new bytes, not the file. Nothing is printed. At
  ``SessionEnd`` an unterminated last line is taken too (the session is over), and the
  hook reads at most 1 MiB and waits at most 0.5 s for the lock (Claude Code gives
  SessionEnd hooks 1.5 s by default; the Stop hooks already read the rest). A payload
  without ``transcript_path`` falls back to Claude Code's own layout
  (``~/.claude/projects/<cwd with every non-alphanumeric character as '-'>/<session_id>.jsonl``).
* ``SessionStart`` (every source: startup, resume, clear, compact): **context**. Prints
  ``{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": ...}}``
  holding the memory for ``cwd`` (``eventlog.app.agents.context``: project facts, then
  facts about the user, within ``budget`` bytes). Nothing is printed when there is no
  memory yet. When none of the files it is made from changed since a hook printed it, the
  same output comes from ``eventlog.app.agents.context_cache`` (a hook process then imports
  neither the secrets scanner nor SQLite). ``UserPromptSubmit`` prints the facts relevant to the prompt (through the
  recall index, read-only; ``context.prompt_context``): only ``cwd``'s project's (one
  project across its worktrees and clones: ``eventlog.app.repo_identity``) and the user's,
  each with its id and day, when there are any.
* **Paused or excluded** (``evlog capture``, ``eventlog.app.capture``; ``capture_gate``): a
  capture event does nothing while capture is paused or when its ``cwd`` or transcript is
  excluded; an excluded ``cwd`` gets no memory either. Each says so in a note (exit 0).
* Any other event: nothing. Nothing at all either in a session evlog itself runs
  (``$EVLOG_HEADLESS`` set: Dream's ``claude -p`` call), so an extraction is never learned.

**A hook never breaks or stalls Claude Code.** Every failure (bad JSON, missing or odd
fields, a missing transcript, a workspace that is locked past the short timeout, damaged,
or not initialised) becomes a one-line note on stderr and exit status 0; time is bounded
by the lock timeouts and by ``max_bytes`` (new transcript bytes read per call: whole lines,
the rest is read by the next hook or ``evlog watch``). Nothing is lost: ingest is
idempotent, so whatever a hook could not do, the next one (or ``evlog watch``, or
``evlog ingest``) does. Capture appends to the log only; projection files (session files)
follow at the next flush of any writer (the daemon, the MCP server, an evlog command).
"""

from __future__ import annotations

import json
import os
import re
import stat
import time

from eventlog.errors import EvlogError
from eventlog.record import Record

TYPE_CHECKING = False  # typing's, without importing typing: a context hook's process starts here
if TYPE_CHECKING:
    from typing import Any

    from eventlog.app.agents.context import ProjectScope

CAPTURE_EVENTS = ("Stop", "SubagentStop", "PreCompact", "SessionEnd")
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
HOOK_EVENTS = CAPTURE_EVENTS + CONTEXT_EVENTS
HOOK_MAX_BYTES = 8 * 1024 * 1024  # new transcript bytes one capture reads (the rest: the next hook, or watch)
HOOK_LOCK_TIMEOUT = 2.0  # seconds a hook waits for another writer
SESSION_END_LOCK_TIMEOUT = 0.5  # Claude Code gives SessionEnd hooks little time (1.5 s by default)
SESSION_END_MAX_BYTES = 1024 * 1024  # ... so they read little: Stop hooks already read the rest
PROMPT_CONTEXT_BYTES = 2000
PROMPT_HITS = 5
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024
HEADLESS_ENV = "EVLOG_HEADLESS"  # set by processors.llm.claude_code for the sessions it runs
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,200}$")


class HookResult(Record):
    """What a hook run prints (``stdout``, maybe empty) and reports on stderr (``notes``)."""

    __slots__ = ("event", "stdout", "notes", "ingested", "elapsed")
    event: str
    stdout: str
    notes: list[str]
    ingested: list[Any]  # SourceResult per transcript read
    elapsed: float

    def __init__(self, event: str = "", stdout: str = "", notes: list[str] | None = None,
                 ingested: list[Any] | None = None, elapsed: float = 0.0) -> None:
        self.event, self.stdout, self.elapsed = event, stdout, elapsed
        self.notes = [] if notes is None else notes
        self.ingested = [] if ingested is None else ingested


def claude_dir() -> str:
    """Claude Code's configuration folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def project_folder_name(cwd: str) -> str:
    """The folder Claude Code keeps a directory's transcripts in: every non-alphanumeric character as '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def parse_payload(raw: bytes | str) -> dict[str, Any]:
    """The hook's JSON object; ``ValueError`` with a clear reason if it is not one."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"the hook input is not UTF-8 (byte {e.start})") from None
    if not raw.strip():
        raise ValueError("the hook input is empty (Claude Code sends a JSON object on stdin)")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ValueError(f"the hook input is not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise ValueError("the hook input is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError(f"the hook input must be a JSON object, got {type(value).__name__}")
    return value


def _text_field(payload: dict[str, Any], name: str, notes: list[str]) -> str:
    v = payload.get(name)
    if v is None:
        return ""
    if not isinstance(v, str):
        notes.append(f"field {name!r} must be a string, got {type(v).__name__}; ignored")
        return ""
    return v


def read_hook_input(payload: Any) -> tuple[dict[str, Any] | None, HookResult]:
    """The hook's JSON and a result naming its event; ``None`` (with the reason in the notes) when unusable.

    Shared by every agent's hook handler (Claude Code here, Codex in ``codex_hooks``).
    """
    result = HookResult()
    try:
        data = payload if isinstance(payload, dict) else parse_payload(payload)
    except ValueError as e:
        result.notes.append(str(e))
        return None, result
    result.event = _text_field(data, "hook_event_name", result.notes)
    if not result.event:
        result.notes.append("no 'hook_event_name' in the hook input; nothing to do")
        return None, result
    return data, result


def handle_claude_code(
    payload: dict[str, Any] | bytes | str,
    *,
    home: str,
    budget: int | None = None,
    lock_timeout: float = HOOK_LOCK_TIMEOUT,
    max_bytes: int = HOOK_MAX_BYTES,
) -> HookResult:
    """Handle one Claude Code hook call (see the module docstring); never raises for bad input."""
    started = time.monotonic()
    data, result = read_hook_input(payload)
    if data is None:
        return result
    if os.environ.get(HEADLESS_ENV):
        return result  # evlog's own headless Claude Code call (processors.llm.claude_code): never captured
    event = result.event
    if capture_gate(data, event, home, result, CAPTURE_EVENTS):
        return result
    try:
        if event in CAPTURE_EVENTS:
            _capture(data, event, home, result, lock_timeout=lock_timeout, max_bytes=max_bytes)
        elif event == "SessionStart":
            _session_start(data, home, budget, result)
        elif event == "UserPromptSubmit":
            _prompt_context(data, home, min(budget or PROMPT_CONTEXT_BYTES, PROMPT_CONTEXT_BYTES), result)
    except EvlogError as e:
        result.notes.append(f"{event}: {e}")
    except OSError as e:
        result.notes.append(f"{event}: {e.strerror or e}" + (f" ({e.filename})" if e.filename else ""))
    result.elapsed = time.monotonic() - started
    return result


def capture_gate(data: dict[str, Any], event: str, home: str, result: HookResult,
                 capture_events: tuple[str, ...]) -> bool:
    """True (with a note) when ``eventlog.app.capture`` says this call must do nothing.

    A capture event does nothing while capture is paused or when its ``cwd`` or transcript is
    excluded; a context event gives no memory to an excluded ``cwd`` (a pause does not stop it).
    """
    from eventlog.app.capture import capture_blocked

    if event not in capture_events and event not in CONTEXT_EVENTS:
        return False
    notes: list[str] = []
    cwd = _text_field(data, "cwd", notes)
    try:
        if event in capture_events:
            paths = [cwd, _text_field(data, "transcript_path", notes), _text_field(data, "agent_transcript_path", notes)]
            why = capture_blocked(home, *[p for p in paths if p])
        else:
            why = capture_blocked(home, cwd, pause_counts=False) if cwd else ""
    except EvlogError as e:
        result.notes.append(f"{event}: {e}")
        return True
    if why:
        result.notes.append(f"{event}: {why}; " + ("nothing captured" if event in capture_events else "no memory given"))
    return bool(why)


def transcript_paths(data: dict[str, Any], event: str, notes: list[str]) -> list[str]:
    """The transcript files a capture event names (the main one, and a subagent's)."""
    paths = []
    main = _text_field(data, "transcript_path", notes)
    if not main:
        sid = _text_field(data, "session_id", notes)
        cwd = _text_field(data, "cwd", notes)
        if sid and cwd and _SAFE_ID.match(sid):
            guess = os.path.join(claude_dir(), "projects", project_folder_name(cwd), sid + ".jsonl")
            if os.path.exists(guess):
                main = guess
        if not main:
            notes.append(f"{event}: the hook input names no transcript_path; nothing captured")
    if main:
        paths.append(os.path.expanduser(main))
    if event == "SubagentStop":
        agent = _text_field(data, "agent_transcript_path", notes)
        if agent:
            paths.append(os.path.expanduser(agent))
    return paths


def _capture(data: dict[str, Any], event: str, home: str, result: HookResult, *, lock_timeout: float,
             max_bytes: int) -> None:
    paths = transcript_paths(data, event, result.notes)
    state_dir = os.path.join(home, "state")  # eventlog.app.workspace.STATE_DIR, not imported (see below)
    final = event == "SessionEnd"
    unread = [p for p in paths if not _read_up_to_date(state_dir, p, final)]
    if not unread:
        return  # each transcript's last read took it to its end: no ingest, log or workspace code imported
    from eventlog.app.workspace import LOG_DIR, load_config
    from eventlog.errors import RefusedInput
    from eventlog.ingest import incremental
    from eventlog.ingest.source import kind_of, refuse_workspace_files
    from eventlog.log import Log

    todo = []
    for p in unread:
        try:
            refuse_workspace_files(p)
        except RefusedInput as e:
            result.notes.append(f"{event}: {e}")
            continue
        try:
            mode = os.stat(p).st_mode
        except OSError:
            result.notes.append(f"{event}: transcript {p} does not exist (yet); nothing captured from it")
            continue
        if not stat.S_ISREG(mode):
            result.notes.append(f"{event}: {p} is {kind_of(mode)}, not a transcript file; nothing captured from it")
        elif incremental.needs_ingest(state_dir, p, final=final):
            todo.append(p)
    if not todo:
        return
    if event == "SessionEnd":
        lock_timeout = min(lock_timeout, SESSION_END_LOCK_TIMEOUT)
        max_bytes = min(max_bytes, SESSION_END_MAX_BYTES)
    config = load_config(home)
    log = Log.open(os.path.join(home, LOG_DIR), writable=True, durability=config.durability,  # type: ignore[arg-type]
                   segment_bytes=config.segment_bytes, group_commit_interval=config.group_commit_interval,
                   lock_timeout=lock_timeout)
    try:
        for p in todo:
            try:
                r = incremental.ingest_file(log, p, state_dir=state_dir, final=final, max_bytes=max_bytes,
                                lock_timeout=lock_timeout)
            except EvlogError as e:
                result.notes.append(f"{event}: {e}")
                continue
            result.ingested.append(r)
            result.notes.extend(f"{event}: {w}" for w in r.file.warnings)
            if r.error:
                result.notes.append(f"{event}: {r.error}")
            elif r.capped:
                result.notes.append(f"{event}: read {r.bytes_read} bytes of {p}; the next hook (or evlog watch) reads "
                                    f"the remaining {r.pending_bytes}")
    finally:
        log.close()


def _read_up_to_date(state_dir: str, path: str, final: bool) -> bool:
    """Whether ``path`` is a regular file whose last ingest read all there is (nothing to do, nothing to say).

    Anything else (missing, not a regular file, grown, never read) goes the full way, which checks
    and reports it. A workspace's own file is never read, so it never has a state saying so.
    """
    from eventlog.source_state import needs_ingest

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
    except OSError:
        return False
    return not needs_ingest(state_dir, path, final=final)


def _session_start(data: dict[str, Any], home: str, budget: int | None, result: HookResult) -> None:
    """The memory block for ``cwd``: from ``context_cache`` when nothing it was made from changed, else rendered."""
    from eventlog.app.agents import context_cache  # here: a capture never pays for these
    from eventlog.app.agents.context import DEFAULT_CONTEXT_BYTES, project_scope

    cwd = _text_field(data, "cwd", result.notes) or os.getcwd()
    if not os.path.isdir(os.path.join(home, "memory")) and not os.path.exists(os.path.join(home, "evlog.json")):
        result.notes.append(f"SessionStart: {home} is not an evlog workspace (run 'evlog init'); no memory given")
        return
    budget = budget or DEFAULT_CONTEXT_BYTES
    scope = project_scope(home, cwd)
    key = context_cache.entry_key(scope.label, scope.members, budget)
    cached = context_cache.lookup(home, key)
    if cached is not None:
        result.stdout = cached
        return
    result.stdout = render_session_start(home, cwd, budget, scope)


def render_session_start(home: str, cwd: str, budget: int, scope: ProjectScope) -> str:
    """What a SessionStart prints, rendered (and kept in ``context_cache``): ``hook_output`` of the memory block."""
    from eventlog.app.agents import context_cache
    from eventlog.app.agents.context import context_inputs, memory_context

    inputs = context_cache.signature(context_inputs(home, scope))  # before reading them (see context_cache)
    ctx = memory_context(home, cwd, budget=budget, scope=scope)
    stdout = hook_output("SessionStart", ctx.text) if ctx.text else ""
    context_cache.store(home, context_cache.entry_key(scope.label, scope.members, budget), inputs, stdout)
    return stdout


def _prompt_context(data: dict[str, Any], home: str, budget: int, result: HookResult) -> None:
    """Facts of ``cwd``'s project and the user's relevant to the prompt (``context.prompt_context``; read-only)."""
    prompt = _text_field(data, "prompt", result.notes)
    if not prompt.strip():
        return
    from eventlog.app.agents.context import prompt_context

    cwd = _text_field(data, "cwd", result.notes) or os.getcwd()
    ctx = prompt_context(home, cwd, prompt, budget=budget, limit=PROMPT_HITS)
    if ctx.text:
        result.stdout = hook_output("UserPromptSubmit", ctx.text)


def hook_output(event: str, context: str) -> str:
    """The JSON a Claude Code hook prints to add ``context`` to the conversation (secrets redacted: I24)."""
    from eventlog.secrets import redact

    context = redact(context)[0]
    return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}},
                      ensure_ascii=False)
