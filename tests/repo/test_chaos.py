"""The chaos run (issue 19, "Done means"): every process at once, random ``kill -9``, nothing lost.

``tools/chaos.py`` runs the daemon, ``evlog watch``, hook loops, an MCP loop, ``evlog web``,
repeated ingests, a session-store agent, sync push/pull (with ``EVLOG_TEST_MYSQL_URL``) and
``evlog erase`` against one workspace for 45 s while killing a random one every 0.3-1.5 s;
then every acknowledged message must be in the log exactly once (erased ones nowhere) and
``verify`` and ``replay --check`` clean. Erase is on whenever this checkout has the
``erase`` command.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from eventlog.cli import cli
from tests.conftest import REPO
from tests.mysql_helpers import MYSQL_URL

pytestmark = pytest.mark.slow  # a minute of real processes


def test_every_process_at_once_with_random_kills_loses_and_duplicates_nothing(tmp_path):
    has_erase = "erase" in cli.list_commands(None)  # the root group is lazy: cli.commands holds only what was used
    args = [sys.executable, os.path.join(REPO, "tools", "chaos.py"), "--seconds", "45", "--seed", "20261201",
            "--json", "--keep", str(tmp_path / "chaos"), *([] if has_erase else ["--no-erase"])]
    res = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False,
                         env=dict(os.environ, PYTHONPATH=REPO))
    assert res.stdout.strip(), res.stderr[-3000:]
    report = json.loads(res.stdout.strip().splitlines()[-1])
    assert report["problems"] == [], report
    assert res.returncode == 0
    assert report["lost"] == 0 and report["duplicated"] == 0 and report["erased_left"] == 0
    assert report["verify"] and report["replay_check"]
    acked = report["acknowledged"]
    assert min(acked[w] for w in ("agent", "mcp", "watch", "hook", "ingest")) > 0, acked
    assert sum(report["kills"].values()) >= 20, report["kills"]
    assert report["sync"] == bool(MYSQL_URL) and (not MYSQL_URL or acked["device"] > 0)
    assert report["erase"] == has_erase, "erase is in this checkout but the run erased nothing"
    assert report["web"].get("200", 0) > 0, report["web"]
