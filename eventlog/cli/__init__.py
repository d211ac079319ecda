"""The ``evlog`` command line: a thin layer of click over the library.

Every command parses its options, calls one library function and renders the result
with ``eventlog.cli.render``. Data goes to stdout (``--json``: one object per line);
messages, warnings and progress go to stderr. Library errors (``EvlogError``) become a
one-line message and exit status ``ExitStatus.ERROR`` here, in one place;
``--traceback`` shows the Python traceback instead.
"""

from __future__ import annotations

import enum
import os
import sys

import click

from eventlog._version import __version__
from eventlog.errors import EvlogError


class ExitStatus(enum.IntEnum):
    """What ``evlog`` exits with."""

    OK = 0
    CHECK_FAILED = 1  # verify found damage, replay --check found drift, some inputs failed
    USAGE = 2  # click's own exit status for bad options
    ERROR = 3  # the command could not do its job (locked, corrupt, invalid input, ...)


class EvlogGroup(click.Group):
    """The root group: turns library errors into clean messages (unless --traceback)."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except EvlogError as e:
            if ctx.params.get("traceback") or os.environ.get("EVLOG_TRACEBACK"):
                raise
            click.echo(f"evlog: error: {e}", err=True)
            ctx.exit(ExitStatus.ERROR)
        except BrokenPipeError:
            # the reader went away (evlog tail | head): not an error
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(ExitStatus.OK)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)


@click.group(cls=EvlogGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--home",
    type=click.Path(file_okay=False),
    envvar="EVLOG_HOME",
    default=None,
    help="Workspace directory (default: $EVLOG_HOME, else ~/.evlog).",
)
@click.option("--lock-timeout", type=float, default=5.0, show_default=True, envvar="EVLOG_LOCK_TIMEOUT",
              help="Seconds a writing command waits for another writer to finish.")
@click.option("--traceback", is_flag=True, help="Show the Python traceback of an error.")
@click.version_option(version=__version__, prog_name="evlog")
@click.pass_context
def cli(ctx: click.Context, home: str | None, lock_timeout: float, traceback: bool) -> None:
    """evlog: an event-sourced memory for AI agents.

    One append-only, checksummed log is the only truth; session files, diaries and
    MEMORY.md are projections rebuilt from it.
    """
    from eventlog.app.workspace import default_home

    ctx.obj = {"home": home or default_home(), "lock_timeout": lock_timeout}


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="evlog")


from eventlog.cli import (  # noqa: E402,F401  (registers the commands)
    agents_command,
    daemon_command,
    erase_command,
    export_command,
    gateway_command,
    ingest_command,
    log_commands,
    processor_commands,
    project_command,
    projection_commands,
    recall_command,
    status_command,
    sync_command,
    web_command,
)
