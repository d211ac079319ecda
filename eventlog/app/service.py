"""``evlog daemon install|uninstall``: run the daemon as a user service (systemd on Linux, launchd on macOS).

``plan_service(home, ...)`` computes the one file a platform needs and the commands that
start or stop it; ``install(plan)`` / ``uninstall(plan)`` write or remove the file and run
those commands where the service manager runs. Nothing here needs root.

* **Linux**: a systemd *user* unit, ``~/.config/systemd/user/evlog-daemon.service`` (under
  ``$XDG_CONFIG_HOME`` when set), started with ``systemctl --user daemon-reload`` and
  ``systemctl --user enable --now``. It restarts the daemon when it fails (10 s later),
  reads optional environment (``ANTHROPIC_API_KEY=...``, ``EVLOG_MODEL=...``) from
  ``~/.config/evlog/env`` (a file you create, mode 600: no secret is ever written into the
  unit), and logs to the workspace's ``logs/daemon.log`` (rotated) as well as the journal.
* **macOS**: a launchd agent, ``~/Library/LaunchAgents/dev.evlog.daemon.plist``, loaded with
  ``launchctl load -w``; ``RunAtLoad`` and ``KeepAlive`` (restart unless it exited cleanly),
  stderr to ``logs/daemon.stderr.log``.

A workspace other than ``~/.evlog`` gets its own unit (``evlog-daemon-<8 hex of its path>``),
so several workspaces can each have a daemon. A file at the unit's path that evlog did not
write (no ``MARKER`` in it) is never overwritten or removed. Where the service manager is
not running (a container without systemd, CI), the file is written and the commands that
would start it are returned, not run (``ServiceResult.started`` is False, and ``manual``
says what to run).
"""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import xxhash

from eventlog.app.agents.setup import read_text
from eventlog.errors import ConfigError

MARKER = "Written by 'evlog daemon install'"
LAUNCHD_LABEL = "dev.evlog.daemon"
PLATFORMS = ("systemd", "launchd")


@dataclass
class ServicePlan:
    """The service file for one workspace: where, what it holds, and how it is started and stopped."""

    platform: str  # "systemd" or "launchd"
    name: str  # unit name or launchd label
    path: str
    content: str
    argv: list[str]  # how the service starts the daemon
    home: str = ""  # the workspace (absolute)
    start: list[list[str]] = field(default_factory=list)
    stop: list[list[str]] = field(default_factory=list)

    @property
    def installed(self) -> bool:
        """Whether evlog's file for this workspace is in place (with any content)."""
        return _ours(self.path)


@dataclass
class ServiceResult:
    """What install or uninstall did."""

    path: str
    changed: bool  # the file was written / removed
    started: bool  # the service manager was told (False: not running here)
    manual: list[str] = field(default_factory=list)  # commands to run by hand where it was not
    notes: list[str] = field(default_factory=list)


def default_platform() -> str:
    """launchd on macOS, systemd everywhere else."""
    return "launchd" if sys.platform == "darwin" else "systemd"


def unit_suffix(home: str) -> str:
    """'' for the default workspace (~/.evlog), else '-' and 8 hex digits of its absolute path."""
    home = os.path.abspath(os.path.expanduser(home))
    if home == os.path.join(os.path.expanduser("~"), ".evlog"):
        return ""
    return "-" + xxhash.xxh3_64_hexdigest(home.encode())[:8]


def systemd_dir() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "systemd", "user")


def launchd_dir() -> str:
    return os.path.join(os.path.expanduser("~"), "Library", "LaunchAgents")


def _systemd_word(word: str) -> str:
    """One ExecStart word, quoted as systemd reads it (spaces, quotes, backslashes; '%' is a specifier)."""
    word = word.replace("%", "%%")
    if word and not any(c in word for c in " \t\"'\\;$"):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_unit(argv: list[str], home: str) -> str:
    """The text of the systemd user unit that runs ``argv`` (the daemon of ``home``)."""
    return "\n".join([
        f"# {MARKER} (remove it with 'evlog daemon uninstall').",
        "[Unit]",
        f"Description=evlog daemon (workspace {home})",
        "",
        "[Service]",
        "Type=simple",
        "ExecStart=" + " ".join(_systemd_word(w) for w in argv),
        "Restart=on-failure",
        "RestartSec=10",
        "# Optional settings such as ANTHROPIC_API_KEY=... (a file you create, mode 600).",
        "EnvironmentFile=-%h/.config/evlog/env",
        "Environment=PYTHONUNBUFFERED=1",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ])


def launchd_plist(argv: list[str], home: str, label: str) -> str:
    """The text of the launchd agent plist that runs ``argv`` (the daemon of ``home``)."""
    logs = os.path.join(home, "logs")
    doc = {
        "Label": label,
        "ProgramArguments": argv,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "StandardOutPath": os.path.join(logs, "daemon.stderr.log"),
        "StandardErrorPath": os.path.join(logs, "daemon.stderr.log"),
        "EnvironmentVariables": {"PYTHONUNBUFFERED": "1"},
    }
    text = plistlib.dumps(doc, sort_keys=False).decode()
    return text.replace("<plist ", f"<!-- {MARKER} (remove it with 'evlog daemon uninstall'). -->\n<plist ", 1)


