"""Where incremental ingest keeps each transcript's read state, and the quick question asked of it first.

``eventlog.ingest.incremental`` keeps one state file per source, ``<state_dir>/sources/<xxh3 of
its real path>.json`` (its ``SourceState``, JSON: the byte position read up to, the file's size,
mtime, inode and device when it was read, fingerprints, what later lines need). Before reading
anything, a caller asks ``needs_ingest``: one ``stat`` and the few fields of that file that say
whether the source may hold lines not read yet. This module answers with ``os``, ``json`` and
``xxhash`` alone, so a capture hook whose transcript did not grow since the last read (a
``SessionEnd`` or ``PreCompact`` after the ``Stop`` that read everything, a hook that fires twice)
returns without importing the ingest code, msgspec or the log.

Only the fields the answer needs are read (absent ones have ``SourceState``'s defaults, which
its encoder omits); a state that is not a JSON object, of another version or path, or whose
fields have the wrong types counts as none (read the source). Ingest itself decodes the whole
state and reads the file again from its start when it cannot.
"""

from __future__ import annotations

import json
import os

import xxhash

SOURCES_DIR = "sources"
STATE_VERSION = 1


def source_key(path: str) -> str:
    """The name of a source's state: the xxh3-64 of its real path."""
    return xxhash.xxh3_64_hexdigest(os.path.realpath(path).encode("utf-8", "surrogatepass"))


def state_path(state_dir: str, path: str) -> str:
    """Where the state of source ``path`` is kept."""
    return os.path.join(state_dir, SOURCES_DIR, source_key(path) + ".json")


def needs_ingest(state_dir: str, path: str, *, final: bool = False) -> bool:
    """Whether ``path`` may hold something not read yet (cheap: one ``stat`` and the state file).

    True when the file's size, mtime or inode differ from the last read, or there is no state,
    or the last read stopped at its ``max_bytes`` with lines left; with ``final``, also when an
    unterminated last line was left for later.
    """
    try:
        s = os.stat(path)
    except OSError:
        return False
    marks = _read_marks(state_dir, path)
    if marks is None:
        return True
    seen, position, capped, error = marks
    if (s.st_size, s.st_mtime_ns, s.st_ino, s.st_dev) != seen:
        return True
    if capped and position < s.st_size and not error:
        return True
    return final and position < s.st_size and not error


#: The state's fields ``needs_ingest`` reads, with their defaults (the encoder omits a field at its default).
_MARKS: dict[str, int | bool | str] = {"version": STATE_VERSION, "path": "", "size": 0, "mtime_ns": 0, "ino": 0,
                                       "dev": 0, "position": 0, "capped": False, "error": ""}


def _read_marks(state_dir: str, path: str) -> tuple[tuple[int, int, int, int], int, bool, str] | None:
    """((size, mtime_ns, ino, dev) when last read, position, capped, error) of ``path``'s state, or None.

    None: no state, not readable, not a JSON object, another version or path, or a field of the
    wrong type (one ``SourceState``'s decoder would refuse: a bool is not an int there either).
    """
    try:
        with open(state_path(state_dir, path), "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    m = {name: data.get(name, default) for name, default in _MARKS.items()}
    if any(type(m[name]) is not type(default) for name, default in _MARKS.items()):
        return None
    if m["version"] != STATE_VERSION or m["path"] != os.path.realpath(path):
        return None
    size, mtime_ns, ino, dev, position = (int(m[k]) for k in ("size", "mtime_ns", "ino", "dev", "position"))
    return (size, mtime_ns, ino, dev), position, bool(m["capped"]), str(m["error"])
