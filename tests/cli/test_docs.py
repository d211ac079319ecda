"""Docs and help are tested artefacts: every command has help, is in the CLI reference
(docs/cli.md), the reference matches the commands' real --help, and the README's commands run."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

sys.path.insert(0, os.path.join(REPO, "tools"))
import cli_reference  # noqa: E402

from eventlog.cli import cli  # noqa: E402

ALL = list(cli_reference.commands(cli, ["evlog"]))


def readme(name: str = "README.md") -> str:
    with open(os.path.join(REPO, name), encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("path,cmd", ALL, ids=[" ".join(p) for p, _ in ALL])
def test_every_command_has_help_and_is_in_the_reference(path, cmd):
    assert (cmd.help or "").strip(), f"{' '.join(path)} has no help text"
    assert f"### {' '.join(path)}" in readme(os.path.join("docs", "cli.md"))


def test_readme_cli_reference_is_up_to_date():
    assert cli_reference.main(["--check"]) == 0, "run: .venv/bin/python tools/cli_reference.py --write"


def test_readme_gives_the_one_command_to_run_and_the_one_to_test():
    text = readme()
    assert "bash tools/demo.sh" in text and "bash tools/test.sh" in text
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as f:
        assert "bash tools/test.sh" in f.read(), ".ci/run must call the README's test command"


def test_the_cli_does_not_import_the_anthropic_sdk():
    code = "import sys; from eventlog.cli import cli; assert 'anthropic' not in sys.modules, 'anthropic imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_readmes_library_example_runs(tmp_path):
    """The README's Library API example, run as written (its workspace path moved into tmp_path)."""
    text = readme()
    section = text[text.index("## Library API"):]
    code = section[section.index("```python\n") + len("```python\n"):]
    code = code[:code.index("```")]
    assert "import eventlog" in code and "eventlog.open_workspace" in code
    home = str(tmp_path / "ws")
    script = tmp_path / "example.py"
    script.write_text(code.replace('"/tmp/ws"', repr(home)))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "The user prefers pytest over unittest." in out.stdout
    assert out.stderr == ""


def _readme_command_lines(text: str) -> list[str]:
    """Every ``evlog ...`` command line of the README's shell blocks (comments and pipes cut off)."""
    lines, in_sh = [], False
    for raw in text.splitlines():
        if raw.startswith("```"):
            in_sh = raw.strip() in ("```sh", "```bash", "```console")
            continue
        if not in_sh:
            continue
        line = raw.strip().lstrip("$ ").split("  #")[0].split(" # ")[0]
        for part in line.replace("&&", "|").replace(";", "|").split("|"):
            part = part.strip()
            if part.startswith("evlog "):
                lines.append(part)
    return lines


def _check_command_line(line: str) -> str | None:
    """Why ``line`` is not a valid evlog invocation (unknown command or option), or None."""
    import shlex

    import click

    words = shlex.split(line)[1:]
    cmd: click.Command = cli
    ctx = click.Context(cli, info_name="evlog")
    known = {o for p in cli.params for o in getattr(p, "opts", [])}
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("-"):
            opt = w.split("=")[0]
            param = next((p for p in cmd.params if opt in getattr(p, "opts", []) + getattr(p, "secondary_opts", [])),
                         None)
            if param is None and opt not in known and opt not in ("-h", "--help"):
                return f"{line!r}: {opt} is not an option of {cmd.name}"
            if param is not None and not getattr(param, "is_flag", False) and "=" not in w and param.nargs == 1:
                i += 1  # the option's value
        elif isinstance(cmd, click.Group):
            sub = cmd.get_command(ctx, w)
            if sub is None:
                return f"{line!r}: {w} is not a command of {cmd.name}"
            known |= {o for p in cmd.params for o in getattr(p, "opts", [])}
            cmd = sub
        i += 1
    return None


def test_every_command_line_in_the_readme_is_real():
    """Each ``evlog ...`` line in the README's shell blocks names a real command with real options."""
    lines = _readme_command_lines(readme())
    assert len(lines) > 20, lines
    problems = [p for p in map(_check_command_line, lines) if p]
    assert problems == []


def test_the_readme_command_check_can_fail():
    assert _check_command_line("evlog sessions --no-such-option") is not None
    assert _check_command_line("evlog no-such-command") is not None
    assert _check_command_line("evlog recall pytest --scope messages -n 20") is None
