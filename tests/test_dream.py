"""Dream (issue 5): the three-level guard, cursor-first claims, retries of failed ranges,
the token budget, the injected-memory filter, fact dedup, limits, replay and the CLI.

Most tests script the model with ``FakeLLM``; the ones about extraction use the offline
extractor, as a user without an API key would.
"""

from __future__ import annotations

import os
import shutil
import time

import msgspec
import pytest

import processors
from eventlog.cli import cli
from eventlog.cli.render import render_run
from eventlog.events import (
    CursorAdvanced,
    DreamCompleted,
    DreamFailed,
    DreamStarted,
    MemoryAppended,
    MessageAppended,
    SessionCreated,
)
from eventlog.log import Log
from eventlog.app.workspace import Workspace, init_workspace
from processors.audit import dream_runs
from processors.dream import (
    ENTRY_CHARS,
    MAX_ENTRIES,
    MEMORY_CHARS,
    SYSTEM,
    remember,
    replay_llm,
    run_dream,
)
from processors.llm import Completion, LLMCallError, OfflineExtractor, Prompt, estimate_tokens
from processors.llm.fake import FakeLLM
from eventlog.app import replay
from projections.memory import project_file

GOOD = "## User Profile\n- I prefer tabs over spaces\n\n## Project Context\n(nothing new)\n"
NOTHING = "## User Profile\n(nothing new)\n\n## Project Context\n(nothing new)\n"


# -- helpers -------------------------------------------------------------------------------


@pytest.fixture
def ws(workspace):
    w = Workspace.open(workspace, writable=True)
    yield w
    w.close()


def events(ws: Workspace, cls: type | None = None) -> list:
    return [e for e in ws.log.read() if cls is None or isinstance(e, cls)]


def read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


def global_memory(ws: Workspace) -> str | None:
    ws.flush()
    return read(ws.path("memory", "MEMORY.md"))


def memory_lines(ws: Workspace, project: str = "") -> list[str]:
    ws.flush()
    text = read(ws.path("memory", "MEMORY.md") if not project else ws.path(project_file(project))) or ""
    return [ln[2:] for ln in text.splitlines() if ln.startswith("- ")]


def run_of(ws: Workspace, run_id: str):  # noqa: ANN201
    return ws.dream_runs.s.runs[run_id]


def prompt_cursors(prompt: Prompt) -> list[int]:
    return [e["cursor"] for e in prompt.inputs["entries"]]


def all_memory_files(home: str, extra: list[str] = ()) -> dict[str, bytes]:
    out = {}
    top = os.path.join(home, "memory")
    for dirpath, _dirs, files in os.walk(top):
        for f in files:
            if f == "MEMORY.md":
                p = os.path.join(dirpath, f)
                with open(p, "rb") as fh:
                    out[os.path.relpath(p, home)] = fh.read()
    for p in extra:
        with open(p, "rb") as fh:
            out[p] = fh.read()
    return out


# -- the three-level guard -----------------------------------------------------------------


def test_valid_output_appends_user_facts_to_the_global_memory_md(ws):
    cursor = remember(ws, "I prefer tabs over spaces")
    llm = FakeLLM(GOOD)
    report = run_dream(ws, llm)
    [run] = report.runs
    assert run.outcome == "valid" and run.attempts == 1 and run.cursors == [cursor]
    [fact] = events(ws, MemoryAppended)
    assert (fact.scope, fact.section, fact.text, fact.project, fact.run_id) == (
        "user", "User Profile", "I prefer tabs over spaces", "", run.run_id)
    assert fact.sources == [cursor]
    assert global_memory(ws) == "# Memory\n\n## User Profile\n\n- I prefer tabs over spaces\n"
    [done] = events(ws, DreamCompleted)
    assert done.outcome == "valid" and done.raw_output == GOOD and done.fact_ids == [fact.fact_id]
    assert done.prompt_hash == llm.history[0].hash() and done.model == "fake-model"


