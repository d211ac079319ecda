"""What git says about a file in a work tree: was its current content put there by git?

``put_there_by_git(path, text)`` is the test the memory projection asks before it learns a
hand edit of a registered project's ``memory/MEMORY.md``: True when the file is tracked, its
content is exactly the file at ``HEAD``, and HEAD got where it is by git moving it (the last
entry of HEAD's reflog is a checkout, switch, reset, pull, merge, rebase, cherry-pick...), not
by a commit made in this work tree (``commit:``, ``commit (initial):``, ``commit (amend):``,
which record what the user wrote). Without a reflog, matching HEAD is enough.

git runs without a shell, with a timeout, stdin closed, every ``GIT_*`` variable of the
environment removed (``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_INDEX_FILE`` could point it at
another repository) and fsmonitor off; any failure (git missing, not a repository, not
tracked, a repository git refuses to read) answers False: the change is then the user's.
"""

from __future__ import annotations

import os
import subprocess

GIT_TIMEOUT = 5.0
_USER_COMMITS = ("commit:", "commit (initial):", "commit (amend):")


def _git(cwd: str, *args: str) -> bytes | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    try:
        r = subprocess.run(["git", "-c", "core.fsmonitor=false", "-C", cwd, *args], capture_output=True,
                           stdin=subprocess.DEVNULL, env=env, timeout=GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def put_there_by_git(path: str, text: str) -> bool:
    """True when ``text`` (the file's content now) is git's doing, not an edit (see the module docstring)."""
    directory, name = os.path.split(os.path.abspath(path))
    if not os.path.isdir(directory):
        return False
    at_head = _git(directory, "show", f"HEAD:./{name}")
    if at_head is None or at_head.decode("utf-8", "replace") != text:
        return False
    last = _git(directory, "reflog", "-1", "--format=%gs", "HEAD")
    if last is None or not last.strip():
        return True  # no reflog: the file is as git has it
    return not last.decode("utf-8", "replace").startswith(_USER_COMMITS)