def plan_service(home: str, *, program: str | None = None, platform: str | None = None,
                 directory: str | None = None) -> ServicePlan:
    """The service that runs ``evlog --home HOME daemon`` for this user (reads nothing, writes nothing)."""
    from eventlog.app.agents.setup import evlog_argv

    platform = platform or default_platform()
    if platform not in PLATFORMS:
        raise ConfigError(f"unknown service platform {platform!r}; choose one of {', '.join(PLATFORMS)}")
    home = os.path.abspath(os.path.expanduser(home))
    argv = evlog_argv(program, None)
    argv[1:1] = ["--home", home]  # always named: a service does not see the user's EVLOG_HOME
    argv.append("daemon")
    if not os.path.isabs(argv[0]):
        found = shutil.which(argv[0])
        if found:
            argv[0] = os.path.abspath(found)
    suffix = unit_suffix(home)
    if platform == "systemd":
        name = f"evlog-daemon{suffix}.service"
        path = os.path.join(directory or systemd_dir(), name)
        return ServicePlan("systemd", name, path, systemd_unit(argv, home), argv, home,
                           start=[["systemctl", "--user", "daemon-reload"],
                                  ["systemctl", "--user", "enable", "--now", name]],
                           stop=[["systemctl", "--user", "disable", "--now", name],
                                 ["systemctl", "--user", "daemon-reload"]])
    label = LAUNCHD_LABEL + suffix.replace("-", ".")
    path = os.path.join(directory or launchd_dir(), label + ".plist")
    return ServicePlan("launchd", label, path, launchd_plist(argv, home, label), argv, home,
                       start=[["launchctl", "load", "-w", path]], stop=[["launchctl", "unload", "-w", path]])


def manager_running(platform: str) -> bool:
    """Whether this machine's service manager can take commands: a systemd user instance, or launchctl."""
    if platform == "launchd":
        return sys.platform == "darwin" and shutil.which("launchctl") is not None
    if shutil.which("systemctl") is None or not os.path.isdir("/run/systemd/system"):
        return False  # systemd is not PID 1 here (containers, WSL without systemd)
    try:
        r = subprocess.run(["systemctl", "--user", "is-system-running"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.stdout.strip() not in ("", "offline")


def install(plan: ServicePlan, *, start: bool = True) -> ServiceResult:
    """Write the service file (atomically; only if it changes) and start it where the manager runs."""
    from eventlog.app.agents.setup import _atomic_write_text

    before = read_text(plan.path)
    if before is not None and MARKER not in before:
        raise ConfigError(f"{plan.path} exists and was not written by evlog; nothing was changed (remove or rename "
                          "it, then run 'evlog daemon install' again)")
    os.makedirs(os.path.join(plan.home, "logs"), mode=0o700, exist_ok=True)
    changed = before != plan.content
    if changed:
        _atomic_write_text(plan.path, plan.content, 0o644)
    return _tell_manager(plan, plan.start if start else [], changed)


def uninstall(plan: ServicePlan, *, stop: bool = True) -> ServiceResult:
    """Stop the service where the manager runs and remove evlog's file (a file evlog did not write stays)."""
    before = read_text(plan.path)
    if before is None:
        return ServiceResult(plan.path, False, False, notes=[f"no evlog service at {plan.path}: nothing to remove"])
    if MARKER not in before:
        raise ConfigError(f"{plan.path} was not written by evlog; it was left as it is")
    result = _tell_manager(plan, plan.stop[:1] if stop else [], True)
    os.unlink(plan.path)
    if result.started and plan.stop[1:]:
        _run_all(plan.stop[1:])
    return result


def _tell_manager(plan: ServicePlan, commands: list[list[str]], changed: bool) -> ServiceResult:
    result = ServiceResult(plan.path, changed, False)
    if not commands:
        return result
    if not manager_running(plan.platform):
        what = "systemd (as a user service manager)" if plan.platform == "systemd" else "launchd"
        result.notes.append(f"{what} is not running here, so nothing was started or stopped; where it runs:")
        result.manual = [" ".join(c) for c in commands]
        return result
    failed = _run_all(commands)
    result.started = not failed
    result.notes.extend(failed)
    return result


def _run_all(commands: list[list[str]]) -> list[str]:
    """Run each command; returns one line per failure."""
    failed = []
    for argv in commands:
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            failed.append(f"{' '.join(argv)}: {e}")
            continue
        if r.returncode != 0:
            failed.append(f"{' '.join(argv)} exited {r.returncode}: {(r.stderr or r.stdout).strip()[:300]}")
    return failed


def _ours(path: str) -> bool:
    try:
        return MARKER in (read_text(path) or "")
    except ConfigError:
        return False
