"""``evlog watch``: follow transcript folders and ingest what grows, incrementally.

A ``Watcher`` polls its paths (files or folders searched for ``*.jsonl``, hidden names
skipped) every ``interval`` seconds with ``stat`` calls only. A file whose size, mtime or
inode changed since it was last ingested is ingested (``eventlog.ingest.incremental``:
only its new bytes are read) once it has been quiet for ``debounce`` seconds, so a
response Claude Code is still streaming is read when it is done, not line by line.

* **Rotation, replacement, deletion.** A file replaced by another (new inode), cut shorter
  or rewritten is read again from its start (the incremental reader notices; ingest is
  idempotent, so nothing is doubled); a deleted file is forgotten; a folder that does not
  exist yet is looked for again at every poll.
* **Partial lines.** A line still being written is read when complete; a last line that
  never gets its newline is taken once the file has been quiet for ``final_after`` seconds.
* **Never a workspace's files**: a watched path inside an evlog workspace (this one or
  another) is refused (``RefusedInput``, ``evlog watch`` exits 2); under a watched folder, the
  own workspace and the folders evlog writes in any other (``log``, ``sessions``, ``state``,
  ``memory``, ``diary``) are skipped (their files are projections, not transcripts).
  Files are opened through ``eventlog.ingest.source.open_source``: a FIFO is reported, never
  waited on.
* **Paused or excluded** (``evlog capture``, ``eventlog.app.capture``): while capture is paused
  nothing is read, an excluded file is skipped (each said once on stderr); both are read once
  capture resumes or the path is included again.
* **Failures** (a malformed file, a locked workspace) are reported once per file version
  (``on_result``) and retried when the file changes again or at the next poll.

Default paths (``default_paths``): Claude Code's ``~/.claude/projects`` (or
``$CLAUDE_CONFIG_DIR/projects``), Codex's ``~/.codex/sessions`` (or ``$CODEX_HOME/sessions``)
and nanobot's ``~/.nanobot/workspace/sessions`` and ``~/.nanobot/sessions``, those that
exist. The workspace's ``evlog.json`` may say otherwise::

    "watch": {"paths": ["~/.claude/projects"], "debounce": 2.0, "interval": 1.0}

``run_once(ws)`` is one poll without debounce: the daemon's ``watch`` job (off unless
``schedule.watch`` in evlog.json is above 0, e.g. 60).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from eventlog.app.workspace import STATE_DIR, load_config
from eventlog.errors import EvlogError, LockedError
from eventlog.ingest import TRANSCRIPT_SUFFIX
from eventlog.ingest.incremental import SourceResult, ingest_file
from eventlog.ingest.source import is_workspace_folder, refuse_workspace_files

DEFAULT_DEBOUNCE = 2.0
DEFAULT_INTERVAL = 1.0
DEFAULT_FINAL_AFTER = 60.0


@dataclass
class WatchSettings:
    """What to watch and how often (``watch`` in evlog.json, else the defaults)."""

    paths: list[str] = field(default_factory=list)
    debounce: float = DEFAULT_DEBOUNCE
    interval: float = DEFAULT_INTERVAL


def default_paths() -> list[str]:
    """The usual transcript folders of Claude Code, Codex and nanobot that exist here."""
    home = os.path.expanduser("~")
    claude = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    codex = os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    candidates = [os.path.join(claude, "projects"), os.path.join(codex, "sessions"),
                  os.path.join(home, ".nanobot", "workspace", "sessions"), os.path.join(home, ".nanobot", "sessions")]
    return [p for p in candidates if os.path.isdir(p)]


def watch_settings(home: str) -> WatchSettings:
    """The ``watch`` settings of the workspace's evlog.json (``Config.watch``); defaults if it cannot be read."""
    try:
        w = load_config(home).watch
    except EvlogError:
        return WatchSettings()
    return WatchSettings(paths=[os.path.expanduser(p) for p in w.paths if p], debounce=w.debounce, interval=w.interval)


def _is_transcript(name: str) -> bool:
    return name.lower().endswith(TRANSCRIPT_SUFFIX) and not name.startswith(".")


