"""``evlog status``: is evlog running, connected and caught up here? One typed report, read-only.

``workspace_status(home)`` looks, without writing anything or taking the write lock, at:

* **the daemon**: ``state/daemon.json`` (``processors.daemon.Heartbeat``): up when it has not
  stopped, its pid runs on this host and its heartbeat is fresh (``STALE_AFTER_SECONDS``);
  since when it runs, or since when it is down; whether a user service (systemd unit or
  launchd agent, ``eventlog.app.service``) is installed for this workspace;
* **the agents**: evlog's hooks and MCP server in Claude Code's user settings and the current
  project's, the Claude Code plugin (``enabledPlugins`` holding ``evlog@...``), and Codex
  (``eventlog.app.agents.codex_setup``);
* **the jobs**: per scheduled job, the daemon's last run (ok or the error, consecutive
  failures), next run, and the lag of its processor (``processors.offsets``);
* **the recall index**: the last log seq it holds against the log's end;
* **sync**: the gateways this workspace is logged in to, the last push/pull positions;
* **capture**: paused (until when) and what is excluded (``eventlog.app.capture``); a pause is
  a problem (``evlog capture resume``), so it is not forgotten.

Each thing that needs doing is a ``Problem`` with the command that fixes it. The report
makes no promise about the future: a daemon up now may be stopped a second later.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from eventlog._version import __version__


@dataclass
class Problem:
    """Something to do, and the command that does it."""

    what: str
    fix: str


@dataclass
class DaemonStatus:
    """Whether the workspace's daemon runs, since when, and how it is started."""

    running: bool
    pid: int | None = None
    since: str = ""  # started_at while it runs; stopped_at (or the last heartbeat) when it does not
    heartbeat_at: str = ""
    heartbeat_age: float | None = None  # seconds
    version: str = ""
    log_file: str = ""
    service: str = ""  # the installed unit or plist ("": none)
    current_job: str = ""  # the job running now ("snapshot since 2026-...Z"; "": none, or the daemon is down)


@dataclass
class AgentStatus:
    """evlog's hooks and MCP server in one agent's settings."""

    agent: str  # claude-code, claude-code-plugin, codex
    hooks: bool
    mcp: bool
    where: list[str] = field(default_factory=list)  # the files that hold them
    notes: list[str] = field(default_factory=list)


@dataclass
class JobStatus:
    """One scheduled job: the daemon's view (last and next run) and its processor's lag."""

    job: str
    interval: float  # seconds (0: off)
    last_run: str = ""
    last_ok: bool | None = None
    last_error: str = ""
    failures: int = 0  # consecutive
    next_run: str = ""
    lag: int | None = None  # pending input of its processor (None: not measured for this job)


@dataclass
class IndexStatus:
    """The recall index against the log."""

    exists: bool
    seq: int
    log_seq: int

    @property
    def behind(self) -> int:
        return max(0, self.log_seq - self.seq)


@dataclass
class SyncStatus:
    """The gateways this workspace syncs with (from its credentials and the log; no network)."""

    gateways: list[str] = field(default_factory=list)  # "url as user"
    positions: dict[str, int] = field(default_factory=dict)  # sync.* processor -> last seq
    error: str = ""


@dataclass
class CaptureStatus:
    """Whether capture is paused, and what is excluded (``<home>/capture.json``)."""

    paused: bool = False
    paused_until: str = ""  # "until 'evlog capture resume'" or "until <UTC time>" while paused
    excluded: list[str] = field(default_factory=list)
    error: str = ""  # capture.json could not be read


@dataclass
class StatusReport:
    """Everything ``evlog status`` shows."""

    home: str
    version: str
    initialised: bool
    log_seq: int
    daemon: DaemonStatus
    agents: list[AgentStatus]
    jobs: list[JobStatus]
    index: IndexStatus
    sync: SyncStatus
    problems: list[Problem]
    capture: CaptureStatus = field(default_factory=CaptureStatus)

    @property
    def ok(self) -> bool:
        return not self.problems


