"""The CLI prints what a person reads, never a Python repr (issue 24: `evlog run dream` printed
``cursors=[2, 3, 4, ... facts=['fact-...``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from eventlog.cli import cli
from eventlog.cli.render import readable, render_report


@dataclass
class _Run:
    run_id: str
    cursors: list[int]
    facts: list[str] = field(default_factory=list)
    input_tokens: int = 0


@dataclass
class _Report:
    processor: str
    runs: list[_Run]
    counts: dict[str, int]


def test_lists_are_ranges_and_names_not_reprs():
    assert readable(list(range(2, 19))) == "2..18 (17)"
    assert readable([7]) == "7"
    assert readable(["fact-a", "fact-b", "fact-c", "fact-d", "fact-e"]) == "fact-a, fact-b, fact-c +2 more"
    assert readable({"diary.appended": 3}) == "diary.appended=3"
    out = render_report(_Report("dream", [_Run("dream-9", list(range(2, 40)), ["fact-1", "fact-2"], 420)], {"a": 1}))
    assert "runs:" in out and "cursors 2..39 (38)" in out and "facts fact-1, fact-2" in out and "input tokens 420" in out
    assert "[" not in out and "'" not in out


def test_evlog_run_dream_prints_no_python_repr(workspace, cli_runner):
    assert cli_runner.invoke(cli, ["remember", "I prefer tabs over spaces"]).exit_code == 0
    res = cli_runner.invoke(cli, ["run", "dream"])
    assert res.exit_code == 0, res.output
    runs = [ln for ln in res.stdout.splitlines() if ln.startswith("runs:")]
    assert runs and "facts fact-" in runs[0]
    assert "[" not in res.stdout and "'" not in res.stdout


def test_the_offline_model_has_one_name_in_the_report_and_the_audit(workspace, cli_runner):
    import json

    assert cli_runner.invoke(cli, ["remember", "I prefer tabs over spaces"]).exit_code == 0
    report = json.loads(cli_runner.invoke(cli, ["run", "dream", "--json"]).stdout)
    (run,) = [json.loads(ln) for ln in cli_runner.invoke(cli, ["audit", "--json"]).stdout.splitlines()]
    assert report["model"] == run["model"] == "offline-rules-v1"
