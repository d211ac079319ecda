"""The ``evlog`` root group is lazy (issue 25, lever 0): ``--help`` imports no command module,
a subcommand imports its own, and the help users see is the help the commands define."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from importlib import import_module

import click

import eventlog.cli
from eventlog.cli import COMMANDS, cli
from tests.conftest import REPO

HEAVY = ("eventlog.app", "eventlog.writer", "eventlog.log", "eventlog.ingest", "eventlog.app.agents", "projections",
         "processors")


def _loaded_after(args: list[str]) -> tuple[list[str], str]:
    """The evlog/projections/processors modules a fresh ``evlog ARGS`` imported, and its stdout."""
    code = ("import json, sys\nfrom eventlog.cli import main\nsys.argv = ['evlog', *json.loads(sys.argv[1])]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('eventlog', 'projections', 'processors'))))\n")
    res = subprocess.run([sys.executable, "-c", code, json.dumps(args)], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=REPO, COLUMNS="80"), cwd=REPO, timeout=120)
    return json.loads(res.stderr.strip().splitlines()[-1]), res.stdout


def _all_commands_loaded() -> None:
    for info in pkgutil.iter_modules(eventlog.cli.__path__):
        import_module(f"eventlog.cli.{info.name}")


def test_help_imports_no_command_module():
    loaded, out = _loaded_after(["--help"])
    assert "Commands:" in out and "replay" in out
    assert [m for m in loaded if m.startswith(HEAVY) or m.startswith("eventlog.cli.")] == [], loaded


def test_a_subcommand_imports_its_own_module_only():
    loaded, out = _loaded_after(["hook", "--help"])
    assert "claude-code" in out
    commands = {m for m in loaded if m.startswith("eventlog.cli.") and m.endswith(("_command", "_commands"))}
    assert commands == {"eventlog.cli.agents_command"}, commands


def test_the_table_names_every_command_its_module_and_its_help():
    _all_commands_loaded()
    defined = {name: cmd for name, cmd in cli.commands.items() if not cmd.hidden}
    assert sorted(defined) == sorted(COMMANDS), "add the new command to eventlog.cli.COMMANDS (or drop it there)"
    for name, (module, attr, first_paragraph) in COMMANDS.items():
        cmd = defined[name]
        assert getattr(import_module(f"eventlog.cli.{module}"), attr) is cmd, name
        for limit in (20, 45, 60, 200):
            assert click.Command(None, help=first_paragraph).get_short_help_str(limit) == cmd.get_short_help_str(limit), (name, limit)


def test_help_from_the_table_equals_help_from_the_commands():
    _loaded, lazy = _loaded_after(["--help"])
    _all_commands_loaded()
    ctx = click.Context(cli, info_name="evlog", terminal_width=78, max_content_width=80,  # COLUMNS=80 less 2
                        help_option_names=["-h", "--help"])
    assert lazy == cli.get_help(ctx) + "\n"


def test_a_command_removed_from_the_group_is_found_again():
    ctx = click.Context(cli)
    sync = cli.get_command(ctx, "sync")
    assert sync is not None
    cli.commands.pop("sync")
    try:
        assert cli.get_command(ctx, "sync") is sync
    finally:
        cli.commands.setdefault("sync", sync)
    assert cli.get_command(ctx, "no-such-command") is None
