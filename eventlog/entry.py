"""The ``evlog`` console script: a hook skips the CLI (a context hook asks the warm daemon first), the rest is the CLI.

``evlog [--home H] [--lock-timeout S] hook claude-code|codex [--budget N] [--max-bytes N]
[--timeout S]`` with a ``SessionStart`` or ``UserPromptSubmit`` payload on stdin is first
offered to the running daemon (``eventlog.app.agents.hook_socket``) before click or any of
evlog's layers is imported, so the hook pays only Python's start-up. With no daemon the same
handler the daemon would run (``hooks.handle_claude_code`` / ``codex_hooks.handle_codex``) runs
in this process, still without click, the CLI or the workspace and log modules, and prints
exactly what the CLI's ``evlog hook`` prints (stdout, one ``evlog hook: ...`` line per note).
A capture hook (``Stop``, ``PreCompact``, ``SessionEnd``...) never goes to the daemon: its handler
runs in this process, also without click or the CLI (it imports the workspace and log it writes to).
Any other command line, a payload over the size limit, ``$EVLOG_HEADLESS``, an option this parser does not
know or a value the CLI would refuse: the payload already read is handed to the normal CLI
(``eventlog.cli.main``), which behaves exactly as it would have (its own option errors included).

``evlog --help`` / ``evlog -h`` alone prints the root help from ``eventlog.help_cache`` (the bytes
click printed last time, while nothing they depend on changed) without importing click; on a miss
the CLI prints it and the cache keeps it. This module imports only ``os`` and ``sys`` itself.
"""

from __future__ import annotations

import os
import sys

# Imported where used: ``threading`` (a hook's watchdog), ``io``, the hook and help modules, click. This
# module's own imports are the floor every ``evlog`` command pays, so they are the interpreter's alone.

_GLOBAL_OPTIONS = ("--home", "--lock-timeout")
_HOOK_OPTIONS = ("--budget", "--max-bytes", "--timeout")


class HookPlan:
    """A hook command line this module serves (daemon or in-process), with the CLI's defaults filled in."""

    __slots__ = ("home", "harness", "budget", "max_bytes", "timeout", "lock_timeout")

    def __init__(self, home: str, harness: str, budget: int = 8000, max_bytes: int = 8 * 1024 * 1024,
                 timeout: float = 20.0, lock_timeout: float = 5.0) -> None:
        self.home, self.harness, self.budget, self.max_bytes, self.timeout = home, harness, budget, max_bytes, timeout
        self.lock_timeout = lock_timeout  # the CLI's ``--lock-timeout`` (a hook waits at most HOOK_LOCK_WAIT_S)

    def _fields(self) -> tuple[str, str, int, int, float, float]:
        return self.home, self.harness, self.budget, self.max_bytes, self.timeout, self.lock_timeout

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookPlan) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return ("HookPlan(home={!r}, harness={!r}, budget={!r}, max_bytes={!r}, timeout={!r}, "
                "lock_timeout={!r})").format(*self._fields())


def main() -> None:
    """Console-script entry point."""
    argv = sys.argv[1:]
    plan = hook_plan(argv, os.environ)
    if plan is not None:
        _hook(plan)
    elif len(argv) == 1 and _asks_root_help(argv):
        _root_help()
    else:
        from eventlog.cli import main as cli_main

        cli_main()


def _hook(plan: HookPlan) -> None:
    """A hook: the daemon's answer (context hooks only), else this process's handler, else the CLI."""
    import io
    import threading

    watchdog = threading.Timer(plan.timeout, _give_up, args=(plan.timeout,))  # as the CLI's hook has
    watchdog.daemon = True
    watchdog.start()
    raw = sys.stdin.buffer.read(_max_payload() + 1)
    if _served_by_daemon(plan, raw) or _served_in_process(plan, raw):
        return
    watchdog.cancel()  # the CLI starts its own
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    from eventlog.cli import main as cli_main

    cli_main()


def _asks_root_help(argv: list[str]) -> bool:
    """``evlog --help`` / ``evlog -h`` alone: ``eventlog.help_cache`` may print it without click."""
    from eventlog.help_cache import is_root_help

    return is_root_help(argv)


def _root_help() -> None:
    """Print the root help from ``eventlog.help_cache``; on a miss the CLI prints it, and the cache keeps it."""
    from eventlog import help_cache

    text, slot = help_cache.lookup()
    if text is not None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:  # as click's main does: the reader went away, exit 1 without a traceback
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)
        return
    from eventlog.cli import main as cli_main

    try:
        cli_main()
    except SystemExit as e:
        if e.code in (0, None):
            try:
                help_cache.store(slot, help_cache.render())
            except Exception:  # noqa: BLE001, S110 - a cache never fails the command it speeds up
                pass
        raise


