"""The SessionStart cache (``eventlog.app.agents.context_cache``): a hit prints exactly what rendering prints.

The contract: whatever happens to the workspace between two hooks (facts added, hand edits of
the same size with the old mtime put back, a deleted global file, a new or rebuilt recall
index, a torn or foreign cache file), the hook's output equals a fresh render; and when
nothing changed it is served without rendering.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eventlog.app import memory, recall
from eventlog.app.agents import context_cache, hooks
from eventlog.app.agents.context import DEFAULT_CONTEXT_BYTES, memory_context
from eventlog.app.workspace import Workspace, init_workspace
from projections.memory_files import GLOBAL_FILE, project_file
from tests.conftest import REPO

OLD = 10.0  # seconds: mtimes moved this far back
RACY = 0.05  # context_cache.RACY_SECONDS in these tests (the ctime, which utime cannot move back, must age too)


@pytest.fixture(autouse=True)
def short_racy_window(monkeypatch):  # noqa: ANN001, ANN201
    monkeypatch.setattr(context_cache, "RACY_SECONDS", RACY)


def payload(cwd: str) -> bytes:
    return json.dumps({"session_id": "s", "hook_event_name": "SessionStart", "cwd": cwd}).encode()


def age(home: str, seconds: float = OLD, wait: float = RACY) -> None:
    """Every file of the workspace's memory and state made ``seconds`` old (mtime), then ``wait`` for the ctimes."""
    t = time.time() - seconds
    for top in ("memory", "state"):
        for root, _dirs, files in os.walk(os.path.join(home, top)):
            for name in files:
                os.utime(os.path.join(root, name), (t, t))
    time.sleep(wait + 0.02)


def fresh(home: str, cwd: str, budget: int = DEFAULT_CONTEXT_BYTES) -> str:
    """What a SessionStart prints, rendered now without the cache."""
    ctx = memory_context(home, cwd, budget=budget)
    return hooks.hook_output("SessionStart", ctx.text) if ctx.text else ""


def hook(home: str, cwd: str, budget: int = DEFAULT_CONTEXT_BYTES) -> str:
    result = hooks.handle_claude_code(payload(cwd), home=home, budget=budget)
    assert result.notes == []
    return result.stdout


@pytest.fixture
def ws_home(tmp_path):  # noqa: ANN001, ANN201
    home = str(tmp_path / "ws")
    project = str(tmp_path / "proj")
    os.makedirs(project)
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        memory.add(ws, "Tests run with pytest -x", section="Project Context", project=project)
        memory.add(ws, "Prefers short answers", section="Preferences")
    return home, project


def test_an_unchanged_workspace_is_served_from_the_cache_without_rendering(ws_home, monkeypatch) -> None:  # noqa: ANN001
    home, project = ws_home
    age(home)
    first = hook(home, project)
    assert first == fresh(home, project) and "pytest -x" in first
    assert os.path.isfile(context_cache.cache_path(home))

    def no_render(*_a: object, **_k: object) -> str:
        raise AssertionError("rendered although nothing changed")

    monkeypatch.setattr(hooks, "render_session_start", no_render)
    assert hook(home, project) == first


def _leave_a_wal(home: str) -> str:
    """The recall index with a WAL file left beside it, as a daemon or another reader leaves one."""
    import sqlite3

    from projections.recall.files import index_path

    with Workspace.open(home, writable=True) as ws:
        recall.rebuild(ws)
    path = index_path(home)
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA journal_mode=WAL").fetchall()
    writer.execute("SELECT count(*) FROM docs").fetchall()
    reader = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    reader.execute("SELECT count(*) FROM docs").fetchall()
    writer.close()
    reader.close()  # the last connection is read-only: it cannot remove the WAL
    assert os.path.exists(path + "-wal")
    return path + "-wal"


def test_an_index_with_a_wal_left_beside_it_is_still_served_from_the_cache(ws_home, monkeypatch) -> None:  # noqa: ANN001
    home, project = ws_home
    wal = _leave_a_wal(home)
    age(home)
    first = hook(home, project)  # renders: its read-only open of the index touches the WAL's ctime, not a byte
    assert first == fresh(home, project) and "pytest -x" in first and os.path.exists(wal)

    def no_render(*_a: object, **_k: object) -> str:
        raise AssertionError("rendered although nothing changed")

    monkeypatch.setattr(hooks, "render_session_start", no_render)
    assert hook(home, project) == first