def workspace_status(home: str, *, cwd: str | None = None, now: float | None = None) -> StatusReport:
    """The status of the workspace at ``home`` and of the agents connected to it (reads only)."""
    from eventlog.app.workspace import CONFIG_FILE

    now = time.time() if now is None else now
    home = os.path.abspath(os.path.expanduser(home))
    agents = agent_status(home, cwd=cwd)
    if not os.path.isfile(os.path.join(home, CONFIG_FILE)):
        report = StatusReport(home, __version__, False, 0, DaemonStatus(False), agents, [], IndexStatus(False, 0, 0),
                              SyncStatus(), [])
        report.problems.append(Problem(f"no workspace at {home}", "evlog init"))
        report.problems.extend(_agent_problems(agents))
        return report
    daemon = daemon_status(home, now=now)
    with _open(home) as ws:
        log_seq = ws.log.last_seq
        jobs = job_status(ws, home, daemon.running)
        index = index_status(home, log_seq)
        sync = sync_status(home, ws)
    report = StatusReport(home, __version__, True, log_seq, daemon, agents, jobs, index, sync, [],
                          capture_status(home, now=now))
    report.problems = find_problems(report)
    return report


def _open(home: str) -> Any:
    from eventlog.app.workspace import Workspace

    return Workspace.open(home)


def daemon_status(home: str, *, now: float) -> DaemonStatus:
    """The daemon as its ``state/daemon.json`` and the process table say."""
    from eventlog.app.service import plan_service
    from processors.daemon import LOG_FILE, daemon_alive, read_daemon_state

    state = read_daemon_state(home) or {}
    running = daemon_alive(state, now=now)
    beat = state.get("heartbeat_ts")
    age = now - beat if isinstance(beat, int | float) and beat else None
    since = state.get("started_at", "") if running else (state.get("stopped_at") or state.get("heartbeat_at", ""))
    try:
        plan = plan_service(home)
        service = plan.path if plan.installed else ""
    except Exception:  # noqa: BLE001 - status never fails over a service file
        service = ""
    pid = state.get("pid") if isinstance(state.get("pid"), int) else None
    job = state.get("current_job")
    current = f"{job.get('job')} since {job.get('since')}" if running and isinstance(job, dict) else ""
    return DaemonStatus(running, pid, str(since), str(state.get("heartbeat_at", "")), age,
                        str(state.get("version", "")), os.path.join(home, LOG_FILE), service, current)


def job_status(ws: Any, home: str, running: bool) -> list[JobStatus]:
    """Each job of the schedule: the daemon's last and next run, and the lag of its processor."""
    import processors
    from processors import registry
    from processors.daemon import read_daemon_state

    seen = (read_daemon_state(home) or {}).get("jobs") or {}
    lags = {r.processor: r.lag for r in processors.offsets(ws)}
    lags["recall"] = index_status(home, ws.log.last_seq).behind
    rows = []
    for job in registry.daemon_jobs():
        found = seen.get(job)
        d: dict[str, Any] = found if isinstance(found, dict) else {}
        interval = float(d.get("interval") or ws.config.schedule.get(job, 0) or 0)  # the daemon's, else evlog.json's
        rows.append(JobStatus(job, interval, str(d.get("last_run_at", "")), d.get("last_ok"),
                              str(d.get("last_error", "")), int(d.get("failures", 0) or 0),
                              str(d.get("next_run_at", "")) if running else "", lags.get(job)))
    return rows


def index_status(home: str, log_seq: int) -> IndexStatus:
    """The recall index's position (read-only; a missing index is at 0)."""
    from projections.recall.index import RecallIndex
    from projections.recall.workspace import index_path

    path = index_path(home)
    if not os.path.exists(path):
        return IndexStatus(False, 0, log_seq)
    try:
        ix = RecallIndex(path, readonly=True)
    except Exception:  # noqa: BLE001 - a damaged index is rebuilt by 'evlog run recall'
        return IndexStatus(False, 0, log_seq)
    try:
        return IndexStatus(True, ix.seq, log_seq)
    finally:
        ix.close()


def sync_status(home: str, ws: Any) -> SyncStatus:
    """The gateways in the workspace's credentials file and the sync positions in the log (no network)."""
    from eventlog.app.gateway import credentials
    from eventlog.errors import EvlogError

    out = SyncStatus()
    try:
        out.gateways = [f"{url} as {v['user']}" for url, v in sorted(credentials._read(home).items())]
    except EvlogError as e:
        out.error = str(e)
    out.positions = {name: p.seq for name, p in sorted(ws.offsets.s.processors.items()) if name.startswith("sync.")}
    return out


# --- agents ----------------------------------------------------------------------------------------


