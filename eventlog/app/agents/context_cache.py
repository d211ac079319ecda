"""The SessionStart output of recent project scopes, kept so a hook without the daemon skips rendering it.

A ``SessionStart`` hook prints the memory block of its ``cwd`` (``context.memory_context``,
then ``hooks.hook_output``). Rendering it is cheap; importing what renders it (the secrets
scanner, SQLite, the recall text codec) is most of a hook process's time. This module keeps
the printed output in ``state/context-cache.json`` and gives it back when nothing it was
made from has changed. It is a projection of projections: never the truth, deleted at will,
and a hit prints exactly what rendering would print (tests compare both on random workspaces).

**What an entry depends on, and how a change is seen.** The key is the budget and the
project scope (``context.project_scope``: its label and member files), which the hook
computes afresh every time (git layout, known projects), so only rendering is skipped.
An entry records its inputs, each with ``os.stat``'s inode, size, mtime and ctime (or
absence), taken *before* rendering read them: the member MEMORY.md files, the global one,
the recall index (and its WAL), which gives each fact its id and day, and the source files
of the code that renders (with the Python version). Any difference is a miss. A file changed
within ``RACY_SECONDS`` of the moment it was looked at could change again without its
stat changing (the clock's tick), so such an entry is not stored (git's racy-index rule).
The index's WAL is compared without its ctime (``WAL_SUFFIX``).

**Torn, stale, foreign.** A cache that does not parse, or an entry of another shape, is a
miss; every write replaces the file atomically and drops the entries that no longer match
their inputs (so an erased fact's text leaves the file at the next store; ``evlog erase``
deletes the file: ``drop``). At most ``MAX_ENTRIES`` are kept (the newest). A workspace the
hook cannot write to just keeps no cache.
"""

from __future__ import annotations

import json
import os
import sys
import time

from eventlog.cachefile import write_cache

TYPE_CHECKING = False  # typing's, without importing typing (a context hook's path)
if TYPE_CHECKING:
    from typing import Any

    Signature = list[Any]  # [[path, [ino, size, mtime_ns, ctime_ns] or None], ...]

CACHE_FILE = os.path.join("state", "context-cache.json")
FORMAT = 1
MAX_ENTRIES = 16
RACY_SECONDS = 2.0
#: A SQLite write-ahead log (the recall index's) is compared without its ctime: a read-only open of the
#: index, which rendering does, touches the ctime of a WAL left beside it without changing a byte (so the
#: entry would never match again), and only SQLite writes the file, so a write moves its mtime.
WAL_SUFFIX = "-wal"
#: The modules whose code decides the output (their source files are inputs of every entry).
CODE_MODULES = ("eventlog.app.agents.context", "eventlog.app.agents.context_cache", "eventlog.app.agents.hooks",
                "eventlog.secrets", "projections.memory_files", "projections.recall.text",
                "projections.recall.files")


def cache_path(home: str) -> str:
    """Where the workspace at ``home`` keeps the cache."""
    return os.path.join(home, CACHE_FILE)


def entry_key(label: str, members: list[tuple[str, str]], budget: int) -> str:
    """The key of a scope's output at a budget."""
    return json.dumps([budget, label, members], ensure_ascii=False)


def lookup(home: str, key: str) -> str | None:
    """The cached output for ``key`` when every input of its entry is as it was; None: render it."""
    entry = _entries(home).get(key)
    if not isinstance(entry, dict) or not _usable(entry) or not _still(entry["inputs"]):
        return None
    return str(entry["stdout"])


def signature(paths: list[str]) -> Signature:
    """Each path with its stat (None when absent): what ``store`` records, taken before rendering."""
    return [[p, _stat(p)] for p in paths]


def store(home: str, key: str, inputs: Signature, stdout: str) -> bool:
    """Keep ``stdout`` for ``key`` (inputs as ``signature`` saw them before rendering); False when not kept."""
    now = time.time_ns()
    if any(st is not None and now - max(st[2], st[3]) < RACY_SECONDS * 1e9 for _p, st in inputs):
        return False  # changed a moment ago: a change in the same clock tick would not show
    inputs = inputs + signature(_code_files())
    entries = {k: e for k, e in _entries(home).items() if k != key and _usable(e) and _still(e["inputs"])}
    entries[key] = {"inputs": inputs, "stdout": stdout}
    kept = dict(list(entries.items())[-MAX_ENTRIES:])
    return write_cache(cache_path(home), json.dumps({"format": FORMAT, "python": sys.version, "entries": kept},
                                               ensure_ascii=False))


def drop(home: str) -> bool:
    """Delete the cache (``evlog erase``: it may hold the text of an erased fact); True if there was one."""
    try:
        os.unlink(cache_path(home))
    except FileNotFoundError:
        return False
    return True


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    ctime = 0 if path.endswith(WAL_SUFFIX) else st.st_ctime_ns  # see WAL_SUFFIX
    return [st.st_ino, st.st_size, st.st_mtime_ns, ctime]


def _still(inputs: Signature) -> bool:
    return all(_stat(path) == st for path, st in inputs)


def _usable(entry: object) -> bool:
    if not isinstance(entry, dict) or not isinstance(entry.get("stdout"), str):
        return False
    inputs = entry.get("inputs")
    return isinstance(inputs, list) and bool(inputs) and all(
        isinstance(i, list) and len(i) == 2 and isinstance(i[0], str) for i in inputs)


def _entries(home: str) -> dict[str, Any]:
    try:
        with open(cache_path(home), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}  # none yet, torn or not JSON: a miss
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("python") != sys.version:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def _code_files() -> list[str]:
    """The source files of ``CODE_MODULES``, found without importing them (rendering may not have needed them all)."""
    from importlib.util import find_spec

    files = []
    for name in CODE_MODULES:
        spec = find_spec(name)
        files.append(spec.origin if spec is not None and spec.origin else name)
    return sorted(files)
