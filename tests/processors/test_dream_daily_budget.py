"""Dream's daily token budget (issue 21, item 6): now that the daemon runs Dream every two minutes,
a model that costs tokens stops for the UTC day once ``dream_daily_token_budget`` is spent; the
inputs stay pending (nothing is claimed) and the report says why. Free extractors are not limited."""

from __future__ import annotations

import pytest

from eventlog.app.workspace import Workspace, init_workspace
from eventlog.errors import ConfigError
from eventlog.events import CursorAdvanced
from processors.dream import DreamFollower, run_dream
from processors.llm import Completion, OfflineExtractor
from processors.llm.fake import FakeLLM
from processors.runner import run_model_follower
from tests.processors.test_dream import add, answer, events, say


def costly(text: str) -> Completion:
    return Completion(text=text, model="fake-model", input_tokens=80, output_tokens=40)


@pytest.fixture
def ws(workspace):
    init_workspace(workspace, dream_daily_token_budget=100)
    w = Workspace.open(workspace, writable=True)
    yield w
    w.close()


def test_a_model_stops_for_the_day_once_the_budget_is_spent(ws):
    say(ws, "s", "I prefer tabs over spaces.")
    first = run_dream(ws, FakeLLM(costly(answer(add("The user prefers tabs over spaces.", "s#s-0")))))
    assert [r.outcome for r in first.runs] == ["valid"] and not first.stopped
    say(ws, "s", "We deploy on Fridays.", start=1)
    llm = FakeLLM(costly(answer()))
    second = run_dream(ws, llm)
    assert second.runs == [] and llm.history == [], "no call once 120 of 100 tokens are spent today"
    assert "daily token budget" in second.stopped and "120 of 100" in second.stopped
    assert "stopped: the daily token budget" in second.summary()
    assert second.pending_after == 1, "the input waits, unclaimed"
    assert len(events(ws, CursorAdvanced)) == 1


def test_the_next_day_it_runs_again(ws):
    say(ws, "s", "I prefer tabs over spaces.")
    run_dream(ws, FakeLLM(costly(answer())))
    say(ws, "s", "We deploy on Fridays.", start=1)
    runs = run_model_follower(ws, DreamFollower(FakeLLM(costly(answer())), today="2999-01-01"))
    assert [r.outcome for r in runs] == ["noop"]


def test_the_offline_extractor_is_never_limited(ws):
    say(ws, "s", "I prefer tabs over spaces.")
    run_dream(ws, FakeLLM(costly(answer())))
    say(ws, "s", "We deploy on Fridays.", start=1)
    report = run_dream(ws, OfflineExtractor())
    assert len(report.runs) == 1 and not report.stopped


def test_zero_means_no_daily_limit_and_a_negative_budget_is_refused(workspace):
    init_workspace(workspace, dream_daily_token_budget=0)
    with pytest.raises(ConfigError, match="dream_daily_token_budget"):
        init_workspace(workspace, dream_daily_token_budget=-1)
