#!/usr/bin/env python3
"""Generate the CLI reference (docs/cli.md) from the commands' own --help.

    .venv/bin/python tools/cli_reference.py           # print the reference
    .venv/bin/python tools/cli_reference.py --write   # replace it in docs/cli.md
    .venv/bin/python tools/cli_reference.py --check   # exit 1 if docs/cli.md is out of date

The reference sits between the ``<!-- cli-reference:start -->`` and ``:end`` markers.
tests/cli/test_docs.py runs the --check, so a command whose help changed fails CI until the
reference is regenerated.
"""

from __future__ import annotations

import os
import sys

import click

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(os.path.dirname(HERE), "docs", "cli.md")
START, END = "<!-- cli-reference:start -->", "<!-- cli-reference:end -->"


def commands(group: click.Group, prefix: list[str]):  # noqa: ANN201
    """(path, command) for every command under ``group``, depth first, in name order."""
    ctx = click.Context(group, info_name=" ".join(prefix))
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if cmd is None or cmd.hidden:
            continue
        yield [*prefix, name], cmd
        if isinstance(cmd, click.Group):
            yield from commands(cmd, [*prefix, name])


def help_text(path: list[str], cmd: click.Command) -> str:
    """The --help output of one command, as a user sees it (80 columns)."""
    ctx = click.Context(cmd, info_name=" ".join(path), terminal_width=80, max_content_width=80,
                        help_option_names=["-h", "--help"])
    return cmd.get_help(ctx)


def reference() -> str:
    """The whole reference section (markdown)."""
    from eventlog.cli import cli

    root = click.Context(cli, info_name="evlog", terminal_width=80, max_content_width=80,
                         help_option_names=["-h", "--help"])
    parts = ["### evlog", "", "```", cli.get_help(root), "```", ""]
    for path, cmd in commands(cli, ["evlog"]):
        parts += [f"### {' '.join(path)}", "", "```", help_text(path, cmd), "```", ""]
    return "\n".join(parts)


def replace_in(text: str, body: str) -> str:
    """Reference text with the block between the markers replaced by ``body``."""
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{body}\n{END}{tail}"


def main(argv: list[str]) -> int:
    body = reference()
    if "--write" in argv or "--check" in argv:
        with open(REFERENCE, encoding="utf-8") as f:
            text = f.read()
        if START not in text or END not in text:
            print(f"docs/cli.md has no {START} ... {END} block", file=sys.stderr)
            return 1
        new = replace_in(text, body)
        if "--check" in argv:
            if new != text:
                print("docs/cli.md is out of date: run tools/cli_reference.py --write", file=sys.stderr)
                return 1
            return 0
        with open(REFERENCE, "w", encoding="utf-8") as f:
            f.write(new)
        return 0
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
