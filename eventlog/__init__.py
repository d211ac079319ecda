"""evlog's public library API, the one import agent harnesses, tools and the README's examples need.

    import eventlog

    eventlog.init_workspace("my-workspace")
    with eventlog.open_session_store("my-workspace") as store:            # what an agent loop embeds
        store.add_message("cli:me", "user", "I prefer pytest over unittest.")
    with eventlog.open_workspace("my-workspace", writable=True) as ws:
        eventlog.remember(ws, "We deploy on Fridays.")                # a note for Dream
        eventlog.run(ws, "dream", llm=eventlog.make_llm("offline"))   # any registered processor
        eventlog.memory.facts(ws)                                     # facts, forget, edit, pin...
        eventlog.recall.search(ws, "pytest")                          # ranked search with sources

Names: ``Workspace``, ``init_workspace``, ``open_workspace``; ``SessionStore`` (the
interface), ``LocalSessionStore``, ``open_session_store``; ``run`` (``processors.run``),
``make_llm``, ``remember``, ``register_processor`` and ``Job`` (``processors.registry``);
the modules ``memory`` (``eventlog.app.memory``), ``recall`` (``eventlog.app.recall``),
``events`` and ``errors``. They are resolved lazily (``__getattr__``), so ``import
eventlog`` stays cheap and the log core below it never imports the layers above
(projections, processors, the app); type checkers see the real definitions.
"""

from __future__ import annotations

from importlib import import_module

from eventlog._version import __version__

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: every evlog process starts here
if TYPE_CHECKING:
    from typing import Any

    from eventlog import errors, events
    from eventlog.app import memory, recall
    from eventlog.app.session_store import LocalSessionStore, SessionStore
    from eventlog.app.workspace import Workspace, init_workspace
    from processors import run
    from processors.dream import remember
    from processors.llm import make_llm
    from processors.registry import Job
    from processors.registry import register as register_processor

__all__ = [
    "Job",
    "LocalSessionStore",
    "SessionStore",
    "Workspace",
    "__version__",
    "errors",
    "events",
    "init_workspace",
    "make_llm",
    "memory",
    "open_session_store",
    "open_workspace",
    "recall",
    "register_processor",
    "remember",
    "run",
]

_LAZY: dict[str, tuple[str, str | None]] = {
    "Workspace": ("eventlog.app.workspace", "Workspace"),
    "init_workspace": ("eventlog.app.workspace", "init_workspace"),
    "SessionStore": ("eventlog.app.session_store", "SessionStore"),
    "LocalSessionStore": ("eventlog.app.session_store", "LocalSessionStore"),
    "run": ("processors", "run"),
    "make_llm": ("processors.llm", "make_llm"),
    "remember": ("processors.dream", "remember"),
    "Job": ("processors.registry", "Job"),
    "register_processor": ("processors.registry", "register"),
    "memory": ("eventlog.app.memory", None),
    "recall": ("eventlog.app.recall", None),
    "errors": ("eventlog.errors", None),
    "events": ("eventlog.events", None),
}


def open_workspace(home: str | None = None, *, writable: bool = False, **options: Any) -> Workspace:
    """Open the workspace at ``home`` (default ``$EVLOG_HOME``, else ``~/.evlog``); see ``Workspace.open``."""
    from eventlog.app.workspace import Workspace

    return Workspace.open(home, writable=writable, **options)


def open_session_store(home: str | None = None, **options: Any) -> LocalSessionStore:
    """The session store of the workspace at ``home`` (a context manager; see ``LocalSessionStore.open``)."""
    from eventlog.app.session_store import LocalSessionStore

    return LocalSessionStore.open(home, **options)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'eventlog' has no attribute {name!r}") from None
    mod = import_module(module)
    value = mod if attr is None else getattr(mod, attr)
    globals()[name] = value  # resolved once
    return value