def hook_plan(argv: list[str], env: dict[str, str] | os._Environ[str]) -> HookPlan | None:
    """The plan of a hook command line this module may serve, else None (the CLI handles it)."""
    if env.get("EVLOG_HEADLESS"):
        return None
    values: dict[str, str] = {}
    rest = _take_options(argv, _GLOBAL_OPTIONS, values)
    if rest is None or len(rest) < 2 or rest[0] != "hook" or rest[1] not in ("claude-code", "codex"):
        return None
    hook_values: dict[str, str] = {}
    if _take_options(rest[2:], _HOOK_OPTIONS, hook_values) != []:
        return None
    home = values.get("--home") or env.get("EVLOG_HOME") or os.path.join(os.path.expanduser("~"), ".evlog")
    budget = _number(hook_values.get("--budget"), int, 500, 8000)
    max_bytes = _number(hook_values.get("--max-bytes"), int, 1024, 8 * 1024 * 1024)
    timeout = _number(hook_values.get("--timeout"), float, 0.5, 20.0)
    lock_timeout = _lock_timeout(values, env)
    if budget is None or max_bytes is None or timeout is None or lock_timeout is None or not _home_ok(home):
        return None  # the CLI says what is wrong
    return HookPlan(home, rest[1], int(budget), int(max_bytes), float(timeout), lock_timeout)


def _number(text: str | None, kind: type[int] | type[float], least: float, default: float) -> float | None:
    """The option's value (``default`` when absent), or None when the CLI would refuse it."""
    if text is None:
        return default
    try:
        value = kind(text)
    except ValueError:
        return None
    return value if value >= least else None


def _take_options(argv: list[str], names: tuple[str, ...], into: dict[str, str]) -> list[str] | None:
    """``argv`` after its leading ``--name value`` / ``--name=value`` options (None at an unknown option)."""
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        name, eq, value = argv[i].partition("=")
        if name not in names:
            return None
        if not eq:
            if i + 1 >= len(argv):
                return None
            value = argv[i + 1]
            i += 1
        into[name] = value
        i += 1
    return argv[i:]


def _lock_timeout(values: dict[str, str], env: dict[str, str] | os._Environ[str]) -> float | None:
    """The CLI's ``--lock-timeout`` (option, else ``$EVLOG_LOCK_TIMEOUT``, else 5), or None when it would refuse it."""
    lock = values["--lock-timeout"] if "--lock-timeout" in values else env.get("EVLOG_LOCK_TIMEOUT") or None
    return _number(lock, float, float("-inf"), 5.0)


def _home_ok(home: str) -> bool:
    """Whether the CLI would take the home: anything but an existing file."""
    return not (os.path.exists(home) and not os.path.isdir(home))


def _give_up(seconds: float) -> None:
    sys.stderr.write(f"evlog hook: gave up after {seconds:g}s (no hook input, a slow daemon or a busy workspace); "
                     "the next hook catches up\n")
    sys.stderr.flush()
    os._exit(0)


def _max_payload() -> int:
    from eventlog.app.agents.hook_socket import MAX_PAYLOAD_BYTES

    return MAX_PAYLOAD_BYTES


def _served_by_daemon(plan: HookPlan, raw: bytes) -> bool:
    """True when the daemon answered (its output printed); False: run the hook in this process."""
    from eventlog.app.agents import hook_socket

    if len(raw) > hook_socket.MAX_PAYLOAD_BYTES or not hook_socket.context_event(raw):
        return False
    answer = hook_socket.ask_daemon(plan.home, plan.harness, raw, budget=plan.budget, max_bytes=plan.max_bytes,
                                    timeout=min(3.0, plan.timeout / 2))
    if answer is None:
        return False
    _print(*answer)
    return True


def _served_in_process(plan: HookPlan, raw: bytes) -> bool:
    """Run the hook's handler here, as the CLI's ``evlog hook`` would (True: done; False: use the CLI).

    Every event, context and capture alike; only an input over the size limit goes to the CLI (which says so)."""
    from eventlog.app.agents import hook_socket

    if len(raw) > hook_socket.MAX_PAYLOAD_BYTES:
        return False
    try:
        if plan.harness == "codex":
            from eventlog.app.agents.codex_hooks import handle_codex as handler
        else:
            from eventlog.app.agents.hooks import handle_claude_code as handler
        result = handler(raw, home=plan.home, budget=plan.budget, max_bytes=plan.max_bytes,
                         lock_timeout=min(plan.lock_timeout, hook_socket.HOOK_LOCK_WAIT_S))
    except Exception as e:  # noqa: BLE001 - a hook must never fail the agent (the CLI's words)
        _print("", [f"internal error ({e.__class__.__name__}: {e}); nothing lost, the next hook catches up"])
        return True
    _print(result.stdout, result.notes)
    return True


def _print(stdout: str, notes: list[str]) -> None:
    """A hook's output as ``evlog hook`` prints it: one stderr line per note, then stdout (if any)."""
    for line in notes:
        sys.stderr.write(f"evlog hook: {line}\n")
    sys.stderr.flush()
    if stdout:
        sys.stdout.write(stdout + "\n")
        sys.stdout.flush()