def agent_status(home: str, *, cwd: str | None = None) -> list[AgentStatus]:
    """evlog's hooks and MCP server in Claude Code (user and project settings, the plugin) and Codex."""
    from eventlog.app.agents import codex_setup
    from eventlog.app.agents import setup as st

    claude = AgentStatus("claude-code", False, False)
    for scope in ("user", "project"):
        hooks_path, mcp_path = st.target_paths(scope, cwd or os.getcwd())
        if _has_evlog_hook(_json(hooks_path).get("hooks")):
            claude.hooks = True
            claude.where.append(hooks_path)
        server = (_json(mcp_path).get("mcpServers") or {})
        if isinstance(server, dict) and st.is_evlog_server(server.get(st.SERVER_NAME)):
            claude.mcp = True
            claude.where.append(mcp_path)
    plugin = AgentStatus("claude-code-plugin", False, False)
    enabled = _json(st.user_settings_path()).get("enabledPlugins")
    if isinstance(enabled, dict) and any(k.split("@")[0] == "evlog" and v for k, v in enabled.items()):
        plugin.hooks = plugin.mcp = True
        plugin.where.append(st.user_settings_path())
    if plugin.hooks and claude.hooks:
        claude.notes.append("the plugin and 'evlog setup claude-code' both add the hooks: each runs twice")
    codex = codex_setup.installed()
    return [claude, plugin, AgentStatus("codex", codex.hooks, codex.mcp, codex.where, codex.notes)]


def _json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _has_evlog_hook(hooks: Any) -> bool:
    from eventlog.app.agents.setup import is_evlog_hook

    if not isinstance(hooks, dict):
        return False
    return any(is_evlog_hook(h) for groups in hooks.values() if isinstance(groups, list)
               for g in groups if isinstance(g, dict) and isinstance(g.get("hooks"), list) for h in g["hooks"])


# --- problems --------------------------------------------------------------------------------------


def capture_status(home: str, *, now: float) -> CaptureStatus:
    """Paused or not, and the exclusions, from ``eventlog.app.capture``."""
    from eventlog.app.capture import load_state
    from eventlog.errors import EvlogError

    try:
        state = load_state(home)
    except EvlogError as e:
        return CaptureStatus(error=str(e))
    paused = state.paused(now)
    return CaptureStatus(paused, state.pause_text() if paused else "", list(state.excluded))


def find_problems(report: StatusReport) -> list[Problem]:
    """What needs doing, each with the command that does it."""
    problems: list[Problem] = []
    d = report.daemon
    if not d.running:
        why = f" (down since {d.since})" if d.since else " (it never ran here)"
        fix = "systemctl --user start " + os.path.basename(d.service) if d.service.endswith(".service") else (
            f"launchctl load -w {d.service}" if d.service else "evlog daemon install")
        problems.append(Problem("the daemon is not running" + why, fix))
    elif d.version and d.version != report.version:
        problems.append(Problem(f"the daemon runs evlog {d.version}, this is {report.version}",
                                "restart it: evlog daemon install (or restart its service)"))
    for j in report.jobs:
        if j.interval and j.last_ok is False:
            fix = "evlog run dream --retry-failed" if j.job == "dream" else (
                f"evlog run {j.job}" if j.job != "watch" else "evlog watch --once")
            problems.append(Problem(f"job {j.job} failed {j.failures} time(s) in a row: {j.last_error}",
                                    f"see {d.log_file}; then {fix}"))
    recall_ok = d.running and any(j.job == "recall" and j.interval and j.last_ok is not False for j in report.jobs)
    if not report.index.exists:
        problems.append(Problem("there is no recall index yet", "evlog run recall"))
    elif report.index.behind and not recall_ok:
        problems.append(Problem(f"the recall index is {report.index.behind} event(s) behind the log",
                                "evlog run recall"))
    if report.sync.error:
        problems.append(Problem(report.sync.error, "evlog sync login"))
    if report.capture.paused:
        problems.append(Problem(f"capture is paused {report.capture.paused_until}", "evlog capture resume"))
    if report.capture.error:
        problems.append(Problem(report.capture.error, "fix or delete it, then evlog capture status"))
    problems.extend(_agent_problems(report.agents))
    return problems


def _agent_problems(agents: list[AgentStatus]) -> list[Problem]:
    out = []
    if not any(a.hooks or a.mcp for a in agents):
        out.append(Problem("no agent is connected to evlog (no hooks, no MCP server)",
                           "evlog setup claude-code (or /plugin install evlog, or evlog setup codex)"))
    for a in agents:
        if a.hooks != a.mcp:
            has, lacks = ("hooks", "MCP server") if a.hooks else ("MCP server", "hooks")
            cmd = "evlog setup codex" if a.agent == "codex" else "evlog setup claude-code"
            out.append(Problem(f"{a.agent} has evlog's {has} but not its {lacks}", cmd))
        for n in a.notes:
            out.append(Problem(f"{a.agent}: {n}", "evlog setup claude-code --uninstall (keep the plugin)"
                               if "twice" in n else "evlog setup codex"))
    return out
