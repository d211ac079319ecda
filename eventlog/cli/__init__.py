"""The ``evlog`` command line: a thin layer of click over the library.

The root group is lazy: ``COMMANDS`` names the module of every subcommand and its
one-line help, so ``evlog --help`` imports no command module (nor the workspace, writer,
ingest and agents code they import) and ``evlog hook ...`` imports only its own.
tests/cli/test_cli_lazy.py keeps the table equal to the commands the modules define.

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
from importlib import import_module

import click

from eventlog._version import __version__
from eventlog.errors import EvlogError


class ExitStatus(enum.IntEnum):
    """What ``evlog`` exits with."""

    OK = 0
    CHECK_FAILED = 1  # verify found damage, replay --check found drift, some inputs failed
    USAGE = 2  # click's own exit status for bad options
    ERROR = 3  # the command could not do its job (locked, corrupt, invalid input, ...)


#: name -> (module in eventlog.cli, attribute, first paragraph of its help): what ``--help`` lists
#: without importing the module, and where ``get_command`` finds the command.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "append": ("log_commands", "append",
             "Append NDJSON events from SOURCE (a file, or - for stdin)."),
    "audit": ("processor_commands", "audit",
             "List Dream runs: time, model, input range, attempts, outcome, tokens, facts added."),
    "capture": ("capture_command", "capture",
             "Pause capture, or exclude a project or transcript from it (hooks, watch, the daemon, ingest)."),
    "daemon": ("daemon_command", "daemon",
             "Run snapshot, digest, autocompact, dream, archive, recall and watch on their schedules."),
    "erase": ("erase_command", "erase_cmd",
             "Erase a fact, a session, a subject's facts or a text from every store, for good."),
    "export": ("export_command", "export_cmd",
             "Export facts with their provenance and validity: id, text, file, section, subject, state, who added it "
             "and when, the run, valid_from / valid_until / replaced_by and the source messages."),
    "gateway": ("gateway_command", "gateway",
             "Manage the gateway's accounts (the gateway runs as 'evlog web --gateway DSN')."),
    "hook": ("agents_command", "hook",
             "Hooks agent harnesses run (they never fail the harness: problems are notes on stderr, exit 0)."),
    "import": ("export_command", "import_cmd",
             "Import facts from an 'evlog export' file (or a Markdown list of facts under '### Section' headings), "
             "SOURCE or - for stdin."),
    "ingest": ("ingest_command", "ingest",
             "Ingest agent transcripts: files, or folders searched for *.jsonl."),
    "init": ("log_commands", "init",
             "Create a workspace (or change its settings). Safe to run again."),
    "mcp": ("agents_command", "mcp",
             "Serve evlog to agents over MCP (stdio): recall, remember, forget, why, sessions, session_messages."),
    "memory": ("processor_commands", "memory",
             "List facts (id, file, section, subject, text), or memory entries with --tier stm|ltm|dropped."),
    "offsets": ("processor_commands", "offsets",
             "Every processor's position, lag behind the log and any recorded loss."),
    "project": ("project_command", "project",
             "List the registered projects: directories whose memory/MEMORY.md evlog keeps up to date."),
    "recall": ("recall_command", "recall",
             "Search everything the log holds for QUERY, best first; every hit names its source."),
    "remember": ("processor_commands", "remember",
             "Give Dream a note to keep, e.g. 'I prefer tabs' (the same note twice is kept once)."),
    "repair": ("log_commands", "repair",
             "Cut the log at its first damaged record, keeping the cut bytes in log/quarantine/."),
    "replay": ("projection_commands", "replay",
             "Rebuild every projection (sessions, history, MEMORY.md, ...) from the log."),
    "run": ("processor_commands", "run_cmd",
             "Run one processor now and report what it did."),
    "sessions": ("projection_commands", "sessions",
                 "List sessions, newest first: updated, messages, project, key, title."),
    "setup": ("agents_command", "setup",
             "Connect agent harnesses to evlog (hooks and MCP server in their settings)."),
    "stats": ("log_commands", "stats",
             "Segments, events, bytes and events by type."),
    "status": ("status_command", "status",
             "Is evlog running and caught up here? The daemon, agents, jobs, recall index, sync, problems."),
    "sync": ("sync_command", "sync",
             "Sync the log with a gateway (several devices, a web view, a team)."),
    "tail": ("log_commands", "tail",
             "Show the newest events of the log (readers take no lock)."),
    "verify": ("log_commands", "verify",
             "Check every line of every segment: checksum, JSON, seq order, names, torn tail."),
    "watch": ("agents_command", "watch",
             "Follow transcript folders and ingest what grows (only the new bytes), until Ctrl-C."),
    "web": ("web_command", "web",
             "Browse sessions, transcripts, MEMORY.md and why each line is there, Dream runs and plots."),
}


def _short_help(first_paragraph: str, limit: int) -> str:
    """What click shows for a command with this help in a list of width ``limit`` (its own truncation)."""
    return click.Command(None, help=first_paragraph).get_short_help_str(limit)


class EvlogGroup(click.Group):
    """The root group: loads a subcommand's module when it is used (``COMMANDS``) and turns
    library errors into clean messages (unless --traceback)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = self.commands.get(cmd_name)
        if cmd is None and cmd_name in COMMANDS:
            module, attr, _help = COMMANDS[cmd_name]
            cmd = getattr(import_module(f"eventlog.cli.{module}"), attr)
            self.commands.setdefault(cmd_name, cmd)  # importing registered it; a caller may have removed it since
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, from ``COMMANDS`` for the modules not imported (click's own layout)."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows = []
        for name in names:
            cmd = self.commands.get(name)
            if cmd is not None and cmd.hidden:
                continue
            rows.append((name, cmd.get_short_help_str(limit) if cmd is not None
                         else _short_help(COMMANDS[name][2], limit)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

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
