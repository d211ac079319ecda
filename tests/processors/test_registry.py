"""The processor registry (issue 20, item 1): every job declared once, everything else derived from it.

Adding a processor is one file plus one ``register`` line (``tests/example_processor.py``):
it then runs with ``evlog run``, in the daemon and in ``evlog offsets``, in-process and as
a package's ``evlog.processors`` entry point.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import threading

import pytest

import processors
from eventlog.app.workspace import DEFAULT_SCHEDULE, Workspace, init_workspace
from eventlog.cli import cli
from eventlog.errors import ConfigError
from eventlog.events import HistoryAppended, MessageAppended
from processors import registry
from processors.daemon import EXTERNAL_JOBS, JOBS, job_summary, run_daemon
from processors.llm import OfflineExtractor
from processors.registry import Job, Report, RunOptions
from tests import example_processor
from tests.conftest import REPO

BUILTINS = ["snapshot", "digest", "archive", "consolidate", "autocompact", "dream", "recall", "embed", "watch"]


@pytest.fixture
def todo():
    """The example processor, registered with its one line (and taken out again after the test)."""
    registry.register(example_processor.JOB)
    yield example_processor.JOB
    registry.unregister("todo")


def messages(key: str, texts: list[str]) -> list[MessageAppended]:
    return [MessageAppended(session_key=key, message_id=str(i), role="user", content=t,
                            timestamp=f"2026-11-01T10:00:{i:02d}Z") for i, t in enumerate(texts)]


def test_the_built_ins_are_registered_once_and_everything_is_derived_from_them():
    assert [j.name for j in registry.jobs()][: len(BUILTINS)] == BUILTINS
    assert JOBS == ("snapshot", "digest", "autocompact", "dream", "archive", "recall", "embed", "watch")
    assert EXTERNAL_JOBS == ("watch",)
    assert registry.model_jobs() == ("consolidate", "autocompact", "dream")
    assert registry.log_inputs() == {"snapshot": frozenset({"message.appended"}),
                                     "digest": frozenset({"diary.appended", "diary.lines"})}
    assert DEFAULT_SCHEDULE == {"snapshot": 300.0, "digest": 900.0, "archive": 86400.0, "autocompact": 300.0,
                                "dream": 120.0, "recall": 60.0, "embed": 60.0, "watch": 0.0}


def test_dream_runs_within_minutes_by_default():
    """Issue 21, item 6: memory within minutes of new messages, not once a day."""
    assert registry.get("dream").interval <= 180
    assert init_workspace.__name__ and DEFAULT_SCHEDULE["dream"] <= 180


def test_a_job_is_declared_with_valid_fields_and_a_name_is_registered_once(todo):
    with pytest.raises(ConfigError, match="already registered"):
        registry.register(example_processor.JOB)
    with pytest.raises(ConfigError, match="kind"):
        Job(name="x", kind="bogus", run=example_processor.run_todo)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="external"):
        Job(name="x", kind="external", run=example_processor.run_todo)
    with pytest.raises(ConfigError, match="name"):
        Job(name="a b", kind="state", run=example_processor.run_todo)
    with pytest.raises(ConfigError, match="unknown processor 'nope'"):
        registry.get("nope")


def test_every_built_in_report_has_failed_and_a_summary(workspace):
    with Workspace.open(workspace, writable=True) as ws:
        ws.append(messages("s", [f"message {i}" for i in range(12)]))
        for name in registry.names(["follower", "state"]):
            report = processors.run(ws, name, llm=OfflineExtractor())
            assert isinstance(report, Report), name
            assert report.failed is False and report.processor == name
            assert job_summary(name, report).startswith(f"{name}: ") and report.summary()


def test_an_external_job_cannot_run_on_its_own(workspace):
    with Workspace.open(workspace, writable=True) as ws, pytest.raises(ConfigError, match="supplied by"):
        processors.run(ws, "watch")


def test_the_example_processor_runs_via_the_cli_once(workspace, cli_runner, todo):
    with Workspace.open(workspace, writable=True) as ws:
        ws.append(messages("s", ["hello", "TODO: write the docs", "bye", "also TODO: a test"]))
    res = cli_runner.invoke(cli, ["run", "todo", "--json"])
    assert res.exit_code == 0, res.output + res.stderr
    report = json.loads(res.stdout)
    assert report["processor"] == "todo" and report["entries_written"] == 2
    again = json.loads(cli_runner.invoke(cli, ["run", "todo", "--json"]).stdout)
    assert again["entries_written"] == 0, "a rerun appends nothing"
    with Workspace.open(workspace) as ws:
        texts = [e.text for e in ws.log.read() if isinstance(e, HistoryAppended) and e.source == "todo"]
        rows = {r.processor: r for r in processors.offsets(ws)}
    assert texts == ["TODO: write the docs", "TODO: a test"]
    assert rows["todo"].lag == 0 and rows["todo"].seq > 0
    assert "todo" in cli_runner.invoke(cli, ["run", "--help"]).stdout


def test_an_unregistered_name_is_refused_by_the_cli(workspace, cli_runner):
    res = cli_runner.invoke(cli, ["run", "todo"])
    assert res.exit_code == 2 and "todo" in res.stderr


def test_the_example_processor_runs_in_the_daemon_at_its_default_interval(workspace, todo):
    with Workspace.open(workspace, writable=True) as ws:
        ws.append(messages("s", ["TODO: ship it"]))
        lines: list[str] = []
        counts = run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lines.append, once=True)
        assert counts["todo"] == 1 and counts["dream"] == 1
        assert "todo: read" in next(ln for ln in lines if ln.startswith("todo:"))
        assert "todo every 60s" in lines[0]
        assert [e.text for e in ws.log.read() if isinstance(e, HistoryAppended)] == ["TODO: ship it"]


def test_a_schedule_naming_an_unregistered_job_is_refused(workspace):
    with Workspace.open(workspace, writable=True) as ws, pytest.raises(ConfigError, match="unknown job"):
        run_daemon(ws, OfflineExtractor(), stop=threading.Event(), log=lambda _: None, schedule={"todo": 1.0},
                   once=True)


def test_a_package_registers_a_processor_through_its_entry_point(workspace, tmp_path):
    """What a third party ships: a module with the register line, named in the ``evlog.processors`` group."""
    site = tmp_path / "site"
    (site / "todo_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "todo_plugin-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: todo-plugin\nVersion: 0.1\n")
    (site / "todo_plugin-0.1.dist-info" / "entry_points.txt").write_text("[evlog.processors]\ntodo = todo_plugin\n")
    (site / "todo_plugin.py").write_text(
        "from processors.registry import register\n"
        "from tests.example_processor import JOB\n"
        "register(JOB)\n")
    with Workspace.open(workspace, writable=True) as ws:
        ws.append(messages("s", ["TODO: from a plugin"]))
    repo = REPO
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, str(site)])}
    exe = [sys.executable, "-c", "from eventlog.cli import main; main()"]
    run = subprocess.run([*exe, "run", "todo", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["entries_written"] == 1
    daemon = subprocess.run([*exe, "daemon", "--once", "--llm", "offline"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert daemon.returncode == 0, daemon.stderr
    assert "todo every 60s" in daemon.stderr and "todo: read" in daemon.stderr


def test_run_options_are_typed_and_frozen():
    opts = RunOptions(key="k")
    with pytest.raises(AttributeError):
        opts.key = "other"  # type: ignore[misc]


def test_every_registered_job_runs_against_the_fake_context(tmp_path):
    """Processors use only the Context protocol: each job runs on a log and projections, no Workspace."""
    from eventlog.events import SessionCreated
    from tests.fake_context import FakeContext

    ctx = FakeContext(str(tmp_path / "fake"))
    try:
        ctx.append([SessionCreated(session_key="s", created_at="2026-11-01T09:00:00Z"),
                    *messages("s", [f"I prefer tabs over spaces, note {i}." for i in range(14)])])
        summaries = {}
        for name in registry.names(["follower", "state"]):
            report = processors.run(ctx, name, llm=OfflineExtractor())
            assert not report.failed, name
            summaries[name] = report.summary()
        assert summaries["snapshot"].startswith("read 15, wrote 14")
        assert summaries["consolidate"] == "1 consolidation(s): s consolidated"
        assert summaries["dream"].startswith("1 run(s)")
        assert summaries["recall"] == f"index at seq {ctx.log.last_seq}"
    finally:
        ctx.close()


def test_a_plugin_that_fails_to_load_is_named_in_a_clear_error(workspace, tmp_path):
    site = tmp_path / "site"
    (site / "broken_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "broken_plugin-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (site / "broken_plugin-0.1.dist-info" / "entry_points.txt").write_text("[evlog.processors]\nbroken = broken_plugin\n")
    (site / "broken_plugin.py").write_text("raise ImportError('needs a library that is not installed')\n")
    repo = REPO
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([repo, str(site)])}
    run = subprocess.run([sys.executable, "-c", "from eventlog.cli import main; main()", "run", "snapshot"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    assert "broken_plugin" in run.stderr and "needs a library that is not installed" in run.stderr
    assert "Traceback" not in run.stderr


def test_no_processor_module_imports_the_workspace_not_even_for_types():
    """Processors depend on ``processors.context.Context``; the workspace is the composition root above them."""
    repo = REPO
    offenders = []
    for dirpath, _dirs, files in os.walk(os.path.join(repo, "processors")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    tree = ast.parse(f.read())
                for node in ast.walk(tree):
                    imported = ([a.name for a in node.names] if isinstance(node, ast.Import)
                                else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                    if any(m == "eventlog.app.workspace" or m.startswith("eventlog.app.workspace.") for m in imported):
                        offenders.append(f"{os.path.relpath(path, repo)}:{node.lineno}")
    assert offenders == []
