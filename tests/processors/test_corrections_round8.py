"""Round 8 of corrections by meaning: lower-case typing, a change in two sentences, loose partial forgets, first
statements of a thing's name, a lower-case tool and a schedule, a version named without a word of change.

The wordings here are this file's own (none is taken from a correction set); each test would fail on the code
before round 8 (checked once by running it there), except the not-corrections, which hold on both.
"""

from __future__ import annotations

import pytest

from processors.extract import change, truecase
from processors.extract import slots as sl
from tests.memory_pipeline import Case, failures_of, wrongly_replaced

# -- truecase: the pronoun, the facts' names, a lower-case sentence's frame values ----------------------------------


def test_the_pronoun_i_is_restored_in_every_form():
    assert truecase.truecased("i think i'm done, i've said it", []) == "I think I'm done, I've said it"


def test_a_name_a_known_fact_holds_is_restored_in_its_spelling():
    known = ["The user works at DuckDuckGo.", "The user's doctor is at St Anne's Clinic."]
    assert truecase.truecased("left duckduckgo, st anne's clinic was far", known) == \
        "left DuckDuckGo, St Anne's Clinic was far"


def test_a_lower_case_sentence_has_its_frame_values_capitalised():
    assert truecase.truecased("we relocated to hobart last spring", []) == "we relocated to Hobart last spring"
    assert truecase.truecased("just joined monzo", []) == "just joined Monzo"
    assert truecase.truecased("i switched to zed for coding", []) == "I switched to Zed for coding"


def test_function_words_and_a_common_word_of_the_facts_stay_lower_case():
    assert truecase.truecased("we moved to a new flat", []) == "we moved to a new flat"
    assert truecase.truecased("switched to dark theme", ["The user prefers a light theme."]) == \
        "switched to dark theme"  # "theme" is a word the facts hold in lower case: no name


def test_a_sentence_with_capitals_of_its_own_keeps_its_casing():
    assert truecase.truecased("Moved to the Bay Area, love it here", []) == "Moved to the Bay Area, love it here"


def test_a_word_before_a_dotted_version_is_a_name_in_lower_case_typing():
    assert truecase.truecased("the service runs on ruby 3.3", []) == "the service runs on Ruby 3.3"


def test_a_word_the_facts_hold_capitalised_and_in_lower_case_is_not_restored():
    known = ["The team chats on Slack.", "The user cuts the new hires some slack."]
    assert truecase.truecased("give them slack", known) == "give them slack"


# -- slots a first statement keeps ---------------------------------------------------------------------------------


def test_a_things_name_and_its_rename_fill_one_slot():
    first, later = sl.slots("The service is named ledger-api."), sl.slots("The service got renamed to books-api.")
    assert [(x.kind, x.key, x.value) for x in first] == [("has", "service", "ledger-api")]
    assert [(x.kind, x.key, x.value) for x in later] == [("has", "service", "books-api")]


def test_a_lower_case_tool_of_ones_own_thing_is_a_slot():
    assert [(x.kind, x.key, x.value) for x in sl.slots("Our linter uses ruff.")] == [("use", "linter", "ruff")]


@pytest.mark.parametrize("said, key", [
    ("The weekly report job runs at 6am UTC.", "job"),
    ("Our deploys go out every two weeks.", "deploys"),
    ("Retro is every other Friday.", "retro"),
])
def test_a_recurring_things_time_is_a_schedule_slot(said, key):
    assert any(x.kind == "schedule" and x.key == key for x in sl.slots(said))


# -- the change path --------------------------------------------------------------------------------------------------


def test_a_known_tools_other_version_is_a_change_without_a_word_of_change():
    facts = ["The team uses Angular 15 for the admin app.", "The user lives in Porto."]
    assert change.target("Angular 17 everywhere since the rewrite", facts) == 0
    assert change.target("Angular 15 and Angular 17 side by side for a while", facts) is None  # the old one named


def test_been_living_since_is_a_sign_of_change():
    assert change.marked("been living in Graz since the summer")


def test_too_is_an_addition_only_at_a_clause_end():
    facts = ["The user lives in Porto."]
    assert change.target("these days I live in Braga, Porto got too expensive", facts) == 0
    assert change.target("I live in Braga now too.", facts) is None


def test_a_unit_after_the_new_value_is_no_old_value_named_again():
    assert change.repeated_names("moved the cron to 5am UTC", "The cron runs at 3am UTC.") == []


def test_it_is_after_ones_own_thing_names_its_new_value():
    assert sl.restate_clause("I replaced my laptop, it's a ThinkPad X1 now", []) == "My laptop is a ThinkPad X1"


# -- through the pipeline -------------------------------------------------------------------------------------------

CASES = [
    Case("lower-case move", ("I live in Hamburg.", "finally moved to bremen, the flat is bigger"), "Bremen", "Hamburg"),
    Case("two sentences", ("I work at Zalando.", "quit zalando in june. I'm at Delivery Hero now"),
         "Delivery Hero", "Zalando"),
    Case("killed box, two sentences", ("Our builds run on TeamCity.",
                                       "we finally shut down the teamcity server. builds run on Buildkite now"),
         "Buildkite", "TeamCity"),
    Case("pointed forget", ("I have a parrot named Kiwi and I teach yoga on weekends.",
                            "Kiwi flew off last month so scratch that part, still teaching yoga though"),
         "yoga", "Kiwi"),
    Case("stuff forget", ("I collect vinyl records and I run a book club.", "please forget the vinyl stuff, sold them all"),
         "book club", "vinyl"),
    Case("zh pointed forget", ("我养了一只仓鼠，平时喜欢下围棋。", "仓鼠上周走了，这条你删了吧。围棋还在下"), "围棋", "仓鼠"),
    Case("no longer, one clause of two", ("I'm learning the cello and I use a split keyboard.",
                                          "no longer learning the cello, no time 😕 keyboard is the same"),
         "split keyboard", "cello"),
    Case("renamed thing", ("The repo is named orders-svc.", "the repo got renamed to checkout-svc last week"),
         "checkout-svc", "orders-svc"),
    Case("lower-case tool", ("Our tests use nose.", "we moved the test suite to pytest"), "pytest", "nose"),
    Case("schedule by the clock", ("The nightly export job runs at 1am UTC.",
                                   "changed the export job to 3am utc, it clashed with backups"), "3am", "1am"),
]
NOT_CORRECTIONS = [
    Case("not: lower-case trip", ("I live in Hamburg.", "flying to lisbon for a conference next week"), "Hamburg", ""),
    Case("not: other person lower case", ("I work at Zalando.", "my sister just joined spotify"), "Zalando", ""),
    Case("not: scratch that, another topic", ("I have a parrot named Kiwi.", "what's a good pasta recipe?"), "Kiwi", ""),
]


def test_round8_corrections_end_with_only_the_new_value_active(tmp_path):
    assert failures_of(CASES, tmp_path) == []


def test_round8_statements_that_are_not_corrections_replace_nothing(tmp_path):
    assert wrongly_replaced(NOT_CORRECTIONS, tmp_path) == []
