"""evlog's public library API: what agent harnesses, tools and the README's examples import.

    import eventlog
    eventlog.init_workspace("/tmp/ws")
    with eventlog.open_workspace("/tmp/ws", writable=True) as ws:
        ws.append([eventlog.events.MessageAppended(session_key="k", message_id="1", role="user", content="hi")])

Names are resolved lazily (``__getattr__``), so ``import eventlog`` stays cheap and the
log core below it never imports the layers above (projections, processors, the app).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from eventlog._version import __version__

__all__ = [
    "Workspace",
    "__version__",
    "errors",
    "events",
    "init_workspace",
    "open_workspace",
]

_LAZY = {
    "Workspace": ("eventlog.app.workspace", "Workspace"),
    "init_workspace": ("eventlog.app.workspace", "init_workspace"),
    "errors": ("eventlog.errors", None),
    "events": ("eventlog.events", None),
}


def open_workspace(home: str | None = None, *, writable: bool = False, **options: Any) -> Any:
    """Open the workspace at ``home`` (default ``$EVLOG_HOME``, else ``~/.evlog``); see ``Workspace.open``."""
    from eventlog.app.workspace import Workspace

    return Workspace.open(home, writable=writable, **options)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'eventlog' has no attribute {name!r}") from None
    mod = import_module(module)
    return mod if attr is None else getattr(mod, attr)
