"""The event log on a real 3-node MariaDB Galera cluster, with a database node and a gateway killed mid-sync.

``tools/galera.sh`` starts the cluster (its own data directories under the test's temporary
directory, loopback ports from ``GALERA_BASE_PORT``); ``tools/bench_sync_events.galera_run``
runs three gateway processes, one per node, and simulated devices pushing and pulling, kills
node 2 and gateway 3 (``kill -9``) at a third of the envelopes and restarts node 2 at two thirds.
Nothing may be lost or duplicated, every device must end with its account's whole set, and the
three nodes must hold the same rows.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO

GALERA = Path(REPO) / "tools" / "galera.sh"
PROVIDER = "/usr/lib/galera/libgalera_smm.so"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (os.path.exists(PROVIDER) and shutil.which("mariadbd") and shutil.which("rsync")),
                       reason="needs Debian's galera-4, mariadb-server and rsync"),
]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_sync_events", Path(REPO) / "tools" / "bench_sync_events.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def cluster(monkeypatch):
    monkeypatch.setenv("GALERA_BASE_PORT", os.environ.get("EVLOG_TEST_GALERA_BASE_PORT", "13400"))
    # Not under pytest's tmp_path: its parents are private to this user, and the nodes may run as mysql.
    directory = tempfile.mkdtemp(prefix="evlog-galera-")
    try:
        subprocess.run([str(GALERA), "start", directory], check=True, capture_output=True, timeout=600)
        yield directory
    finally:
        subprocess.run([str(GALERA), "stop", directory], capture_output=True, timeout=300)
        shutil.rmtree(directory, ignore_errors=True)


def test_killing_a_node_and_a_gateway_mid_sync_loses_nothing_and_devices_converge(cluster):
    got = _bench().galera_run(cluster, accounts=2, devices=3, events=400, batch=40, timeout=600)
    assert got["errors"] == []
    assert got["lost"] == 0 and got["duplicated_rows"] == 0 and got["duplicated_deliveries"] == 0
    assert got["converged"] == got["devices"] == 6
    assert got["nodes_agree"], got["node_counts"]
    assert got["actions"][0].startswith("kill -9 node 2 and gateway 3")