def test_project_facts_go_to_the_projects_file_and_are_mirrored_into_the_project(ws, tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    ws.register_project(str(proj))
    remember(ws, "this project uses pytest, and I always run it with -x", project=str(proj))
    out = ("## User Profile\n- I always run pytest with -x\n\n"
           "## Project Context\n- this project uses pytest\n")
    [run] = run_dream(ws, FakeLLM(out)).runs
    assert run.outcome == "valid" and run.project == str(proj)
    by_text = {e.text: e for e in events(ws, MemoryAppended)}
    assert by_text["this project uses pytest"].scope == "project"
    assert by_text["this project uses pytest"].project == str(proj)
    assert by_text["I always run pytest with -x"].scope == "user"
    assert by_text["I always run pytest with -x"].project == ""
    ws.flush()
    canonical = read(ws.path(project_file(str(proj))))
    assert canonical == "# Memory\n\n## Project Context\n\n- this project uses pytest\n"
    assert project_file(str(proj)).startswith(os.path.join("memory", "projects") + os.sep)
    assert read(str(proj / "memory" / "MEMORY.md")) == canonical
    assert memory_lines(ws) == ["I always run pytest with -x"]  # the user's fact: global file only


def test_project_facts_of_a_project_directory_that_does_not_exist_stay_in_the_workspace(ws, tmp_path):
    gone = str(tmp_path / "no-such-project")
    remember(ws, "this project targets python 3.12", project=gone)
    run_dream(ws, FakeLLM("## User Profile\n(nothing new)\n\n## Project Context\n- this project targets python 3.12\n"))
    assert memory_lines(ws, gone) == ["this project targets python 3.12"]
    assert not os.path.exists(gone)


def test_invalid_output_is_retried_once_with_the_previous_output_and_the_reason(ws):
    remember(ws, "I prefer tabs over spaces")
    bad = "## User Profile\n- I prefer tabs over spaces\n"  # no Project Context heading
    llm = FakeLLM(bad, GOOD)
    [run] = run_dream(ws, llm).runs
    assert run.outcome == "valid" and run.attempts == 2
    assert len(llm.history) == 2
    retry = llm.history[1].user
    assert bad.strip() in retry
    assert "missing the '## Project Context' heading" in retry
    assert bad.strip() not in llm.history[0].user
    [done] = events(ws, DreamCompleted)
    assert done.attempts == 2 and not done.fallback_used
    assert done.validation == ["attempt 1: missing the '## Project Context' heading"]
    assert done.prompt_hash == llm.history[0].hash()
    assert memory_lines(ws) == ["I prefer tabs over spaces"]


def test_invalid_twice_but_long_enough_falls_back_to_the_raw_output(ws):
    remember(ws, "I prefer tabs over spaces and I always run the linter")
    raw = "- I prefer tabs over spaces\n- I always run the linter before committing\n"
    llm = FakeLLM(raw, raw)
    [run] = run_dream(ws, llm).runs
    assert run.outcome == "fallback" and run.attempts == 2
    [done] = events(ws, DreamCompleted)
    assert done.outcome == "fallback" and done.fallback_used and len(done.validation) == 2
    assert memory_lines(ws) == ["I prefer tabs over spaces", "I always run the linter before committing"]
    assert {e.scope for e in events(ws, MemoryAppended)} == {"user"}
    assert [r.status for r in ws.dream_runs.runs()] == ["fallback"]


def test_too_short_twice_writes_nothing_and_records_the_run_as_failed(ws):
    cursor = remember(ws, "I prefer tabs over spaces")
    llm = FakeLLM("ok", "sure thing")
    [run] = run_dream(ws, llm).runs
    assert run.outcome == "failed" and run.attempts == 2
    assert events(ws, MemoryAppended) == [] and events(ws, DreamCompleted) == []
    [failed] = events(ws, DreamFailed)
    assert failed.run_id == run.run_id and failed.attempts == 2 and failed.raw_output == "sure thing"
    assert failed.error_kind == "invalid_output" and len(failed.validation) == 2
    assert "too short" in failed.validation[0]
    assert global_memory(ws) is None
    listed = ws.dream_runs.runs()
    assert [(r.run_id, r.status, r.failed, r.input_cursors) for r in listed] == [(run.run_id, "failed", True, [cursor])]


def test_a_preamble_before_the_headings_of_a_valid_answer_is_not_stored_as_a_fact(ws):
    remember(ws, "I prefer tabs over spaces")
    [run] = run_dream(ws, FakeLLM("Sure! Here is what I learned:\n\n" + GOOD)).runs
    assert run.outcome == "valid"
    assert memory_lines(ws) == ["I prefer tabs over spaces"]


def test_empty_output_is_rejected_and_the_run_fails(ws):
    remember(ws, "I prefer tabs over spaces")
    [run] = run_dream(ws, FakeLLM("", "   \n")).runs
    assert run.outcome == "failed"
    [failed] = events(ws, DreamFailed)
    assert failed.validation[0] == "attempt 1: empty output"


def test_nothing_new_under_both_headings_is_a_noop_that_appends_nothing(ws):
    remember(ws, "hello there, how was your weekend")
    [run] = run_dream(ws, FakeLLM(NOTHING)).runs
    assert run.outcome == "noop" and run.facts == [] and run.attempts == 1
    assert events(ws, MemoryAppended) == []
    [done] = events(ws, DreamCompleted)
    assert done.outcome == "noop" and done.fact_ids == []
    assert global_memory(ws) is None
    assert run_dream(ws, FakeLLM()).runs == []  # the range was consumed: nothing pending


# -- cursor first --------------------------------------------------------------------------


class LogPeekingLLM(FakeLLM):
    """Reads the log from the outside (a second, read-only reader) at the moment it is called."""

    def __init__(self, home: str, *outputs) -> None:  # noqa: ANN002
        super().__init__(*outputs)
        self.home = home
        self.seen: list[list] = []

    def complete(self, prompt: Prompt) -> Completion:
        log = Log.open(os.path.join(self.home, "log"))
        try:
            self.seen.append(list(log.read()))
        finally:
            log.close()
        return super().complete(prompt)


def test_cursor_advanced_and_dream_started_are_in_the_log_before_the_model_is_called(ws):
    c1 = remember(ws, "I prefer tabs over spaces")
    c2 = remember(ws, "I use neovim for everything")
    llm = LogPeekingLLM(ws.home, GOOD)
    [run] = run_dream(ws, llm).runs
    [seen] = llm.seen
    claim, started = seen[-2], seen[-1]
    assert isinstance(claim, CursorAdvanced) and isinstance(started, DreamStarted)
    assert claim.processor == "dream" and claim.run_id == run.run_id == started.run_id
    assert claim.cursors == [c1, c2] and claim.from_cursor == 0 and claim.to_cursor == c2
    assert started.input_cursors == [c1, c2] and started.prompt_hash == llm.history[0].hash()
    assert started.llm == "fake" and started.model == "fake-model"
    assert not any(isinstance(e, DreamCompleted | DreamFailed | MemoryAppended) for e in seen)
    assert claim.seq + 1 == started.seq


FAILURES = {
    "timeout": [LLMCallError("request timed out", kind="timeout")],
    "rate_limit": [LLMCallError("429 rate limited", kind="rate_limit")],
    "overloaded": [LLMCallError("529 overloaded", kind="overloaded")],
    "garbage": ["\x00\x01 }{ ", "<<<>>>"],
    "nothing_queued": [],  # the fake answers LLMCallError(kind="no_output")
}


@pytest.mark.parametrize("failure", sorted(FAILURES))
def test_a_failed_call_keeps_its_range_claimed_listed_as_failed_and_not_fed_again(ws, failure):
    c1 = remember(ws, "I prefer tabs over spaces")
    [run] = run_dream(ws, FakeLLM(*FAILURES[failure])).runs
    assert run.outcome == "failed"
    [failed] = events(ws, DreamFailed)
    assert failed.run_id == run.run_id
    expected_kind = {"garbage": "invalid_output", "nothing_queued": "no_output"}.get(failure, failure)
    assert failed.error_kind == expected_kind
    runs = ws.dream_runs
    assert runs.s.cursor == c1
    assert [(r.run_id, r.failed, r.input_cursors) for r in runs.runs()] == [(run.run_id, True, [c1])]
    [listed] = dream_runs(ws, 0)
    assert " failed " in render_run(listed)
    # the next normal run feeds only the new entry
    c2 = remember(ws, "I use neovim for everything")
    llm = FakeLLM(NOTHING)
    [second] = run_dream(ws, llm).runs
    assert second.cursors == [c2]
    assert prompt_cursors(llm.history[0]) == [c2]
    assert "tabs" not in llm.history[0].user
    assert [r.run_id for r in runs.runs() if r.failed] == [run.run_id]


def test_retry_failed_reruns_exactly_the_failed_range_and_marks_the_old_run_retried(ws):
    c1 = remember(ws, "I prefer tabs over spaces")
    c2 = remember(ws, "I use neovim for everything")
    [old] = run_dream(ws, FakeLLM(LLMCallError("timed out", kind="timeout"))).runs
    c3 = remember(ws, "I like dark themes")
    [normal] = run_dream(ws, FakeLLM(NOTHING)).runs
    assert normal.cursors == [c3]
    end = ws.log.last_seq
    llm = FakeLLM(GOOD)
    report = run_dream(ws, llm, retry_failed=True)
    [retry] = report.runs
    assert retry.retry_of == old.run_id and retry.cursors == [c1, c2] and retry.outcome == "valid"
    assert prompt_cursors(llm.history[0]) == [c1, c2]
    new = [e for e in ws.log.read(end + 1)]
    assert not any(isinstance(e, CursorAdvanced) for e in new), "a retry must not move the cursor"
    [started] = [e for e in new if isinstance(e, DreamStarted)]
    assert started.retry_of == old.run_id
    runs = ws.dream_runs
    assert runs.s.runs[old.run_id].retried_by == retry.run_id
    assert not runs.s.runs[old.run_id].failed
    assert [r for r in runs.runs() if r.failed] == []
    assert memory_lines(ws) == ["I prefer tabs over spaces"]
    assert run_dream(ws, FakeLLM(), retry_failed=True).runs == []  # nothing left to retry


def test_a_retry_that_fails_again_is_itself_listed_and_retried_next_time(ws):
    c1 = remember(ws, "I prefer tabs over spaces")
    [old] = run_dream(ws, FakeLLM(LLMCallError("down", kind="server"))).runs
    [again] = run_dream(ws, FakeLLM(LLMCallError("down", kind="server")), retry_failed=True).runs
    assert again.outcome == "failed" and again.retry_of == old.run_id
    failed = [r.run_id for r in ws.dream_runs.runs() if r.failed]
    assert failed == [again.run_id]
    [third] = run_dream(ws, FakeLLM(GOOD), retry_failed=True).runs
    assert third.retry_of == again.run_id and third.cursors == [c1] and third.outcome == "valid"


def test_a_run_interrupted_by_keyboard_interrupt_is_listed_as_interrupted_and_is_retryable(ws):
    c1 = remember(ws, "I prefer tabs over spaces")
    with pytest.raises(KeyboardInterrupt):
        run_dream(ws, FakeLLM(KeyboardInterrupt()))
    [run] = ws.dream_runs.runs()
    assert run.status == "started" and run.failed and run.input_cursors == [c1] and run.ended_at == ""
    [row] = dream_runs(ws, 0)
    assert row.outcome == "interrupted" and " interrupted " in render_run(row)
    assert events(ws, DreamFailed) == [] and events(ws, DreamCompleted) == []
    assert run_dream(ws, FakeLLM()).runs == []  # claimed: a normal run does not feed it again
    [retry] = run_dream(ws, FakeLLM(GOOD), retry_failed=True).runs
    assert retry.retry_of == run.run_id and retry.cursors == [c1]
    assert memory_lines(ws) == ["I prefer tabs over spaces"]


def test_a_run_that_died_after_dream_started_survives_a_restart_and_is_retryable(workspace):
    ws = Workspace.open(workspace, writable=True)
    c1 = remember(ws, "I prefer tabs over spaces")
    c2 = remember(ws, "I always write tests first")
    # what a process killed during the model call leaves behind
    ws.append([CursorAdvanced(processor="dream", run_id="dream-x", from_cursor=0, to_cursor=c2, cursors=[c1, c2]),
               DreamStarted(run_id="dream-x", llm="anthropic", model="claude-x", prompt_hash="xxh3_128:00",
                            input_cursors=[c1, c2])])
    ws.close()
    shutil.rmtree(os.path.join(workspace, "state"))
    ws = Workspace.open(workspace, writable=True)
    try:
        [run] = ws.dream_runs.runs()
        assert run.run_id == "dream-x" and run.failed and run.status == "started"
        assert run_dream(ws, FakeLLM()).runs == []
        out = "## User Profile\n- I prefer tabs over spaces\n- I always write tests first\n\n## Project Context\n(nothing new)\n"
        llm = FakeLLM(out)
        [retry] = run_dream(ws, llm, retry_failed=True).runs
        assert retry.retry_of == "dream-x" and prompt_cursors(llm.history[0]) == [c1, c2]
        assert ws.dream_runs.s.runs["dream-x"].retried_by == retry.run_id
        assert memory_lines(ws) == ["I prefer tabs over spaces", "I always write tests first"]
    finally:
        ws.close()


def test_a_non_llm_exception_from_the_model_leaves_the_run_retryable(ws):
    c1 = remember(ws, "I prefer tabs over spaces")
    with pytest.raises(RuntimeError):
        run_dream(ws, FakeLLM(RuntimeError("bug in a client library")))
    [run] = ws.dream_runs.runs()
    assert run.failed and run.input_cursors == [c1]
    [retry] = run_dream(ws, FakeLLM(GOOD), retry_failed=True).runs
    assert retry.outcome == "valid"


# -- token budget --------------------------------------------------------------------------


def _prompt_tokens(p: Prompt) -> int:
    return estimate_tokens(p.system) + estimate_tokens(p.user) + p.max_tokens


def test_a_small_token_budget_drops_the_newest_entries_which_stay_pending_for_the_next_run(evlog_home):
    init_workspace(str(evlog_home), dream_token_budget=1800)
    ws = Workspace.open(str(evlog_home), writable=True)
    try:
        cursors = [remember(ws, f"note {i}: " + "I prefer short functions and clear names. " * 20) for i in range(6)]
        llm = FakeLLM(*[NOTHING] * 10)
        report = run_dream(ws, llm)
        assert len(report.runs) >= 2, "a budget this small cannot hold six long entries in one prompt"
        fed = [c for p in llm.history for c in prompt_cursors(p)]
        assert fed == cursors, "every entry is fed exactly once, in order"
        for p, run in zip(llm.history, report.runs, strict=True):
            assert _prompt_tokens(p) <= 1800
            assert run.cursors == prompt_cursors(p)
        claims = events(ws, CursorAdvanced)
        assert [c.cursors for c in claims] == [r.cursors for r in report.runs]
        assert report.pending_after == 0
    finally:
        ws.close()


def test_the_budget_stops_a_run_and_what_it_dropped_waits_for_the_next_invocation(evlog_home):
    init_workspace(str(evlog_home), dream_token_budget=1800)
    ws = Workspace.open(str(evlog_home), writable=True)
    try:
        cursors = [remember(ws, f"note {i}: " + "I prefer short functions and clear names. " * 20) for i in range(4)]
        report = run_dream(ws, FakeLLM(NOTHING), max_runs=1)
        [run] = report.runs
        assert 0 < len(run.cursors) < 4
        assert report.pending_after == 4 - len(run.cursors)
        assert [e.cursor for e in ws.history.since(ws.dream_runs.s.cursor)] == \
            cursors[len(run.cursors):]
    finally:
        ws.close()


def test_the_retry_is_skipped_when_it_would_exceed_the_budget_and_usage_is_recorded(evlog_home):
    init_workspace(str(evlog_home), dream_token_budget=3000)
    ws = Workspace.open(str(evlog_home), writable=True)
    try:
        remember(ws, "I prefer tabs over spaces and I always run the linter")
        raw = "- I prefer tabs over spaces\n- I always run the linter before committing\n"
        llm = FakeLLM(Completion(text=raw, model="m1", input_tokens=1500, output_tokens=300))
        [run] = run_dream(ws, llm).runs
        assert len(llm.history) == 1, "the retry would exceed the budget: it must not be sent"
        assert run.attempts == 1 and run.outcome == "fallback"
        [done] = events(ws, DreamCompleted)
        assert any("token budget" in v for v in done.validation)
        assert (done.input_tokens, done.output_tokens) == (1500, 300)
        assert [e.token_budget for e in events(ws, DreamStarted)] == [3000]
        assert ws.dream_runs.runs()[0].input_tokens == 1500
    finally:
        ws.close()


def test_token_usage_of_both_attempts_is_recorded(ws):
    remember(ws, "I prefer tabs over spaces")
    llm = FakeLLM(Completion(text="## User Profile\n- x\n", model="m", input_tokens=100, output_tokens=7),
                  Completion(text=GOOD, model="m", input_tokens=130, output_tokens=20))
    [run] = run_dream(ws, llm).runs
    assert (run.input_tokens, run.output_tokens) == (230, 27)
    [done] = events(ws, DreamCompleted)
    assert (done.input_tokens, done.output_tokens, done.model) == (230, 27, "m")


def test_a_retry_never_drops_entries_the_run_claimed(evlog_home):
    """The rejected first answer ate part of the budget; the retry must still show every claimed entry
    (or not claim what it cannot show): facts come from the retry's answer alone."""
    init_workspace(str(evlog_home), dream_token_budget=6000)
    ws = Workspace.open(str(evlog_home), writable=True)
    try:
        for i in range(10):
            remember(ws, f"note {i}: " + "I prefer short functions and clear names. " * 23)
        first_seen: list[Prompt] = []

        class Realistic(FakeLLM):
            def complete(self, prompt: Prompt) -> Completion:
                first_seen.append(prompt)
                out = super().complete(prompt)
                used = estimate_tokens(prompt.system) + estimate_tokens(prompt.user)
                return Completion(text=out.text, model=out.model, input_tokens=used, output_tokens=20)

        llm = Realistic("## User Profile\n- I prefer short functions\n", GOOD, NOTHING, NOTHING, NOTHING)
        report = run_dream(ws, llm)
        first = report.runs[0]
        assert first.attempts == 2
        shown_in_retry = set(prompt_cursors(first_seen[1]))
        assert set(first.cursors) <= shown_in_retry, (
            f"run {first.run_id} claimed {first.cursors} but its accepted answer only saw {sorted(shown_in_retry)}")
    finally:
        ws.close()


# -- injected memory is never re-extracted -------------------------------------------------


INJECTED = [
    "<memory>\n## User Profile\n- I use emacs with evil mode\n</memory>\nI prefer dark themes in every editor",
    "<system-reminder>\nThe user always wants answers in French.\nI always use fish as my shell\n</system-reminder>\n"
    "I work on a compiler at my day job",
    "Here is what you remember about me:\n## User Profile\n- I love rust macros\n- I never use tabs\n\n"
    "I like short commit messages",
]


def _seed_memory(ws: Workspace, *facts: str) -> None:
    out = "## User Profile\n" + "".join(f"- {f}\n" for f in facts) + "\n## Project Context\n(nothing new)\n"
    remember(ws, "seed")
    run_dream(ws, FakeLLM(out))


def test_injected_memory_blocks_pasted_sections_and_known_facts_never_reach_the_prompt(ws):
    _seed_memory(ws, "I prefer tabs over spaces")
    for text in INJECTED:
        remember(ws, text)
    remember(ws, "I prefer tabs over spaces.\nI drink coffee at night")
    llm = FakeLLM(NOTHING)
    run_dream(ws, llm)
    [prompt] = llm.history
    entries = "\n".join(e["text"] for e in prompt.inputs["entries"])
    history_part = prompt.user.split("## History entries", 1)[1]
    for injected in ("emacs with evil mode", "fish as my shell", "answers in French", "rust macros",
                     "I never use tabs", "I prefer tabs over spaces"):
        assert injected not in entries and injected not in history_part, injected
    for real in ("I prefer dark themes in every editor", "I work on a compiler at my day job",
                 "I like short commit messages", "I drink coffee at night"):
        assert real in entries and real in history_part, real


def test_the_offline_extractor_learns_only_what_the_user_said_not_the_injected_memory(ws):
    _seed_memory(ws, "I prefer tabs over spaces")
    for text in INJECTED:
        remember(ws, text)
    remember(ws, "I prefer tabs over spaces.")
    report = run_dream(ws, OfflineExtractor())
    assert "valid" in [r.outcome for r in report.runs]
    assert sorted(memory_lines(ws)) == sorted([
        "I prefer tabs over spaces", "I prefer dark themes in every editor", "I work on a compiler at my day job",
        "I like short commit messages"])


def test_a_fact_already_in_memory_is_not_appended_again_and_the_run_is_a_noop(ws):
    remember(ws, "I prefer tabs over spaces")
    [first] = run_dream(ws, OfflineExtractor()).runs
    assert first.outcome == "valid"
    before = global_memory(ws)
    remember(ws, "I prefer tabs over spaces. Thanks for fixing the indentation")
    [second] = run_dream(ws, OfflineExtractor()).runs
    assert second.outcome == "noop" and second.facts == []
    assert len(events(ws, MemoryAppended)) == 1
    assert global_memory(ws) == before


def test_an_entry_left_empty_by_the_injected_memory_filter_is_consumed_without_its_own_model_call(ws):
    _seed_memory(ws, "I prefer tabs over spaces")
    c1 = remember(ws, "I like dark themes")
    c2 = remember(ws, "I prefer tabs over spaces.")  # nothing but a known fact
    llm = FakeLLM(NOTHING, NOTHING)
    report = run_dream(ws, llm)
    assert [p.inputs["entries"] for p in llm.history if not p.inputs["entries"]] == [], \
        "the model was called with no history entries at all"
    assert [c for r in report.runs for c in r.cursors] == [c1, c2]
    assert len(llm.history) == 1
    assert report.pending_after == 0


def test_history_that_is_only_injected_memory_costs_no_model_call(ws):
    _seed_memory(ws, "I prefer tabs over spaces")
    c1 = remember(ws, "<memory>\n## User Profile\n- I use emacs\n</memory>")
    llm = FakeLLM(NOTHING)
    report = run_dream(ws, llm)
    assert llm.history == [], "nothing is left to learn from: no tokens may be spent"
    assert ws.dream_runs.s.cursor == c1 and report.pending_after == 0
    assert len(events(ws, MemoryAppended)) == 1


def test_a_model_that_repeats_a_known_fact_appends_nothing(ws):
    remember(ws, "I prefer tabs over spaces")
    run_dream(ws, FakeLLM(GOOD))
    remember(ws, "tabs, always tabs")
    repeat = "## User Profile\n- i prefer tabs over spaces.\n\n## Project Context\n(nothing new)\n"
    [run] = run_dream(ws, FakeLLM(repeat)).runs
    assert run.outcome == "noop"
    assert memory_lines(ws) == ["I prefer tabs over spaces"]


def test_a_fact_repeated_within_one_answer_is_appended_once(ws):
    remember(ws, "I prefer tabs over spaces")
    out = "## User Profile\n- I prefer tabs over spaces\n- I prefer tabs over spaces.\n\n## Project Context\n(nothing new)\n"
    [run] = run_dream(ws, FakeLLM(out)).runs
    assert len(run.facts) == 1 and memory_lines(ws) == ["I prefer tabs over spaces"]


def _ingest(ws: Workspace, session: str, messages: list[tuple[str, str]], *, project: str = "",
            start_minute: int = 0, day: str = "2025-03-01") -> None:
    evs = [SessionCreated(session_key=session, project=project, created_at=f"{day}T09:00:00Z")]
    for i, (role, content) in enumerate(messages):
        evs.append(MessageAppended(session_key=session, message_id=f"{session}-m{start_minute + i}", role=role,
                                   content=content, timestamp=f"{day}T10:{start_minute + i:02d}:00Z"))
    ws.append(evs)


def test_a_memory_section_pasted_into_a_chat_message_is_not_relearned_through_the_digest(ws):
    """The realistic path: the message goes through snapshot (which flattens its lines) and digest."""
    _seed_memory(ws, "I prefer tabs over spaces")
    pasted = ("Here is my memory file, fix it:\n# Memory\n\n## User Profile\n\n"
              "- I prefer tabs over spaces\n- I use neovim daily\n")
    _ingest(ws, "chat", [("user", pasted), ("assistant", "Sure."), ("user", "I like dark themes a lot")])
    for name in ("snapshot", "digest"):
        processors.run(ws, name)
    run_dream(ws, OfflineExtractor())
    lines = memory_lines(ws)
    assert "I like dark themes a lot" in lines
    offending = [ln for ln in lines if "neovim" in ln or "## User Profile" in ln or "memory file" in ln]
    assert offending == [], f"injected memory was learned again: {offending}"


def test_injected_memory_is_not_relearned_through_a_consolidator_summary(ws):
    msgs = [("user", "<memory>\n## User Profile\n- I use neovim daily\n</memory>\nfix the failing build"),
            ("assistant", "Done."),
            ("user", "<system-reminder>\nI always use fish as my shell\n</system-reminder>\nthanks, I prefer green builds"),
            ("assistant", "ok")] * 3
    _ingest(ws, "chat", msgs)
    processors.run(ws, "consolidate", llm=OfflineExtractor())
    assert any(e.source == "consolidator" for e in ws.history.entries)
    run_dream(ws, OfflineExtractor())
    lines = memory_lines(ws)
    offending = [ln for ln in lines if "neovim" in ln or "fish" in ln]
    assert offending == [], f"injected memory came back through the consolidator: {offending}"


# -- limits --------------------------------------------------------------------------------


def test_at_most_30_entries_per_run_each_cut_to_1000_characters(ws):
    cursors = [remember(ws, f"entry {i} " + "x" * 1500) for i in range(MAX_ENTRIES + 5)]
    llm = FakeLLM(NOTHING, NOTHING)
    report = run_dream(ws, llm)
    assert [len(r.cursors) for r in report.runs] == [MAX_ENTRIES, 5]
    assert [c for r in report.runs for c in r.cursors] == cursors
    for p in llm.history:
        assert all(len(e["text"]) == ENTRY_CHARS for e in p.inputs["entries"])
        assert "x" * ENTRY_CHARS not in p.user and "x" * (ENTRY_CHARS - 20) in p.user
    assert MAX_ENTRIES == 30 and ENTRY_CHARS == 1000


def test_existing_memory_in_the_prompt_is_cut_to_3000_characters_but_every_fact_still_counts_as_known(ws):
    facts = [f"I keep fact number {i:03d} in mind with some padding text" for i in range(120)]
    _seed_memory(ws, *facts)
    assert len(global_memory(ws)) > MEMORY_CHARS
    remember(ws, "something new")
    late = facts[-1]
    llm = FakeLLM(f"## User Profile\n- {late}\n\n## Project Context\n(nothing new)\n")
    [run] = run_dream(ws, llm).runs
    [p] = llm.history
    assert len(p.inputs["memory"]) == MEMORY_CHARS
    assert p.inputs["memory"] == global_memory(ws)[:MEMORY_CHARS]
    assert late not in p.user
    assert run.outcome == "noop", "a fact beyond the prompt's memory window is still known"


def test_entries_of_different_projects_go_to_different_runs(ws, tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    ca1 = remember(ws, "this project uses poetry", project=a)
    ca2 = remember(ws, "this project targets python 3.11", project=a)
    cb = remember(ws, "this project uses npm", project=b)
    cu = remember(ws, "I prefer tabs over spaces")
    ca3 = remember(ws, "this project has no CI yet", project=a)
    llm = FakeLLM(*[NOTHING] * 4)
    report = run_dream(ws, llm)
    assert [(r.project, r.cursors) for r in report.runs] == [(a, [ca1, ca2]), (b, [cb]), ("", [cu]), (a, [ca3])]
    assert [e.project for e in events(ws, DreamStarted)] == [a, b, "", a]


def test_a_project_run_shows_the_global_and_the_projects_memory_but_not_other_projects(ws, tmp_path):
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    remember(ws, "x", project=a)
    run_dream(ws, FakeLLM("## User Profile\n- I prefer tabs\n\n## Project Context\n- this project uses poetry\n"))
    remember(ws, "y", project=b)
    run_dream(ws, FakeLLM("## User Profile\n(nothing new)\n\n## Project Context\n- this project uses npm\n"))
    remember(ws, "z", project=a)
    llm = FakeLLM(NOTHING)
    run_dream(ws, llm)
    memory = llm.history[0].inputs["memory"]
    assert "I prefer tabs" in memory and "this project uses poetry" in memory and "npm" not in memory


# -- replay --------------------------------------------------------------------------------


def _dream_a_few_times(ws: Workspace, proj: str) -> None:
    remember(ws, "I prefer tabs over spaces")
    remember(ws, "this project uses pytest", project=proj)
    run_dream(ws, FakeLLM(GOOD, "## User Profile\n- 我习惯早上写代码\n\n## Project Context\n- this project uses pytest\n"))
    remember(ws, "I never deploy on fridays")
    run_dream(ws, FakeLLM("x", "- I never deploy on fridays\n- I review every pull request myself\n"))
    remember(ws, "boom")
    run_dream(ws, FakeLLM(LLMCallError("slow", kind="timeout")))


def _no_model_may_be_called(monkeypatch) -> None:
    def refuse(*_a, **_k):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("replay called a model")

    monkeypatch.setattr(processors.llm, "make_llm", refuse)
    for cls in (FakeLLM, OfflineExtractor, processors.llm.ReplayLLM):
        monkeypatch.setattr(cls, "complete", refuse)


def test_replay_rebuilds_every_memory_md_byte_for_byte_without_calling_a_model(ws, tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    proj.mkdir()
    ws.register_project(str(proj))
    _dream_a_few_times(ws, str(proj))
    ws.flush()
    mirror = str(proj / "memory" / "MEMORY.md")
    before = all_memory_files(ws.home, [mirror])
    assert len(before) == 3 and all(before.values())
    _no_model_may_be_called(monkeypatch)
    shutil.rmtree(ws.path("memory"))
    shutil.rmtree(ws.path("state"))
    os.remove(mirror)
    replay.rebuild(ws)
    ws.flush()
    assert all_memory_files(ws.home, [mirror]) == before
    assert replay.check(ws).drifts == []


def test_evlog_replay_after_losing_memory_and_state_gives_the_same_files(workspace, tmp_path, cli_runner):
    ws = Workspace.open(workspace, writable=True)
    proj = tmp_path / "proj"
    _dream_a_few_times(ws, str(proj))
    ws.close()
    before = all_memory_files(workspace)
    assert len(before) == 2
    shutil.rmtree(os.path.join(workspace, "memory"))
    shutil.rmtree(os.path.join(workspace, "state"))
    res = cli_runner.invoke(cli, ["replay"])
    assert res.exit_code == 0, res.output + (res.stderr or "")
    assert all_memory_files(workspace) == before
    res = cli_runner.invoke(cli, ["replay", "--check"])
    assert res.exit_code == 0, res.stdout


def test_replay_llm_answers_a_recorded_prompt_without_any_model(tmp_path):
    homes = [str(tmp_path / "a"), str(tmp_path / "b")]
    for h in homes:
        init_workspace(h)
    a = Workspace.open(homes[0], writable=True)
    b = Workspace.open(homes[1], writable=True)
    try:
        for w in (a, b):
            remember(w, "I prefer tabs over spaces")
            remember(w, "我习惯早上写代码")
        [ran] = run_dream(a, OfflineExtractor()).runs
        assert ran.outcome == "valid"
        rec = replay_llm(a)
        [again] = run_dream(b, rec).runs
        assert (again.outcome, again.attempts) == ("valid", 1)
        assert rec.history[0].hash() == events(a, DreamCompleted)[0].prompt_hash
        assert global_memory(b) == global_memory(a)
        [done] = events(b, DreamCompleted)
        assert done.raw_output == events(a, DreamCompleted)[0].raw_output
        # an unrecorded prompt is not answered: the run fails, nothing is invented
        remember(b, "I use vim")
        [missing] = run_dream(b, replay_llm(a)).runs
        assert missing.outcome == "failed"
        assert events(b, DreamFailed)[-1].error_kind == "no_output"
    finally:
        a.close()
        b.close()


# -- the offline pipeline end to end -------------------------------------------------------


CHAT_EN = [
    ("user", "Can you help me set up the repo?"),
    ("assistant", "Sure, what do you need?"),
    ("user", "I prefer tabs over spaces. Please keep functions short."),
    ("assistant", "Noted."),
    ("user", "In this project we use pytest and ruff for everything."),
    ("assistant", "Got it, pytest and ruff."),
    ("user", "Don't push directly to main, always open a pull request."),
    ("assistant", "Understood."),
    ("user", "what's the weather like?"),
    ("assistant", "I can't check the weather."),
    ("user", "ok thanks"),
]
CHAT_ZH = [
    ("user", "我习惯早上写代码，不要在晚上十点以后给我发提醒"),
    ("assistant", "好的，我记住了。"),
    ("user", "这个项目统一用四个空格缩进"),
    ("assistant", "明白。"),
    ("user", "你能帮我看看这个报错吗？"),
    ("assistant", "可以，请把报错贴出来。"),
    ("user", "我喜欢简洁的回答"),
    ("assistant", "好的。"),
    ("user", "谢谢"),
    ("assistant", "不客气"),
]


def test_the_offline_pipeline_turns_messages_into_memory_lines_that_audit_traces_to_real_messages(ws, tmp_path):
    from processors.audit import why

    proj = tmp_path / "proj"
    proj.mkdir()
    ws.register_project(str(proj))
    _ingest(ws, "cli:en", CHAT_EN, project=str(proj))
    _ingest(ws, "feishu:zh", CHAT_ZH, day="2025-03-02")
    llm = OfflineExtractor()
    for name in ("snapshot", "digest", "consolidate", "dream"):
        processors.run(ws, name, llm=llm)
    assert {e.source for e in ws.history.entries} == {"digest", "consolidator"}
    user_lines, project_lines = memory_lines(ws), memory_lines(ws, str(proj))
    assert "I prefer tabs over spaces" in user_lines
    assert "我习惯早上写代码" in user_lines and "不要在晚上十点以后给我发提醒" in user_lines
    assert "我喜欢简洁的回答" in user_lines
    assert any("pytest and ruff" in ln for ln in project_lines)
    assert not any("weather" in ln or "报错" in ln for ln in user_lines + project_lines)
    assert len(set(user_lines)) == len(user_lines) and len(set(project_lines)) == len(project_lines)
    assert read(str(proj / "memory" / "MEMORY.md")) == read(ws.path(project_file(str(proj))))

    messages = {(e.session_key, e.message_id): e for e in events(ws, MessageAppended)}
    for line in user_lines + project_lines:
        [ex] = [x for x in why(ws, line) if x.text == line]
        assert ex.run_id.startswith("dream-") and ex.prompt_hash.startswith("xxh3_128:") and ex.sources
        srcs = [m for s in ex.sources for m in s.messages]
        assert srcs, f"{line!r} traces to no message"
        for m in srcs:
            real = messages[(m.session_key, m.message_id)]
            assert real.seq == m.seq and m.role == real.role and m.timestamp == real.timestamp
        assert any(line.rstrip("…") in messages[(m.session_key, m.message_id)].content for m in srcs), (
            f"{line!r}: none of its source messages says it")
    assert replay.check(ws).drifts == []


# -- the command line ----------------------------------------------------------------------


def test_remember_with_a_project_then_run_dream_offline_puts_the_fact_in_the_projects_memory(workspace, tmp_path,
                                                                                              cli_runner):
    proj = tmp_path / "proj"
    proj.mkdir()
    res = cli_runner.invoke(cli, ["remember", "I prefer tabs", "--project", str(proj)])
    assert res.exit_code == 0, res.stderr
    res = cli_runner.invoke(cli, ["remember", "In this project we use black for formatting", "--project", str(proj)])
    assert res.exit_code == 0
    res = cli_runner.invoke(cli, ["run", "dream", "--llm", "offline", "--json"])
    assert res.exit_code == 0, res.stderr
    report = msgspec.json.decode(res.stdout)
    assert report["llm"] == "offline" and [r["outcome"] for r in report["runs"]] == ["valid"]
    assert read(str(proj / "memory" / "MEMORY.md")) == (
        "# Memory\n\n## Project Context\n\n- In this project we use black for formatting\n")
    assert read(os.path.join(workspace, "memory", "MEMORY.md")) == "# Memory\n\n## User Profile\n\n- I prefer tabs\n"


def test_remember_with_a_relative_project_path_means_that_directory_wherever_dream_runs(workspace, tmp_path,
                                                                                      cli_runner, monkeypatch):
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(tmp_path)
    res = cli_runner.invoke(cli, ["remember", "In this project we use black for formatting", "--project", "proj"])
    assert res.exit_code == 0
    monkeypatch.chdir("/")
    res = cli_runner.invoke(cli, ["run", "dream", "--llm", "offline"])
    assert res.exit_code == 0, res.stderr
    assert read(str(proj / "memory" / "MEMORY.md")) == (
        "# Memory\n\n## Project Context\n\n- In this project we use black for formatting\n"), \
        "a relative --project must name the directory it named when the note was taken"


def test_remember_rejects_empty_text(workspace, cli_runner):
    res = cli_runner.invoke(cli, ["remember", "   "])
    assert res.exit_code == 3 and "empty" in res.stderr


def test_run_dream_retry_failed_on_the_command_line(workspace, cli_runner):
    ws = Workspace.open(workspace, writable=True)
    c1 = remember(ws, "I prefer tabs over spaces")
    [old] = run_dream(ws, FakeLLM(LLMCallError("timed out", kind="timeout"))).runs
    ws.close()
    res = cli_runner.invoke(cli, ["run", "dream", "--llm", "offline"])
    assert res.exit_code == 0
    ws = Workspace.open(workspace)
    assert [r.run_id for r in ws.dream_runs.runs()] == [old.run_id]
    ws.log.close()
    res = cli_runner.invoke(cli, ["run", "dream", "--retry-failed", "--llm", "offline", "--json"])
    assert res.exit_code == 0, res.stderr
    [run] = msgspec.json.decode(res.stdout)["runs"]
    assert run["retry_of"] == old.run_id and run["cursors"] == [c1] and run["outcome"] == "valid"
    assert read(os.path.join(workspace, "memory", "MEMORY.md")).endswith("- I prefer tabs over spaces\n")


@pytest.mark.parametrize(("args", "flag"), [
    (["run", "snapshot", "some-key"], "KEY"),
    (["run", "dream", "some-key"], "KEY"),
    (["run", "digest", "--retry-failed"], "--retry-failed"),
    (["run", "consolidate", "--retry-failed"], "--retry-failed"),
])
def test_run_usage_errors_exit_2_naming_the_flag(workspace, cli_runner, args, flag):
    res = cli_runner.invoke(cli, args)
    assert res.exit_code == 2
    assert flag in res.stderr
    ws = Workspace.open(workspace)
    assert ws.log.last_seq == 0, "a usage error must not touch the log"
    ws.log.close()


def test_dream_with_nothing_pending_calls_no_model_and_appends_nothing(ws):
    llm = FakeLLM()
    report = run_dream(ws, llm)
    assert report.runs == [] and llm.history == [] and ws.log.last_seq == 0


def test_dream_prompt_asks_for_both_sections(ws):
    remember(ws, "I prefer tabs over spaces")
    llm = FakeLLM(GOOD)
    run_dream(ws, llm)
    p = llm.history[0]
    assert p.purpose == "dream" and p.system == SYSTEM
    assert "## User Profile" in p.system and "## Project Context" in p.system
    assert "I prefer tabs over spaces" in p.user


def test_dream_run_ids_and_claims_stay_consistent_across_many_runs(ws):
    start = time.monotonic()
    claimed: list[int] = []
    for i in range(15):
        claimed.append(remember(ws, f"I prefer option {i} for thing {i}"))
        run_dream(ws, FakeLLM(NOTHING if i % 3 else LLMCallError("x", kind="server")))
    claims = [c for e in events(ws, CursorAdvanced) for c in e.cursors]
    assert claims == claimed, "every entry claimed exactly once, in order"
    runs = ws.dream_runs.runs()
    assert len({r.run_id for r in runs}) == 15
    assert sum(r.failed for r in runs) == 5
    assert time.monotonic() - start < 10
