"""Shared fixtures: every test gets its own EVLOG_HOME, and helpers to build workspaces."""

from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


sys.path.insert(0, os.path.join(REPO, "tools"))
import real_data as _real_data  # noqa: E402 - tools/ is not a package

# Real third-party transcripts, read in place (never copied into this repo); see tools/real_data.py.
REAL_DATA = _real_data.find() or os.path.normpath(os.path.join(REPO, "..", "shared", "data", "real"))

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
def sync_store(monkeypatch):
    """The CLI's sync commands against one in-memory event store (tests/sync_cli_helpers.py)."""
    from tests.sync_cli_helpers import shared_store

    return shared_store(monkeypatch)


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
