"""Pausing capture and excluding projects or transcripts from it: ``<home>/capture.json``.

Every capture path asks this module before it reads a transcript: the Claude Code and Codex
hooks (``eventlog.app.agents.hooks``, ``codex_hooks``), ``evlog watch`` and the daemon's watch
job (``eventlog.app.agents.watch``), and ``evlog ingest`` (an explicit path that is excluded is
skipped unless ``--include-excluded``; a pause does not stop an explicit ingest).

The state lives in its own small file, ``<home>/capture.json``, not in ``evlog.json`` and not
under ``state/``: it is a user's choice (so not in the disposable ``state/`` folder), hooks read
it on every call (one small JSON read, no config parsing), and ``evlog capture ...`` rewrites it
atomically (temporary file, then rename) without touching the workspace's configuration::

    {"paused_until": 0, "excluded": ["/home/me/secret-project", "*/scratch/*.jsonl"]}

``paused_until``: 0 not paused, -1 paused until ``evlog capture resume``, else a Unix time.

An exclusion is a directory or file (it and everything under it; for a project directory also
its Claude Code transcript folder ``~/.claude/projects/<dir with non-alphanumerics as '-'>``)
or, when it holds ``*``, ``?`` or ``[``, a glob matched against the absolute path. A hook
matches both the session's ``cwd`` and its transcript path; an excluded ``cwd`` also means no
memory is given to that session.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import time

from eventlog.errors import ConfigError
from eventlog.record import Record

CAPTURE_FILE = "capture.json"
PAUSED_FOREVER = -1.0
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_GLOB_CHARS = "*?["


class CaptureState(Record):
    """Whether capture is paused (until when) and what is excluded."""

    __slots__ = ("paused_until", "excluded")
    paused_until: float
    excluded: list[str]

    def __init__(self, paused_until: float = 0.0, excluded: list[str] | None = None) -> None:
        self.paused_until = paused_until
        self.excluded = [] if excluded is None else excluded

    def paused(self, now: float | None = None) -> bool:
        """True while capture is paused."""
        if self.paused_until == PAUSED_FOREVER:
            return True
        return self.paused_until > (time.time() if now is None else now)

    def pause_text(self) -> str:
        """'until resumed' or 'until <UTC time>'."""
        if self.paused_until == PAUSED_FOREVER:
            return "until 'evlog capture resume'"
        return "until " + time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.paused_until))


def capture_file(home: str) -> str:
    """Where the capture state of the workspace at ``home`` is kept."""
    return os.path.join(home, CAPTURE_FILE)


def load_state(home: str) -> CaptureState:
    """The capture state (the default, nothing paused or excluded, when there is no file)."""
    path = capture_file(home)
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except FileNotFoundError:
        return CaptureState()
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: cannot be read as JSON ({e})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: must hold a JSON object")
    until = raw.get("paused_until", 0)
    excluded = raw.get("excluded", [])
    if not isinstance(until, (int, float)) or isinstance(until, bool):
        raise ConfigError(f"{path}: field 'paused_until' must be a number")
    if not isinstance(excluded, list) or not all(isinstance(x, str) for x in excluded):
        raise ConfigError(f"{path}: field 'excluded' must be a list of strings")
    return CaptureState(float(until), list(excluded))


def save_state(home: str, state: CaptureState) -> None:
    """Write the capture state atomically."""
    path = capture_file(home)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"paused_until": state.paused_until, "excluded": state.excluded}, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)


def parse_duration(text: str) -> float:
    """Seconds in '90', '30s', '15m', '2h', '1d'; ``ValueError`` naming the text otherwise."""
    m = _DURATION.match(text)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"{text!r} is not a duration (a positive number with s, m, h or d, e.g. 2h)")
    return float(m.group(1)) * _UNIT_SECONDS[m.group(2)]


def pause(home: str, seconds: float | None = None, *, now: float | None = None) -> CaptureState:
    """Pause capture for ``seconds`` (None: until ``resume``)."""
    state = load_state(home)
    state.paused_until = PAUSED_FOREVER if seconds is None else (time.time() if now is None else now) + seconds
    save_state(home, state)
    return state


def resume(home: str) -> CaptureState:
    """Capture again."""
    state = load_state(home)
    state.paused_until = 0.0
    save_state(home, state)
    return state


def normalise_rule(rule: str) -> str:
    """An exclusion as kept: ``~`` expanded, a plain path made absolute (a glob kept as given otherwise)."""
    rule = os.path.expanduser(rule.strip())
    if not rule:
        raise ValueError("an empty path cannot be excluded")
    if any(c in rule for c in _GLOB_CHARS):
        return rule if os.path.isabs(rule) or rule.startswith("*") else os.path.join(os.getcwd(), rule)
    return os.path.abspath(rule)


def exclude(home: str, rule: str) -> tuple[CaptureState, bool]:
    """Exclude a directory, file or glob from capture; (state, whether it was new)."""
    rule = normalise_rule(rule)
    state = load_state(home)
    if rule in state.excluded:
        return state, False
    state.excluded.append(rule)
    save_state(home, state)
    return state, True


def include(home: str, rule: str) -> tuple[CaptureState, bool]:
    """Capture a formerly excluded rule again; (state, whether it was excluded)."""
    rule = normalise_rule(rule)
    state = load_state(home)
    if rule not in state.excluded:
        return state, False
    state.excluded.remove(rule)
    save_state(home, state)
    return state, True


def _under(path: str, root: str) -> bool:
    root = root.rstrip(os.sep) or os.sep
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


def matching_rule(state: CaptureState, path: str) -> str:
    """The exclusion that covers ``path`` ('' when none does)."""
    if not path or not state.excluded:
        return ""
    from eventlog.app.agents.hooks import project_folder_name

    path = os.path.abspath(os.path.expanduser(path))
    parts = path.split(os.sep)[:-1]
    for rule in state.excluded:
        if any(c in rule for c in _GLOB_CHARS):
            if fnmatch.fnmatch(path, rule):
                return rule
        elif _under(path, rule) or project_folder_name(rule) in parts:
            return rule
    return ""


def capture_blocked(home: str, *paths: str, now: float | None = None, pause_counts: bool = True) -> str:
    """Why capture of a session with these paths (cwd, transcripts) must not happen ('' when it may).

    ``pause_counts=False``: only exclusions (an agent's memory context, an explicit ingest).
    """
    state = load_state(home)
    if pause_counts and state.paused(now):
        return f"capture is paused {state.pause_text()}"
    for p in paths:
        rule = matching_rule(state, p)
        if rule:
            return f"{p} is excluded from capture ({rule}; 'evlog capture include {rule}' undoes it)"
    return ""
