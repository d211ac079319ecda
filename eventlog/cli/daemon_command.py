"""``evlog daemon``: run the processors on their schedules; ``daemon install|uninstall``: as a user service.

The daemon itself is ``processors.daemon.run_daemon``; the service files are
``eventlog.app.service``. This module only wires them to click.
"""

from __future__ import annotations

import os

import click

from eventlog.cli import cli
from eventlog.cli.common import note, open_workspace
from eventlog.cli.processor_commands import _llm, llm_options


@cli.group(invoke_without_command=True)
@llm_options
@click.option("--once", is_flag=True, help="Run every job once, then exit.")
@click.pass_context
def daemon(ctx: click.Context, llm_kind: str | None, model: str | None, once: bool) -> None:
    """Run snapshot, digest, autocompact, dream, archive, recall and watch on their schedules.

    Logs to stderr and to logs/daemon.log in the workspace (rotated at 1 MiB, 3 old files
    kept); keeps its pid, heartbeat and each job's last and next run in state/daemon.json
    ('evlog status' reads it). SIGINT/SIGTERM stop it cleanly between jobs (every offset
    is committed). Intervals are the 'schedule' in evlog.json (seconds; 0 turns a job
    off; a job missing there runs at its default). watch (ingest grown transcripts of
    the folders in 'watch', like 'evlog watch') is off until schedule.watch is set.
    A second daemon on a workspace whose daemon runs is refused. While it runs it answers
    the SessionStart and UserPromptSubmit hooks of its workspace on run/hooks.sock (a 0700
    folder), so a hook pays only Python's start-up; with no daemon, hooks run in their own
    process as before. 'evlog daemon install' runs it as a user service instead.
    """
    if ctx.invoked_subcommand is not None:
        return
    import signal
    import sys
    import threading

    from eventlog.app.agents.hook_socket import HookServer
    from eventlog.app.agents.watch import run_once as watch_once
    from processors.daemon import Heartbeat, close_logger, daemon_logger, run_daemon

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with open_workspace(ctx, writable=True) as ws:
        logger = daemon_logger(ws.home, stream=sys.stderr)
        hooks = HookServer(ws.home, log=logger.info)
        try:
            if not once:
                hooks.start()  # SessionStart/UserPromptSubmit hooks answered warm (or, if it cannot, in their process)
            run_daemon(ws, _llm(llm_kind, model, ws, on_fallback=logger.warning), stop=stop, log=logger.info, once=once,
                       jobs={"watch": watch_once}, heartbeat=Heartbeat(ws.home))
        finally:
            hooks.close()
            close_logger(logger)


def _service_options(f):  # noqa: ANN001, ANN202
    f = click.option("--platform", type=click.Choice(["systemd", "launchd"]), default=None,
                     help="Which service manager (default: launchd on macOS, systemd elsewhere).")(f)
    f = click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
                     help="Write the unit here instead of ~/.config/systemd/user or ~/Library/LaunchAgents.")(f)
    return click.option("--dry-run", is_flag=True, help="Print the file and the commands; change nothing.")(f)


@daemon.command("install")
@_service_options
@click.option("--command", "program", default=None, metavar="CMD",
              help="How the service starts evlog (default: this evlog's absolute path).")
@click.option("--no-start", is_flag=True, help="Write the file only; do not enable or start the service.")
@click.pass_context
def daemon_install(ctx: click.Context, platform: str | None, directory: str | None, dry_run: bool,
                   program: str | None, no_start: bool) -> None:
    """Run the daemon as a user service: a systemd user unit (Linux) or a launchd agent (macOS).

    Writes ~/.config/systemd/user/evlog-daemon.service (or
    ~/Library/LaunchAgents/dev.evlog.daemon.plist), then enables and starts it
    (systemctl --user enable --now / launchctl load -w). It restarts the daemon when it
    fails; put ANTHROPIC_API_KEY=... in ~/.config/evlog/env (mode 600) for the systemd
    unit. Where the service manager does not run (a container), the file is written and
    the commands to start it are printed. Idempotent; 'evlog daemon uninstall' reverses it.
    """
    from eventlog import init_workspace
    from eventlog.app import service

    plan = service.plan_service(ctx.obj["home"], program=program, platform=platform, directory=directory)
    if dry_run:
        click.echo(f"# {plan.path}\n{plan.content}", nl=False)
        for argv in plan.start:
            click.echo("# then: " + " ".join(argv))
        return
    _config, created = init_workspace(ctx.obj["home"])
    if created:
        note(f"created the workspace {ctx.obj['home']}")
    result = service.install(plan, start=not no_start)
    note(("wrote " if result.changed else "unchanged: ") + plan.path)
    _report(result, "started" if result.started else "")


@daemon.command("uninstall")
@_service_options
@click.pass_context
def daemon_uninstall(ctx: click.Context, platform: str | None, directory: str | None, dry_run: bool) -> None:
    """Stop the daemon's user service and remove its file (the workspace, its log and memory stay).

    It then lists what is left (the workspace, the daemon's env file) and how to remove it.
    """
    from eventlog.app import service

    plan = service.plan_service(ctx.obj["home"], platform=platform, directory=directory)
    if dry_run:
        click.echo(f"# would remove {plan.path}" if plan.installed else f"# no evlog service at {plan.path}")
        for argv in plan.stop:
            click.echo("# " + " ".join(argv))
        return
    result = service.uninstall(plan)
    if result.changed:
        note(f"removed {plan.path}")
    _report(result, "stopped" if result.started else "")
    from eventlog.app.leftovers import left_behind, render_leftovers

    env_file = os.path.join(os.path.expanduser("~"), ".config", "evlog", "env")
    for line in render_leftovers(left_behind(ctx.obj["home"], env_file=env_file)):
        note(line)


def _report(result, done: str) -> None:  # noqa: ANN001
    for line in result.notes:
        note(line)
    for line in result.manual:
        note(f"  {line}")
    if done:
        note(f"the service is {done}; 'evlog status' shows the daemon")
