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
