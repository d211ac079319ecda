"""Best-effort atomic writes of cache files (the SessionStart cache, the root help): a cache that cannot be
written is no cache, never an error.

``write_cache(path, text)`` writes a temporary file beside ``path`` (named by process and thread, so the
daemon's hook threads and several processes never share one) and renames it over ``path``; any OSError
removes the temporary file and answers False. Standard library only: the hook path imports it.
"""

from __future__ import annotations

import os


def write_cache(path: str, text: str, *, encoding: str = "utf-8") -> bool:
    """Replace ``path`` with ``text`` atomically; False (and nothing left behind) when it cannot be written."""
    import threading  # only here: a hook that never stores does not load it

    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(tmp, "w", encoding=encoding) as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
