"""Shared fixtures: every test gets its own EVLOG_HOME, and helpers to build workspaces."""

from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def _find_real_data() -> str:
    """Real third-party transcripts, read in place (never copied into this repo).

    ``$EVLOG_REAL_DATA`` if set, else the first ``shared/data/real`` found next to the
    repository or above it (a clone elsewhere still finds the team's shared folder).
    """
    if os.environ.get("EVLOG_REAL_DATA"):
        return os.environ["EVLOG_REAL_DATA"]
    here = REPO
    for _ in range(5):
        candidate = os.path.join(os.path.dirname(here), "shared", "data", "real")
        if os.path.isdir(candidate):
            return candidate
        here = os.path.dirname(here)
    return os.path.normpath(os.path.join(REPO, "..", "shared", "data", "real"))


REAL_DATA = _find_real_data()

sys._called_from_test = True  # type: ignore[attr-defined]  # plugins stay off under test


@pytest.fixture(autouse=True)
def evlog_home(tmp_path, monkeypatch):
    """Point EVLOG_HOME at a fresh directory so no test touches ~/.evlog."""
    home = tmp_path / "home"
    monkeypatch.setenv("EVLOG_HOME", str(home))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return home


@pytest.fixture
def workspace(evlog_home):
    """An initialised workspace (default settings); yields its home path."""
    from eventlog.app.workspace import init_workspace

    init_workspace(str(evlog_home))
    return str(evlog_home)


@pytest.fixture
def cli_runner():
    """A click runner with stdout and stderr kept apart."""
    from click.testing import CliRunner

    return CliRunner()


def real_data(*parts: str) -> str:
    """Path of a real transcript; skips the test (with the reason) when it is absent.

    Under CI (``CI=true``) a missing transcript fails the test instead: CI must never pass
    by skipping the real inputs (.ci/run points ``EVLOG_REAL_DATA`` at them).
    """
    path = os.path.join(REAL_DATA, *parts)
    if not os.path.exists(path):
        why = f"real data not available at {path} (see ../shared/data/real/README.md; or set EVLOG_REAL_DATA)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(why)
        pytest.skip(why)
    return path
