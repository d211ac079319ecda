"""``evlog --help`` without importing click: the root help as click last printed it, while nothing it depends on changed.

The root help (``evlog --help`` or ``evlog -h``, nothing else on the line) is click's rendering
of ``eventlog.cli.cli``; importing click is most of that command's time. ``eventlog.entry``
asks ``lookup`` first. On a miss the normal CLI prints the help, and ``store`` keeps exactly
that text (``render``: the help option's own ``ctx.get_help()`` plus click's newline) in
``<home>/state/help/root-help-<width>.txt``, in the default workspace (``$EVLOG_HOME``, else
``~/.evlog``) and only once that workspace exists (its ``state`` folder): evlog writes nothing
outside a workspace (I22), and ``--help`` never creates one.

**What the text depends on, and how a change is seen** (``help_key``): the width click would
format for (``help_width``: ``$COLUMNS``, else the terminal, else 80, as ``shutil`` and click
compute it), the gettext variables that choose a translation of click's words
(``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``), the Python version, and ``os.stat``
(inode, size, mtime, ctime) of ``eventlog/cli/__init__.py`` (the root group's options and
its table of commands) and of every source file of the click package the import system
would load now. The key is taken before click is imported; a file changed within
``RACY_SECONDS`` of that moment keeps the text out of the cache (git's racy-index rule).

It is a cache: any doubt is a miss (no file, another key, a torn file, text that is not
ASCII, so that no stream encoding can make click's output differ), every write replaces
the file atomically, and a cache folder that cannot be written just means no cache.
"""

from __future__ import annotations

import os
import sys
import time

from eventlog.cachefile import write_cache

FORMAT = 1
RACY_SECONDS = 2.0
HELP_ARGS = (["--help"], ["-h"])  # the root group's help_option_names, alone on the command line
LOCALE_VARS = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
_CLI_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cli", "__init__.py")


def is_root_help(argv: list[str]) -> bool:
    """Whether the command line asks for the root help and nothing else."""
    return argv in HELP_ARGS


def help_width(environ: dict[str, str] | os._Environ[str] = os.environ) -> int:
    """The width click's ``HelpFormatter`` formats for: ``shutil.get_terminal_size()``'s columns, at most 80, less 2."""
    try:
        columns = int(environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    try:
        lines = int(environ["LINES"])
    except (KeyError, ValueError):
        lines = 0
    if columns <= 0 or lines <= 0:
        try:
            size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            size = os.terminal_size((80, 24))
        if columns <= 0:
            columns = size.columns or 80
    return max(min(columns, 80) - 2, 50)


def cache_file(width: int, environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """Where the root help for ``width`` columns is kept: the default workspace's ``state/help``."""
    home = environ.get("EVLOG_HOME") or os.path.join(os.path.expanduser("~"), ".evlog")
    return os.path.join(home, "state", "help", f"root-help-{width}.txt")


class Slot:
    """Where and under which key the root help of this process's conditions is kept (see ``help_key``)."""

    __slots__ = ("key", "path", "stats")

    def __init__(self, key: str, path: str, stats: list[list[int]]) -> None:
        self.key, self.path, self.stats = key, path, stats


def help_key(width: int, environ: dict[str, str] | os._Environ[str] = os.environ) -> tuple[str, list[list[int]]]:
    """The key of the root help at ``width`` (see the module docstring), and the stats of the files it names."""
    stats = [_stat(p) for p in [_CLI_SOURCE, *_click_sources()]]
    key = repr((FORMAT, sys.version, width, [environ.get(v) for v in LOCALE_VARS], stats))
    return key, [s[1:] for s in stats if len(s) > 1]


def lookup() -> tuple[str | None, Slot]:
    """The cached root help (None: a miss) and its slot: what ``eventlog.entry`` prints without click."""
    width = help_width()
    slot = _slot(width)
    try:
        with open(slot.path, encoding="ascii") as f:
            stored_key, newline, text = f.read().partition("\n")
    except (OSError, ValueError):
        return None, slot
    return (text if newline and stored_key == slot.key and text.endswith("\n") else None), slot


def _slot(width: int) -> Slot:
    key, stats = help_key(width)
    return Slot(key, cache_file(width), stats)


def render() -> str:
    """The root help exactly as click's help option prints it (``echo(ctx.get_help())``), from the CLI itself."""
    from eventlog.cli import cli

    ctx = cli.context_class(cli, info_name="evlog", **cli.context_settings)
    return cli.get_help(ctx) + "\n"


def store(slot: Slot, text: str) -> bool:
    """Keep ``text`` in ``slot`` (its key taken before click was imported); False when not kept."""
    now = time.time_ns()
    if not text.isascii() or any(now - max(st[2], st[3]) < RACY_SECONDS * 1e9 for st in slot.stats):
        return False
    if not os.path.isdir(os.path.dirname(os.path.dirname(slot.path))):
        return False  # no workspace yet (its state folder): no cache, and --help makes none
    try:
        os.makedirs(os.path.dirname(slot.path), mode=0o700, exist_ok=True)
    except OSError:
        return False
    return write_cache(slot.path, slot.key + "\n" + text, encoding="ascii")


def _stat(path: str) -> list:
    try:
        st = os.stat(path)
    except OSError:
        return [path]
    return [path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _click_sources() -> list[str]:
    """The source files of the click package the import system would load now ([] if none is found)."""
    spec = None
    for finder in sys.meta_path:  # as importlib finds a top-level module
        find = getattr(finder, "find_spec", None)
        spec = find("click", None) if find is not None else None
        if spec is not None:
            break
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    if not places:
        return ["click"]
    try:
        names = sorted(n for n in os.listdir(places[0]) if n.endswith(".py"))
    except OSError:
        return ["click"]
    return [os.path.join(places[0], n) for n in names]
