"""``evlog status``: the daemon, the connected agents, each job, the recall index, sync and what to fix.

A thin layer over ``eventlog.app.status.workspace_status``: a table on stdout, or with
``--json`` the whole report as one JSON object on one line.
"""

from __future__ import annotations

import click

from eventlog.cli import ExitStatus, cli
from eventlog.cli.common import json_option
from eventlog.cli.render import json_line


@cli.command()
@json_option
@click.option("--check", is_flag=True, help="Exit with status 1 when there is a problem (for scripts and CI).")
@click.pass_context
def status(ctx: click.Context, as_json: bool, check: bool) -> None:
    """Is evlog running and caught up here? The daemon, agents, jobs, recall index, sync, problems.

    Daemon: up or down, and since when (its pid and heartbeat in state/daemon.json), the
    user service if one is installed. Agents: evlog's hooks and MCP server in Claude Code
    (settings, the plugin) and Codex. Jobs: last run, next run, failures and lag of each.
    Index: how far the recall index is behind the log. Sync: the gateways logged in to.
    Problems: each with the command that fixes it. It only reads (no workspace file changes).
    """
    from eventlog.app.status import workspace_status

    report = workspace_status(ctx.obj["home"])
    if as_json:
        click.echo(json_line({**_jsonable(report), "ok": report.ok}))
    else:
        click.echo(render_status(report))
    if check and not report.ok:
        ctx.exit(ExitStatus.CHECK_FAILED)


def _jsonable(report) -> dict:  # noqa: ANN001
    from dataclasses import asdict

    out = asdict(report)
    out["index"]["behind"] = report.index.behind
    return out


def render_status(r) -> str:  # noqa: ANN001
    """The report as a few aligned lines for a terminal."""
    d = r.daemon
    lines = [f"evlog {r.version}  workspace {r.home}" + ("" if r.initialised else " (not initialised)")]
    if d.running:
        lines.append(f"daemon      up since {d.since} (pid {d.pid}, heartbeat {d.heartbeat_age or 0:.0f}s ago)"
                     + (f"; running {d.current_job}" if d.current_job else ""))
    else:
        lines.append("daemon      down" + (f" since {d.since}" if d.since else " (never ran here)"))
    lines.append(f"service     {d.service or 'not installed'}")
    for a in r.agents:
        what = ", ".join(x for x, on in (("hooks", a.hooks), ("MCP", a.mcp)) if on) or "not connected"
        lines.append(f"{a.agent:<19} {what}")
    if r.initialised:
        lines.append(f"{'job':<12}{'every':>8}  {'last run':<21}{'result':<8}{'next run':<21}lag")
        for j in r.jobs:
            if not j.interval:
                lines.append(f"{j.job:<12}{'off':>8}")
                continue
            result = "-" if j.last_ok is None else ("ok" if j.last_ok else f"FAILED x{j.failures}")
            lag = "-" if j.lag is None else str(j.lag)
            lines.append(f"{j.job:<12}{j.interval:>7g}s  {j.last_run or '-':<21}{result:<8}{j.next_run or '-':<21}{lag}")
        ix = r.index
        lines.append("index       " + (f"at seq {ix.seq} of {ix.log_seq} ({ix.behind} behind)" if ix.exists else "none"))
        lines.append("sync        " + (", ".join(r.sync.gateways) or "not logged in to a gateway"))
        c = r.capture
        lines.append("capture     " + (f"paused {c.paused_until}" if c.paused else "on")
                     + (f"; excluded: {', '.join(c.excluded)}" if c.excluded else ""))
    if r.problems:
        lines.append("problems:")
        lines += [f"  - {p.what}\n      fix: {p.fix}" for p in r.problems]
    else:
        lines.append("no problems")
    return "\n".join(lines)
