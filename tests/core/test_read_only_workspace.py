"""A workspace that cannot be written (read-only mount, no permission): readers still work.

Tests run as root, and root ignores permission bits, so the workspace is made truly read-only:
each check runs in a private mount namespace (``unshare -m``) where the workspace is bind-mounted
read-only; every write fails with EROFS, as on a read-only disk or backup. ``evlog recall``,
``sessions``, ``memory`` and the MCP read tools and resources answer; write tools fail with a
clear message, never a traceback; nothing is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from eventlog.app import memory, recall
from eventlog.app.workspace import Workspace
from eventlog.ingest import ingest_paths
from projections.recall.workspace import index_path
from tests.conftest import REPO, real_data

EVLOG = os.path.join(os.path.dirname(sys.executable), "evlog")
MOUNT_RO = 'mount --bind "$RO" "$RO" && mount -o remount,bind,ro "$RO" "$RO" && exec "$@"'


def can_mount_read_only() -> bool:
    try:
        r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", MOUNT_RO, "sh", "true"],
                           env={**os.environ, "RO": "/tmp"}, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0


pytestmark = pytest.mark.skipif(not can_mount_read_only(),
                                reason="needs 'unshare -m' and bind mounts (root with CAP_SYS_ADMIN)")


def read_only(home: str, *cmd: str) -> subprocess.CompletedProcess:
    """Run ``cmd`` with ``home`` mounted read-only (only for this command)."""
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", MOUNT_RO, "sh", *cmd],
                          env={**os.environ, "RO": home, "EVLOG_HOME": home}, capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def snapshot(home: str) -> dict[str, tuple[int, int]]:
    out = {}
    for root, _dirs, names in os.walk(home):
        for n in names:
            p = os.path.join(root, n)
            st = os.stat(p)
            out[os.path.relpath(p, home)] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture
def filled(workspace, tmp_path) -> str:
    """A workspace with a session, facts and a recall index, then more events the index has not seen."""
    with Workspace.open(workspace, writable=True) as ws:
        ingest_paths(ws.log, [real_data("claude-spotter", "short.jsonl")])
        memory.add(ws, "The user drinks green tea in the morning")
        recall.rebuild(ws)
        memory.add(ws, "The user keeps a rooibos stash", section="Preferences")  # after the index
    return workspace


def test_recall_sessions_and_memory_work_on_a_read_only_workspace(filled) -> None:
    before = snapshot(filled)
    r = read_only(filled, EVLOG, "recall", "tea")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "The user drinks green [tea]" in r.stdout
    for cmd in (["sessions"], ["memory"], ["memory", "recall", "rooibos"]):
        r = read_only(filled, EVLOG, *cmd)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (cmd, r.stderr)
    assert "rooibos" in r.stdout, "the index is caught up in memory when it cannot be written"
    assert snapshot(filled) == before


def test_recall_without_an_index_on_a_read_only_workspace_builds_one_in_memory(filled) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(index_path(filled) + suffix):
            os.remove(index_path(filled) + suffix)
    r = read_only(filled, EVLOG, "recall", "--json", "tea")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert any("green tea" in json.loads(line)["text"] for line in r.stdout.splitlines())
    assert "read-only" in r.stderr
    assert not os.path.exists(index_path(filled))


MCP = textwrap.dedent("""
    import json, sys
    from eventlog.app.agents.mcp import Backend
    b = Backend(sys.argv[1])
    out = {}
    for name, call in [("recall", lambda: b.call(b.recall, "tea")), ("sessions", lambda: b.call(b.sessions)),
                       ("why", lambda: b.call(b.why, "green tea")), ("memory", lambda: b.memory_file("")),
                       ("projects", lambda: b.projects()),
                       ("remember", lambda: b.call(b.remember, "I like oolong too")),
                       ("forget", lambda: b.call(b.forget, None, "green tea"))]:
        try:
            out[name] = {"ok": json.loads(json.dumps(call(), default=str))}
        except Exception as e:
            out[name] = {"error": type(e).__name__, "text": str(e)}
    print(json.dumps(out))
""")


def test_mcp_read_tools_work_and_write_tools_say_the_workspace_is_read_only(filled) -> None:
    before = snapshot(filled)
    r = read_only(filled, sys.executable, "-c", MCP, filled)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for name in ("recall", "sessions", "why", "memory", "projects"):
        assert "ok" in out[name], (name, out[name])
    assert any("green tea" in h["text"] for h in out["recall"]["ok"]["hits"])
    assert "green tea" in out["memory"]["ok"]
    for name in ("remember", "forget"):
        assert out[name]["error"] == "ToolError" and "read-only" in out[name]["text"].lower(), out[name]
    assert snapshot(filled) == before


def test_the_prompt_hook_reads_the_recall_index_of_a_read_only_workspace(filled) -> None:
    payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": "what tea do I drink?", "cwd": "/tmp"})
    r = read_only(filled, "sh", "-c", f"echo '{payload}' | {EVLOG} hook claude-code")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert "green tea" in json.loads(r.stdout)["hookSpecificOutput"]["additionalContext"]
