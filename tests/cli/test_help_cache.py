"""``evlog --help`` from ``eventlog.help_cache`` (issue 25): the same bytes as click prints, without importing click."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import click
import pytest

from eventlog import help_cache
from tests.conftest import REPO

PROBE = ("import sys, atexit\n"
         "atexit.register(lambda: sys.stderr.write('CLICK=%s\\n' % ('click' in sys.modules)))\n"
         "from eventlog.entry import main\n"
         "main()\n")


def _run(code: str, args: list[str], cache: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    os.makedirs(os.path.join(cache, "state"), exist_ok=True)  # a workspace's state folder: where the help is kept
    environ.update(PYTHONPATH=REPO, EVLOG_HOME=cache, **env)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, timeout=120, env=environ,
                          stdin=subprocess.DEVNULL)


def _click(args: list[str], cache: str, **env: str) -> subprocess.CompletedProcess:
    return _run("from eventlog.cli import main; main()", args, cache, **env)


@pytest.mark.parametrize("columns", ["50", "61", "80", "132", ""])
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_the_cached_help_is_clicks_help_byte_for_byte_without_click(tmp_path, columns, flag) -> None:  # noqa: ANN001
    cache = str(tmp_path / "cache")
    env = {"COLUMNS": columns} if columns else {}
    want = _click([flag], cache, **env)
    first = _run(PROBE, [flag], cache, **env)  # a miss: click prints it, the cache keeps it
    second = _run(PROBE, [flag], cache, **env)  # a hit
    assert want.returncode == first.returncode == second.returncode == 0
    assert first.stdout == second.stdout == want.stdout and b"Commands:" in want.stdout
    assert b"CLICK=True" in first.stderr and b"CLICK=False" in second.stderr
    assert os.listdir(os.path.join(cache, "state", "help")) == [f"root-help-{help_cache.help_width(env)}.txt"]


def test_another_width_or_language_is_another_entry(tmp_path) -> None:  # noqa: ANN001
    cache = str(tmp_path / "cache")
    wide = _run(PROBE, ["--help"], cache, COLUMNS="132")
    narrow = _run(PROBE, ["--help"], cache, COLUMNS="60")
    assert wide.stdout != narrow.stdout and b"CLICK=True" in narrow.stderr
    french = _run(PROBE, ["--help"], cache, COLUMNS="60", LANGUAGE="fr")
    assert b"CLICK=True" in french.stderr and french.stdout == _click(["--help"], cache, COLUMNS="60",
                                                                      LANGUAGE="fr").stdout


def test_a_hit_prints_what_the_cache_holds_and_a_changed_key_is_a_miss(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("EVLOG_HOME", str(tmp_path / "cache"))
    (tmp_path / "cache" / "state").mkdir(parents=True)
    source = tmp_path / "cli.py"
    source.write_text("x = 1\n")
    monkeypatch.setattr(help_cache, "_CLI_SOURCE", str(source))
    monkeypatch.setattr(help_cache, "RACY_SECONDS", 0.0)  # the racy window has its own test
    text, slot = help_cache.lookup()
    assert text is None and help_cache.store(slot, "Usage: evlog [OPTIONS]\n")
    assert help_cache.lookup()[0] == "Usage: evlog [OPTIONS]\n"
    source.write_text("x = 22\n")  # the root group changed: its stat did
    assert help_cache.lookup()[0] is None


def test_a_torn_foreign_or_racy_cache_is_a_miss(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("EVLOG_HOME", str(tmp_path / "cache"))
    (tmp_path / "cache" / "state").mkdir(parents=True)
    source = tmp_path / "cli.py"
    source.write_text("x = 1\n")
    monkeypatch.setattr(help_cache, "_CLI_SOURCE", str(source))
    _text, slot = help_cache.lookup()
    assert not help_cache.store(slot, "Usage\n")  # changed a moment ago: a change in the same tick would not show
    monkeypatch.setattr(help_cache, "RACY_SECONDS", 0.0)
    assert not help_cache.store(slot, "Usage: \u00e9vlog\n")  # not ASCII: a stream's encoding could change it
    assert help_cache.store(slot, "Usage\n")
    with open(slot.path, "r+b") as f:
        f.truncate(len(slot.key) - 3)
    assert help_cache.lookup()[0] is None
    with open(slot.path, "wb") as f:
        f.write(slot.key.encode() + b"\nUsage \xff\n")
    assert help_cache.lookup()[0] is None


@pytest.mark.parametrize("env", [{}, {"COLUMNS": "100"}, {"COLUMNS": "55", "LINES": "20"}, {"COLUMNS": "10"},
                                 {"COLUMNS": "x"}, {"COLUMNS": "-3"}, {"LINES": "30"}, {"COLUMNS": "79"}])
def test_the_width_is_the_width_click_formats_for(monkeypatch, env) -> None:  # noqa: ANN001
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert help_cache.help_width() == click.formatting.HelpFormatter().width == \
        max(min(shutil.get_terminal_size().columns, 80) - 2, 50)


def test_the_key_names_every_click_source_file() -> None:
    key, stats = help_cache.help_key(78)
    files = [n for n in os.listdir(os.path.dirname(click.__file__)) if n.endswith(".py")]
    assert all(os.path.join(os.path.dirname(click.__file__), n) in key for n in files) and len(stats) == len(files) + 1


def test_without_a_workspace_the_help_is_printed_and_nothing_is_written(tmp_path) -> None:  # noqa: ANN001
    user = tmp_path / "user"  # the user's home directory: ~/.evlog does not exist yet
    user.mkdir()
    environ = {k: v for k, v in os.environ.items()
               if k not in ("COLUMNS", "LINES", "EVLOG_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")}
    environ.update(PYTHONPATH=REPO, HOME=str(user))
    for _ in range(2):
        res = subprocess.run([sys.executable, "-c", PROBE, "--help"], capture_output=True, timeout=120, env=environ,
                             stdin=subprocess.DEVNULL)
        assert res.returncode == 0 and b"Commands:" in res.stdout and b"CLICK=True" in res.stderr
    assert list(user.iterdir()) == []  # I22: nothing outside a workspace (no ~/.cache), and --help makes none