class Watcher:
    """Polls ``paths`` and ingests grown files into a workspace (see the module docstring)."""

    def __init__(self, home: str, paths: list[str], *, debounce: float = DEFAULT_DEBOUNCE, fmt: str = "auto",
                 final_after: float = DEFAULT_FINAL_AFTER, max_bytes: int | None = None,
                 clock: Callable[[], float] = time.time,
                 on_result: Callable[[SourceResult], None] | None = None) -> None:
        self.home = home
        self.paths = [os.path.abspath(os.path.expanduser(p)) for p in paths]
        for p in self.paths:
            refuse_workspace_files(p)
        self.debounce = debounce
        self.fmt = fmt
        self.final_after = final_after
        self.max_bytes = max_bytes
        self.clock = clock
        self.on_result = on_result
        self.state_dir = os.path.join(home, STATE_DIR)
        self._own = os.path.realpath(home)
        self.done: dict[str, tuple[int, int, int, int]] = {}  # path -> file signature when last ingested
        self.failed: dict[str, tuple[int, int, int, int]] = {}  # path -> signature whose ingest was reported failing
        self._said: set[str] = set()  # capture notes already given (paused, excluded)

    def scan(self) -> dict[str, os.stat_result]:
        """Every transcript file under the paths now, with its ``stat``."""
        found: dict[str, os.stat_result] = {}
        for root in self.paths:
            try:
                st = os.stat(root)
            except OSError:
                continue  # not there (yet)
            if not os.path.isdir(root):
                found[root] = st
                continue
            for dirpath, dirs, names in os.walk(root):
                if os.path.realpath(dirpath) == self._own or is_workspace_folder(dirpath):
                    dirs[:] = []  # a workspace's session files are not transcripts to ingest
                    continue
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    if _is_transcript(name):
                        path = os.path.join(dirpath, name)
                        try:
                            found[path] = os.stat(path)
                        except OSError:
                            continue  # gone between listing and stat
        return found

    def due(self, found: dict[str, os.stat_result], *, debounce: float | None = None
            ) -> list[tuple[str, bool, tuple[int, int, int, int]]]:
        """(path, final, signature) of the files to ingest now: changed since last time, quiet for ``debounce`` s."""
        quiet = self.debounce if debounce is None else debounce
        now = self.clock()
        for gone in set(self.done) - set(found):
            del self.done[gone]
        for gone in set(self.failed) - set(found):
            del self.failed[gone]
        out = []
        for path, st in found.items():
            sig = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
            if self.done.get(path) == sig or self.failed.get(path) == sig:
                continue
            age = now - st.st_mtime
            if age < quiet:
                continue
            out.append((path, age >= self.final_after, sig))
        return out

    def step(self, log: Any, *, debounce: float | None = None) -> list[SourceResult]:
        """One poll: ingest every due file into ``log`` (a writable Log, or a callable returning one)."""
        results: list[SourceResult] = []
        for path, final, sig in self._allowed(self.due(self.scan(), debounce=debounce)):
            try:
                r = ingest_file(log, path, state_dir=self.state_dir, fmt=self.fmt, final=final,
                                max_bytes=self.max_bytes)
            except LockedError:
                continue  # a hook is reading it right now: next poll
            except EvlogError as e:
                r = SourceResult(path=path)
                r.file.error = str(e)
            # the signature seen before reading: if the file grew meanwhile, the next poll reads the rest
            if r.error:
                self.failed[path] = sig
            elif (r.pending_bytes == 0 or final) and not r.capped:
                self.done[path] = sig
            results.append(r)
            if self.on_result is not None:
                self.on_result(r)
        return results

    def _allowed(self, due: list[tuple[str, bool, tuple[int, int, int, int]]]
                 ) -> list[tuple[str, bool, tuple[int, int, int, int]]]:
        """The due files capture may read (``eventlog.app.capture``): none while paused, no excluded ones.

        An excluded or paused file is not marked done: after ``evlog capture resume`` / ``include``
        the next poll reads it (ingest is incremental, so nothing is lost or doubled).
        """
        from eventlog.app.capture import load_state, matching_rule

        if not due:
            return due
        try:
            state = load_state(self.home)
        except EvlogError as e:
            self._note(f"watch: {e}; nothing captured")
            return []
        if state.paused():
            self._note(f"watch: capture is paused {state.pause_text()}; nothing captured")
            return []
        allowed = []
        for item in due:
            rule = matching_rule(state, item[0])
            if rule:
                self._note(f"watch: {item[0]} is excluded from capture ({rule}); skipped")
            else:
                allowed.append(item)
        return allowed

    def _note(self, message: str) -> None:
        """Say ``message`` on stderr once (until it changes)."""
        if message not in self._said:
            self._said.add(message)
            print(message, file=sys.stderr)

    def run(self, ws: Any, stop: threading.Event, *, interval: float = DEFAULT_INTERVAL) -> None:
        """Poll until ``stop`` is set; after a poll that appended, write the workspace's projection files."""
        while not stop.is_set():
            results = self.step(ws.log)
            if any(r.file.events for r in results):
                ws.flush()
            stop.wait(interval)


_WATCHERS: dict[str, Watcher] = {}


def run_once(ws: Any, paths: list[str] | None = None) -> list[SourceResult]:
    """One poll of the configured (or default) paths into ``ws``, without debounce: the daemon's job."""
    settings = watch_settings(ws.home)
    wanted = paths or settings.paths or default_paths()
    w = _WATCHERS.get(ws.home)
    if w is None or w.paths != [os.path.abspath(os.path.expanduser(p)) for p in wanted]:
        w = _WATCHERS[ws.home] = Watcher(ws.home, wanted, debounce=0.0)
    results = w.step(ws.log, debounce=0.0)
    if any(r.file.events for r in results):
        ws.flush()
    return results
