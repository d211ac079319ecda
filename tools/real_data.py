"""Where the real third-party transcripts are: ``../shared/data/real``, read in place, never copied.

``find()`` answers, in this order: ``$EVLOG_REAL_DATA`` if set; the first
``shared/data/real`` next to the repository or above it; for a clone made elsewhere (CI
clones main into a scratch directory), the same next to or above the repository it was
cloned from, when its ``origin`` is a local directory. ``None`` when there is none.
The tests (tests/conftest.py), the benchmarks and the evaluations all ask here.

Run as a script, it prints the folder (or "(not found)") for .ci/run's log.
"""

from __future__ import annotations

import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = ("shared", "data", "real")


def _above(start: str) -> str | None:
    here = start
    for _ in range(5):
        candidate = os.path.join(os.path.dirname(here), *PARTS)
        if os.path.isdir(candidate):
            return candidate
        here = os.path.dirname(here)
    return None


def _origin() -> str | None:
    try:
        url = subprocess.run(["git", "-C", REPO, "config", "--get", "remote.origin.url"], capture_output=True,
                             text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    url = url.removeprefix("file://")
    return os.path.abspath(url) if url and os.path.isdir(url) else None


def find() -> str | None:
    """The real-data folder (see the module docstring), or None."""
    if os.environ.get("EVLOG_REAL_DATA"):
        return os.environ["EVLOG_REAL_DATA"]
    found = _above(REPO)
    if found is None:
        origin = _origin()
        found = _above(origin) if origin else None
    return found


if __name__ == "__main__":
    print(find() or "(not found)")
