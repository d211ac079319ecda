"""The processor registry: every background job declared once, built-in or third-party.

A ``Job`` says everything the rest of evlog needs to know about a job: its ``name``, its
``kind`` (``follower``: consumes events from a validated offset and writes its outputs
with the offset in one append; ``state``: looks at the projections' state and appends
what it decides; ``external``: supplied by the caller of the daemon, e.g. ``watch``, which
lives above the processors), whether it ``needs_model``, its default daemon ``interval``
(seconds; 0 = off unless the schedule turns it on), the event types it ``consumes`` (a
follower's lag in ``evlog offsets``), its ``run`` function and the class of its report.

Everything that used to spell the names again is derived from here: ``evlog run``'s
choices (``eventlog.cli.processor_commands.JobChoice``), the daemon's jobs and their order
(``daemon_jobs``), the default schedule (``default_schedule``; a workspace's evlog.json
starts from the built-ins'), which jobs get a model (``model_jobs``) and the input types
``evlog offsets`` counts (``log_inputs``, formerly ``processors.LOG_INPUTS``).

**Registering a processor** (built-ins do exactly this, in ``processors/builtins.py``)::

    from processors.registry import Job, register
    register(Job(name="todo", kind="follower", run=run_todo, interval=300.0, consumes=frozenset({"message.appended"})))

A package makes its module load with evlog through the ``evlog.processors`` entry point
group (``[project.entry-points."evlog.processors"] todo = "my_pkg.todo"``); importing the
module runs its ``register`` line. The run function takes a ``processors.context.Context``
and ``RunOptions`` and returns a report: any object with ``processor``, ``failed`` and
``summary()`` (``Report``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from eventlog.errors import ConfigError

if TYPE_CHECKING:
    from processors.context import Context
    from processors.llm import LLM

Kind = Literal["follower", "state", "external"]
KINDS: tuple[Kind, ...] = ("follower", "state", "external")
ENTRY_POINT_GROUP = "evlog.processors"


@runtime_checkable
class Report(Protocol):
    """What a job's run returns: ``evlog run --json`` prints it, the daemon logs ``summary()``."""

    processor: str

    @property
    def failed(self) -> bool: ...

    def summary(self) -> str: ...


@dataclass(frozen=True)
class RunOptions:
    """The options of one run: the model (for a job that ``needs_model``), consolidate's session, Dream's retry,
    and ``max_calls``: Dream stops after that many calls (the daemon's slice; None: until nothing is pending)."""

    llm: LLM | None = None
    key: str | None = None
    retry_failed: bool = False
    max_calls: int | None = None


RunFunction = Callable[["Context", RunOptions], Report]


@dataclass(frozen=True)
class Job:
    """One job, declared once (see the module docstring)."""

    name: str
    kind: Kind
    run: RunFunction | None  # None only for an ``external`` job (the daemon's caller supplies it)
    interval: float = 0.0
    needs_model: bool = False
    consumes: frozenset[str] | None = None
    help: str = ""
    daemon: bool = True  # the daemon schedules it (consolidate runs inside autocompact instead)
    order: int = 100  # the daemon's order within one round (lower first; then registration order)

    def __post_init__(self) -> None:
        if not self.name or not all(c.isalnum() or c in "-_" for c in self.name):
            raise ConfigError(f"a job's name is letters, digits, '-' and '_' (got {self.name!r})")
        if self.kind not in KINDS:
            raise ConfigError(f"job {self.name!r}: kind must be one of {', '.join(KINDS)} (got {self.kind!r})")
        if (self.run is None) != (self.kind == "external"):
            raise ConfigError(f"job {self.name!r}: an external job has no run function, every other job has one")
        if not 0 <= self.interval < 1e9:
            raise ConfigError(f"job {self.name!r}: interval must be seconds >= 0 (got {self.interval})")


_JOBS: dict[str, Job] = {}
_BUILTIN_NAMES: set[str] = set()  # what processors.builtins registered (the default schedule of a workspace)
_builtins = 0  # 0: not loaded, 1: loading, 2: loaded
_plugins_loaded = False


def register(job: Job, *, replace: bool = False) -> Job:
    """Add ``job`` to the registry (``replace`` to swap a job of the same name, e.g. in a test); returns it."""
    load_builtins()
    if job.name in _JOBS and not replace:
        raise ConfigError(f"a job named {job.name!r} is already registered")
    _JOBS[job.name] = job
    return job


def unregister(name: str) -> None:
    """Remove a job (what a test that registered one does when it ends)."""
    _JOBS.pop(name, None)


def _load() -> None:
    """Register the built-ins, then every module of the ``evlog.processors`` entry point group (once)."""
    global _plugins_loaded
    load_builtins()
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for module in _plugin_modules():
        _import_plugin(module)


def _plugin_modules() -> list[str]:
    from importlib.metadata import entry_points

    return sorted({ep.value.split(":")[0] for ep in entry_points(group=ENTRY_POINT_GROUP)})


def _import_plugin(module: str) -> None:
    from importlib import import_module

    try:
        import_module(module)
    except Exception as e:  # a broken plugin must not take the built-ins down with it
        raise ConfigError(f"the processor plugin {module!r} (entry point group {ENTRY_POINT_GROUP}) failed "
                          f"to load: {e.__class__.__name__}: {e}") from e


def load_builtins() -> None:
    """Register the built-in jobs only (cheap: what opening a workspace needs for its default schedule)."""
    global _builtins
    if _builtins:
        return  # loaded, or loading now (their own ``register`` calls come through here)
    _builtins = 1
    import processors.builtins  # noqa: F401 - its register lines run on import

    _BUILTIN_NAMES.update(_JOBS)
    _builtins = 2


def jobs() -> list[Job]:
    """Every registered job, built-ins first in their order, then the others in registration order."""
    _load()
    return list(_JOBS.values())


def names(kinds: Iterable[Kind] = KINDS) -> list[str]:
    """The names of the registered jobs of these kinds."""
    wanted = set(kinds)
    return [j.name for j in jobs() if j.kind in wanted]


def daemon_jobs() -> list[str]:
    """The jobs the daemon schedules, in the order it runs them within a round."""
    every = jobs()
    return [j.name for j in sorted((j for j in every if j.daemon), key=lambda j: (j.order, every.index(j)))]


def get(name: str) -> Job:
    """The job called ``name`` (ConfigError naming the known ones otherwise)."""
    _load()
    try:
        return _JOBS[name]
    except KeyError:
        raise ConfigError(f"unknown processor {name!r}; choose one of {', '.join(_JOBS)}") from None


def default_schedule(*, plugins: bool = True) -> dict[str, float]:
    """Each job's default interval in seconds (what ``schedule`` in evlog.json starts from)."""
    if plugins:
        _load()
    else:
        load_builtins()
    return {j.name: j.interval for j in _JOBS.values() if j.daemon and (plugins or j.name in _BUILTIN_NAMES)}


def model_jobs() -> tuple[str, ...]:
    """The jobs that call a language model."""
    return tuple(j.name for j in jobs() if j.needs_model)


def log_inputs() -> dict[str, frozenset[str]]:
    """The event types each follower that says so consumes (``evlog offsets`` counts its pending inputs)."""
    return {j.name: j.consumes for j in jobs() if j.consumes is not None}