def test_a_write_to_the_indexs_wal_is_seen(ws_home) -> None:  # noqa: ANN001
    import sqlite3

    home, project = ws_home
    wal = _leave_a_wal(home)
    age(home)
    first = hook(home, project)
    with Workspace.open(home, writable=True) as ws:
        memory.add(ws, "The staging database is called orca", section="Project Context", project=project)
        recall.index(ws).close()  # the new fact's row goes to the WAL
    db = sqlite3.connect(wal[: -len("-wal")])
    db.execute("PRAGMA wal_autocheckpoint=0").fetchall()
    db.close()
    age(home)
    assert hook(home, project) == fresh(home, project) != first


def test_a_file_changed_a_moment_ago_is_not_cached(ws_home, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(context_cache, "RACY_SECONDS", 2.0)
    home, project = ws_home  # just written: a change in the same clock tick would not show in its stat
    assert hook(home, project) == fresh(home, project)
    assert not os.path.exists(context_cache.cache_path(home))


def test_a_hand_edit_of_the_same_size_with_its_old_mtime_put_back_is_seen(ws_home) -> None:  # noqa: ANN001
    home, project = ws_home
    age(home)
    hook(home, project)
    path = os.path.join(home, project_file(project))
    st = os.stat(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace("pytest -x", "pytest -q"))  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the same mtime: the ctime still moves
    got = hook(home, project)
    assert "pytest -q" in got and got == fresh(home, project)


@pytest.mark.parametrize("torn", [b"", b"{", b"[1, 2]", b'{"format": 1, "entries": {"k": 3}}', b"\xff\xfe"])
def test_a_torn_or_foreign_cache_is_a_miss_and_is_replaced(ws_home, torn) -> None:  # noqa: ANN001
    home, project = ws_home
    age(home)
    with open(context_cache.cache_path(home), "wb") as f:
        f.write(torn)
    assert hook(home, project) == fresh(home, project)
    with open(context_cache.cache_path(home), encoding="utf-8") as f:
        assert json.load(f)["format"] == context_cache.FORMAT


def test_an_entry_whose_inputs_changed_is_neither_served_nor_kept(ws_home) -> None:  # noqa: ANN001
    home, project = ws_home
    age(home)
    hook(home, project)
    hook(home, str(os.path.dirname(project)))  # a second scope: one more entry
    with Workspace.open(home, writable=True) as ws:
        memory.add(ws, "Deploys on Fridays are banned", section="Project Context", project=project)
    age(home)
    got = hook(home, project)
    assert "Fridays" in got and got == fresh(home, project)
    with open(context_cache.cache_path(home), encoding="utf-8") as f:
        entries = json.load(f)["entries"]
    assert all("Fridays" in e["stdout"] or project not in k for k, e in entries.items())


def test_the_cache_keeps_at_most_max_entries(ws_home, tmp_path) -> None:  # noqa: ANN001
    home, project = ws_home
    age(home)
    for budget in range(500, 500 + 10 * (context_cache.MAX_ENTRIES + 3), 10):
        hook(home, project, budget)
    with open(context_cache.cache_path(home), encoding="utf-8") as f:
        assert len(json.load(f)["entries"]) == context_cache.MAX_ENTRIES


def test_erase_deletes_the_cache(ws_home) -> None:  # noqa: ANN001
    from eventlog.app.erase import Target, erase

    home, project = ws_home
    with Workspace.open(home, writable=True) as ws:
        fid = memory.add(ws, "Allergic to the hazelnut-praline dessert", section="Preferences")
    age(home)
    assert "hazelnut-praline" in hook(home, project)
    assert os.path.isfile(context_cache.cache_path(home))
    with Workspace.open(home, writable=True) as ws:
        report = erase(ws, Target("fact", fid))
    assert not os.path.exists(context_cache.cache_path(home)) and context_cache.CACHE_FILE in report.removed_files


def test_a_hit_in_a_hook_process_imports_neither_the_secrets_scanner_nor_sqlite(ws_home) -> None:  # noqa: ANN001
    home, project = ws_home
    age(home, wait=2.0)  # the hook process has the real window
    probe = ("import sys, atexit\n"
             "atexit.register(lambda: sys.stderr.write('HEAVY=%s\\n' % sorted(m for m in ('eventlog.secrets', "
             "'sqlite3', 'click', 'eventlog.log') if m in sys.modules)))\n"
             "from eventlog.entry import main\n"
             f"sys.argv = ['evlog', '--home', {home!r}, 'hook', 'claude-code']\n"
             "main()\n")
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("EVLOG_HEADLESS", None)
    runs = [subprocess.run([sys.executable, "-c", probe], input=payload(project), capture_output=True, timeout=60,
                           env=env) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0] and runs[0].stdout == runs[1].stdout == \
        (fresh(home, project) + "\n").encode()
    assert b"HEAVY=['eventlog.secrets']" in runs[0].stderr  # the miss rendered (no recall index: no SQLite)
    assert b"HEAVY=[]" in runs[1].stderr  # the hit did not
    with Workspace.open(home, writable=True) as ws:
        recall.rebuild(ws)  # an index: a miss reads each fact's id and day from it
    indexed = subprocess.run([sys.executable, "-c", probe], input=payload(project), capture_output=True, timeout=60,
                             env=env)
    assert indexed.returncode == 0 and indexed.stdout == (fresh(home, project) + "\n").encode()
    assert b"[fact-" in indexed.stdout and b"HEAVY=['eventlog.secrets', 'sqlite3']" in indexed.stderr


#: Modules a bare interpreter does not load and a SessionStart answered from the cache must not either (issue 25:
#: each costs a sizeable part of ``python -c pass``; ``dataclasses`` brings ``inspect``, ``ast`` and ``dis``).
NOT_ON_A_HIT = ("dataclasses", "inspect", "typing", "socket", "configparser", "xxhash", "string", "msgspec", "click")


def test_a_hook_process_loads_only_light_standard_modules(ws_home) -> None:  # noqa: ANN001
    home, project = ws_home
    age(home, wait=2.0)  # the hook process has the real window
    probe = ("import sys, atexit\n"
             "before = set(sys.modules)\n"
             f"atexit.register(lambda: sys.stderr.write('NEW=%s\\n' % sorted(set(sys.modules) - before & set({NOT_ON_A_HIT!r}))))\n"
             "from eventlog.entry import main\n"
             f"sys.argv = ['evlog', '--home', {home!r}, 'hook', 'claude-code']\n"
             "main()\n")
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("EVLOG_HEADLESS", None)
    runs = [subprocess.run([sys.executable, "-c", probe], input=payload(project), capture_output=True, timeout=60,
                           env=env) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0] and runs[1].stdout == (fresh(home, project) + "\n").encode()
    assert b"NEW=[]" in runs[1].stderr, runs[1].stderr
    assert b"NEW=[]" in runs[0].stderr, runs[0].stderr  # the miss renders, and without a recall index reads none


def test_a_miss_compiles_only_the_anchor_scan_of_the_secrets_scanner(ws_home) -> None:  # noqa: ANN001
    """Rendering redacts the memory files and the block (I24) but compiles no shape the text does not call for:
    compiling every pattern of ``eventlog.secrets`` (and recall's CJK class) at import was a third of ``python -c
    pass`` (issue 25)."""
    home, project = ws_home
    probe = ("import sys, atexit\n"
             "def compiled():\n"
             "    from eventlog.lazy_pattern import LazyPattern\n"
             "    return sorted(f'{m}.{n}' for m in ('eventlog.secrets', 'projections.recall.text') if m in sys.modules\n"
             "                  for n, v in vars(sys.modules[m]).items() if isinstance(v, LazyPattern) and v.compiled)\n"
             "atexit.register(lambda: sys.stderr.write('COMPILED=%s\\n' % compiled()))\n"
             "from eventlog.entry import main\n"
             f"sys.argv = ['evlog', '--home', {home!r}, 'hook', 'claude-code']\n"
             "main()\n")
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("EVLOG_HEADLESS", None)
    context_cache.drop(home)
    run = subprocess.run([sys.executable, "-c", probe], input=payload(project), capture_output=True, timeout=60, env=env)
    assert run.returncode == 0 and run.stdout == (fresh(home, project) + "\n").encode()
    assert b"COMPILED=['eventlog.secrets._ANCHOR', 'eventlog.secrets._WRAP']" in run.stderr, run.stderr


# --- a property: over random workspaces and changes, the hook prints what a fresh render prints -----------------

STEP = st.one_of(
    st.tuples(st.just("fact"), st.sampled_from(["proj", "global", "other"]), st.text(min_size=1, max_size=40)),
    st.tuples(st.just("hand-edit"), st.sampled_from(["proj", "global"]), st.text(min_size=1, max_size=20)),
    st.tuples(st.just("same-size-edit"), st.sampled_from(["proj", "global"]), st.just("")),
    st.tuples(st.just("delete"), st.sampled_from(["proj", "global"]), st.just("")),
    st.tuples(st.just("index"), st.just(""), st.just("")),
    st.tuples(st.just("budget"), st.sampled_from(["600", "2000", "8000"]), st.just("")),
    st.tuples(st.just("cwd"), st.sampled_from(["proj", "proj/src", "other", "elsewhere"]), st.just("")),
)


def _apply(home: str, root: str, step: tuple[str, str, str], state: dict[str, str]) -> None:
    kind, where, text = step
    target = {"proj": os.path.join(root, "proj"), "other": os.path.join(root, "other"), "global": ""}.get(where, "")
    path = os.path.join(home, project_file(target) if target else GLOBAL_FILE)
    if kind == "fact" and text.strip():
        with Workspace.open(home, writable=True) as ws:
            memory.add(ws, text, section="Project Context" if target else "Preferences", project=target)
    elif kind in ("hand-edit", "same-size-edit") and os.path.isfile(path):
        st_ = os.stat(path)
        with open(path, encoding="utf-8") as f:
            body = f.read()
        body = body.replace("a", "b", 1) if kind == "same-size-edit" else body + f"- {text}\n"
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
        os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))
    elif kind == "delete" and os.path.isfile(path):
        os.unlink(path)
    elif kind == "index":
        with Workspace.open(home, writable=True) as ws:
            recall.rebuild(ws)
    elif kind == "budget":
        state["budget"] = where
    elif kind == "cwd":
        state["cwd"] = where


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=8))
def test_over_random_changes_the_hook_prints_what_a_fresh_render_prints(tmp_path_factory, steps) -> None:  # noqa: ANN001
    root = str(tmp_path_factory.mktemp("cc"))
    home = os.path.join(root, "ws")
    for d in ("proj/src", "other", "elsewhere"):
        os.makedirs(os.path.join(root, d))
    init_workspace(home)
    with Workspace.open(home, writable=True) as ws:
        memory.add(ws, "Tests run with pytest -x", section="Project Context", project=os.path.join(root, "proj"))
        memory.add(ws, "Prefers short answers", section="Preferences")
    state = {"budget": "8000", "cwd": "proj"}
    for step in steps:
        _apply(home, root, step, state)
        age(home)  # old enough to be cached: only the stat signature can tell a change now
        cwd, budget = os.path.join(root, state["cwd"]), int(state["budget"])
        for _ in range(2):  # a miss (or a hit), then surely a hit
            assert hook(home, cwd, budget) == fresh(home, cwd, budget), step
    with open(context_cache.cache_path(home), encoding="utf-8") as f:
        assert json.load(f)["entries"]  # entries were kept, so the second call of each step was a hit


def test_threads_storing_at_once_write_separate_temporary_files(ws_home, monkeypatch) -> None:  # noqa: ANN001
    """The daemon serves hooks from threads: each store writes its own temporary file, then renames it."""
    import threading

    home, project = ws_home
    age(home)
    budgets = list(range(600, 600 + 10 * 6, 10))
    real_replace, sources, together = os.replace, [], threading.Barrier(len(budgets), timeout=30)

    def replace(src, dst):  # noqa: ANN001, ANN202 - every writer has written its file before any renames
        if dst == context_cache.cache_path(home):
            sources.append(src)
            together.wait()
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    threads = [threading.Thread(target=hook, args=(home, project, b)) for b in budgets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(sources) == len(budgets) and len(set(sources)) == len(budgets)
    monkeypatch.setattr(os, "replace", real_replace)
    with open(context_cache.cache_path(home), encoding="utf-8") as f:
        assert json.load(f)["format"] == context_cache.FORMAT
    assert [n for n in os.listdir(os.path.join(home, "state")) if n.endswith(".tmp")] == []
    for b in budgets:
        assert hook(home, project, b) == fresh(home, project, b)
