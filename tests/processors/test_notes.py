"""Notes are kept (issue 21, item 4): every note the user gives is kept or refused with the reason.

Kept: rewritten in the third person when that works, verbatim otherwise, through the real
pipeline (``remember`` then Dream with the offline extractor). Refused: a secret or a
request for work, with the reason, and then nothing is written. ``evlog remember`` prints
either.
"""

from __future__ import annotations

import pytest

from eventlog.app import memory
from eventlog.app.workspace import Workspace, init_workspace
from eventlog.cli import cli
from eventlog.errors import InvalidEventError
from processors.dream import remember
from tests.memory_pipeline import dream

#: (note, what the kept fact must say)
KEPT = [
    ("I'm vegetarian.", "The user is vegetarian."),
    ("I am severely allergic to peanuts and shellfish.", "The user is severely allergic to peanuts and shellfish."),
    ("My birthday is on 3 March.", "The user's birthday is on 3 March."),
    ("Call me Sam.", "The user wants to be called Sam."),
    ("I hate cilantro.", "The user hates cilantro."),
    ("My daughter's name is Ada.", "The user's daughter's name is Ada."),
    ("I use a standing desk.", "The user uses a standing desk."),
    ("Always run ruff before committing.", "The user wants the assistant to always run ruff before committing."),
    ("Never push to main.", "The user wants the assistant to never push to main."),
    ("Peanuts are dangerous.", "Peanuts are dangerous."),
    ("The staging server is staging.acme.dev.", "The staging server is staging.acme.dev."),
    ("I'm on call this week.", "The user is on call"),
    ("我对花生过敏。", "用户对花生过敏"),
    ("Tabs, not spaces.", "Tabs, not spaces."),
    # a note that reads as a change of something memory does not hold states what holds now
    ("I no longer eat gluten.", "The user no longer eats gluten."),
    ("I don't drink alcohol anymore.", "The user doesn't drink alcohol anymore."),
    ("我已经不喝咖啡了。", "用户已经不喝咖啡了"),
]
#: (note, a word of the reason)
REFUSED = [
    ("My password is hunter22", "secret"),
    ("the api key is sk-live-thing-1234", "secret"),
    ("Run the tests now.", "request for work"),
    ("Fix the login bug.", "request for work"),
]


@pytest.fixture
def ws(evlog_home):
    init_workspace(str(evlog_home))
    w = Workspace.open(str(evlog_home), writable=True)
    yield w
    w.close()


@pytest.mark.parametrize(("note", "fact"), KEPT, ids=[k[0] for k in KEPT])
def test_a_note_is_kept_in_the_third_person_or_verbatim(ws, note, fact):
    remember(ws, note)
    dream(ws)
    texts = [f.text for f in memory.facts(ws)]
    assert any(t.startswith(fact) for t in texts), texts


@pytest.mark.parametrize(("note", "why"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_refused_note_says_why_and_writes_nothing(ws, note, why):
    end = ws.log.last_seq
    with pytest.raises(InvalidEventError, match=why):
        remember(ws, note)
    assert ws.log.last_seq == end


def test_a_note_that_corrects_a_fact_supersedes_it(ws):
    remember(ws, "I live in Berlin.")
    dream(ws)
    remember(ws, "I moved to Lisbon last month.")
    dream(ws)
    active = [f.text for f in memory.facts(ws)]
    assert any("Lisbon" in t for t in active) and not any("Berlin" in t for t in active), active


def test_evlog_remember_prints_what_is_kept_or_why_it_is_refused(evlog_home, cli_runner):
    init_workspace(str(evlog_home))
    ok = cli_runner.invoke(cli, ["remember", "I'm vegetarian."])
    assert ok.exit_code == 0, ok.output
    assert "The user is vegetarian." in ok.output
    bad = cli_runner.invoke(cli, ["remember", "My password is hunter22"])
    assert bad.exit_code != 0
    assert "secret" in bad.output
