"""``processors.extract.frames``: the frame a change statement keeps, and the statements that change nothing."""

from __future__ import annotations

import pytest

from processors.extract import frames


@pytest.mark.parametrize(("old", "new"), [
    ("The team uses Mailchimp for newsletters.", "Newsletters go out through Buttondown now."),
    ("The team hosts the site on Netlify.", "The site is hosted on Vercel these days."),
    ("The team runs Postgres 12 in staging.", "Staging got bumped to Postgres 15 yesterday."),
    ("The team's CI runs on Jenkins.", "CI moved to GitHub Actions."),
    ("The team deploys with Ansible.", "Deployments are done with Terraform now."),
    ("团队的数据库是 MySQL。", "数据库迁移到 PostgreSQL 了。"),
    ("The team runs tests with pytest.", "Tests run under nox now."),  # lower-case values: half the frame kept
])
def test_a_statement_keeping_the_frame_and_swapping_a_value_targets_the_fact(old, new):
    assert frames.frame_score(old, new) >= frames.MIN_FRAME
    assert frames.frame_target(new, ["The user lives in Oslo.", old]) == 1


@pytest.mark.parametrize(("old", "new"), [
    ("The team uses Jest for unit tests.", "The team now uses Playwright for browser tests."),  # another kind of test
    ("The team uses Postgres for the main database.", "The team now uses Redis for caching."),  # only "uses" shared
    ("The user uses Firefox as the user's browser.", "Firefox is slow these days."),  # no new value
    ("The team uses Docker for local development.", "The team now uses Kubernetes in production."),
    ("The user's manager is Priya.", "Priya moved to Toronto."),  # only the name shared: about Priya
    ("The user drinks coffee in the morning.", "The user drinks tea in the evening now."),  # a third of the frame
])
def test_a_statement_of_another_frame_or_without_a_new_value_targets_nothing(old, new):
    assert frames.frame_target(new, [old]) is None


@pytest.mark.parametrize("text", ["If I moved to Lisbon I'd learn Portuguese.", "We might move to GCP next year.",
                                  "I'm thinking about leaving Google.", "Maybe I'll move to Stockholm someday.",
                                  "I'm planning to switch to Linux.", "如果我搬到上海，我会学上海话。", "我打算换工作。"])
def test_a_hypothetical_or_a_plan_is_irrealis(text):
    assert frames.irrealis(text)


@pytest.mark.parametrize("text", ["I live in Warsaw now.", "Please call me Sasha from now on.", "I'd like to be called Sam.",
                                  "We moved to York last month.", "我现在搬到济南了。",
                                  "Since May I've been living in Mombasa."])  # the month, not the modal
def test_a_statement_of_what_holds_is_not_irrealis(text):
    assert not frames.irrealis(text)


@pytest.mark.parametrize(("text", "added"), [("I also use Vim for quick edits.", True), ("We use Redis as well.", True),
                                             ("我们现在也用 Redis 做缓存。", True), ("I use Vim now.", False),
                                             ("我现在用 Vim。", False)])
def test_also_adds_a_fact(text, added):
    assert frames.additive(text) is added


@pytest.mark.parametrize(("new", "old", "other"), [
    ("The user's brother moved to Hamburg.", "The user lives in Munich.", True),
    ("The user lives in Lyon.", "The user's sister lives in Paris.", True),
    ("Tom lives in Vienna now.", "The user lives in Munich.", True),
    ("用户朋友搬到上海了。", "用户住在北京。", True),
    ("The user's notes live in Obsidian now.", "The user writes the user's notes in Notion.", False),
    ("Formatting moved from Black to Ruff's formatter.", "The team formats code with Black.", False),
    ("The user's manager is Raj now.", "The user's manager is Priya.", False),
    ("Tom lives in Vienna now.", "Tom lives in Berlin.", False),
])
def test_a_statement_about_another_person_is_not_about_the_users_fact(new, old, other):
    assert frames.other_subject(new, old) is other


def test_another_wording_of_the_replaced_fact_goes_with_it():
    old, new = "The team tracks issues in Jira.", "The team switched the team's issue tracking to Linear."
    assert frames.replaced_values(old, new) == ["Jira"]
    assert frames.same_change("Work on the project is tracked as Jira tickets.", old, new)
    assert not frames.same_change("The team logs time in Jira.", old, new)  # Jira, but another frame
    assert not frames.same_change("The team tracks bugs in GitHub.", old, new)  # the frame, but not the value


@pytest.mark.parametrize(("text", "change"), [("Staging got bumped to Postgres 15 yesterday.", True),
                                              ("Newsletters go out through Buttondown now.", True),
                                              ("Don't add emojis to commit messages.", False),  # an instruction
                                              ("Never push to main directly.", False),
                                              ("Tests aren't flaky.", False)])  # a negation is no change
def test_a_statement_without_a_first_person_reports_a_change_only_with_a_sign_of_change(text, change):
    assert frames.reports_change(text) is change
