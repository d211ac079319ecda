"""Ordinary statements of a slot are kept, so a later statement about the slot can supersede them (issue 21).

The "keep" round (``processors/extract/keep.py``): the clause of a user's sentence that states
where they live or work, what to call them, what a project's thing runs on or is built with, or
how the assistant should answer, is a fact; a later statement of the same slot supersedes it.
``KEEP_CASES`` were written by the author of the code after the eighth held-out set was read,
before they were first run (batch 1: measured once, then tuned on); ``NOT_CORRECTIONS`` must
replace nothing. ``pytest tests/processors/test_corrections_keep.py -q -s`` prints the rates.
"""

from __future__ import annotations

import pytest

from processors.extract import keep
from tests.memory_pipeline import Case, failures_of, show, wrongly_replaced

KEEP_CASES = [
    # where the user lives, said in passing
    Case("based in, aside", ("I'm based in Porto, in case the time zone matters.",
                             "Small update: we moved to Madrid in January."), "Madrid", "Porto"),
    Case("settled in", ("I live in Leeds.", "finally got settled in York after the move"), "York", "Leeds"),
    Case("relocated lead-in", ("Heads up: I'm based in Nairobi.", "fyi we relocated to Kigali last month."),
         "Kigali", "Nairobi"),
    # employer and role
    Case("employed at", ("I'm employed part-time at Siemens.", "I left Siemens and joined Bosch in May."),
         "Bosch", "Siemens"),
    Case("started at, no subject", ("I work at Zalando as a data engineer.", "Started at Spotify last week!"),
         "Spotify", "Zalando"),
    Case("student to job", ("I'm a master's student at KTH.", "I've joined Ericsson as a radio engineer."),
         "Ericsson", "KTH"),
    Case("drinker to person", ("I'm basically a coffee drinker.", "I've become a tea person lately."),
         "tea", "coffee"),
    # names asked of the assistant
    Case("you can call me", ("You can call me Robert.", "Actually, call me Bob from now on."), "Bob", "Robert"),
    Case("address me as", ("Please address me as Prof. Lindqvist in drafts.", "Please just address me as Eva."),
         "Eva", "Lindqvist"),
    Case("refer to me as", ("Feel free to refer to me as Max.", "Actually, call me Maximilian these days."),
         "Maximilian", "Max"),
    # a project's thing: where it runs, what it is built with (no "we", no "uses")
    Case("deployed on", ("The API is deployed on Render.", "The API is hosted on Railway now."), "Railway", "Render"),
    Case("goes through", ("Email goes through Postmark.", "Email goes out through Resend these days."),
         "Resend", "Postmark"),
    Case("built with version", ("The admin UI is built with Angular 14.",
                                "fyi I finished the Angular 17 upgrade, so the new control flow works."), "17", "14"),
    Case("prod is running", ("Our staging DB is MySQL 5.7.",
                             "The migration is done, staging is running MySQL 8.0."), "8.0", "5.7"),
    Case("handled by", ("Payments are handled by Stripe.", "Payments are handled by Adyen since we renegotiated."),
         "Adyen", "Stripe"),
    Case("tracked in", ("Bugs are tracked in Jira.", "Bugs are tracked in Linear now."), "Linear", "Jira"),
    Case("clause after aside", ("The docs site is deployed on Netlify.",
                                "Small change, the docs site is deployed on Cloudflare Pages now."),
         "Cloudflare", "Netlify"),
    # how the assistant answers
    Case("answer style", ("Please keep answers brief, no more than five lines.",
                          "Actually, I'd rather you explain the reasoning in full."), "reasoning", "five lines"),
    Case("answer language", ("Please answer in German.", "Actually, answer in English from now on."),
         "English", "German"),
    # forgetting a part by name
    Case("scratch the part", ("I have a dog called Rex, and I'm allergic to shellfish.",
                              "Scratch what I said about the allergy, that was my sister."), "Rex", "shellfish"),
    Case("forget the part about", ("Our stack is Django on the backend and Svelte on the frontend.",
                                   "Forget the part about Svelte - nothing is decided there."), "Django", "Svelte"),
    # Chinese
    Case("zh version upgrade", ("项目用的是 Rails 6.1。", "上个月把 Rails 升到 7.1 了。"), "7.1", "6.1"),
    Case("zh reinstall", ("我的笔记本装的是 Fedora 38。", "重装了一下，现在装的是 Fedora 40。"), "40", "38"),
    Case("zh job agentive", ("我是一名小学英语老师。", "我已经转行了，现在在一家游戏公司做策划师。"), "策划师", "英语老师"),
    Case("zh call me", ("叫我阿杰就行。", "其实我更喜欢别人叫我杰哥。"), "杰哥", "阿杰"),
    Case("zh answer language", ("回复请用中文。", "以后用英文回复吧。"), "英文", "中文"),
    Case("zh topic service", ("支付这块我们用的是 Stripe。", "支付改成自建的 Adyen 了。"), "Adyen", "Stripe"),
    Case("zh forget topic", ("我有一只猫，我们家还养了一条柯基。", "柯基那个你忘掉吧，是我朋友家的。"), "猫", "柯基"),
    Case("zh live and work", ("我在成都工作生活。", "上个月我们搬去重庆了。"), "重庆", "成都"),
]

#: Batch 2, written after batch 1 passed and before it was first run (measured once, then tuned on; see the notes).
KEEP_CASES_2 = [
    Case("in city these days", ("I'm in Hamburg for work, mostly.", "I'm in Munich these days, the Hamburg job ended."),
         "Munich", "Hamburg"),
    Case("currently at", ("I'm currently at Atlassian.", "These days I'm at Canva, moved over in spring."),
         "Canva", "Atlassian"),
    Case("everyone calls me", ("Call me Kate.", "Everyone calls me Katie now, so use that."), "Katie", "Kate"),
    Case("we're on node", ("We're on Node 18 for the workers.", "We're on Node 22 now, the workers too."), "22", "18"),
    Case("database is", ("Our database is Postgres.", "Our database is CockroachDB now."), "CockroachDB", "Postgres"),
    Case("logs go to", ("Logs go to Loki.", "Logs go to Datadog now, we dropped the self-hosted stack."),
         "Datadog", "Loki"),
    Case("tests run under", ("Tests run under Jest.", "Tests run under Vitest these days."), "Vitest", "Jest"),
    Case("ci is", ("CI is GitHub Actions.", "CI is Buildkite now, the macOS runners were too slow."),
         "Buildkite", "GitHub Actions"),
    Case("repo lives on", ("The repo lives on GitHub.", "The repo lives on GitLab since the migration."),
         "GitLab", "GitHub"),
    Case("prefer answers", ("I prefer short answers.", "I prefer detailed answers now, with examples."),
         "detailed", "short"),
    Case("reply language", ("Reply in Spanish, please.", "From now on, reply in English."), "English", "Spanish"),
    Case("frontend built", ("The frontend is written in Vue 2.", "The frontend is written in Vue 3 since the rewrite."),
         "Vue 3", "Vue 2"),
    Case("zh live now", ("我住在杭州。", "我现在住在苏州了。"), "苏州", "杭州"),
    Case("zh ci moved", ("我们的 CI 用的是 GitLab CI。", "CI 已经迁到 GitHub Actions 了。"), "GitHub", "GitLab"),
    Case("zh node version", ("我们的服务跑在 Node 16 上。", "服务已经升级到 Node 20 了。"), "20", "16"),
    Case("zh call me", ("叫我老李吧。", "以后叫我李工就行。"), "李工", "老李"),
]

#: Batch 3, written after batch 2 passed and before it was first run (measured once, then tuned on; see the notes).
KEEP_CASES_3 = [
    Case("live, lowercase city", ("i'm living in lisbon at the moment", "we moved to porto in june"), "porto", "lisbon"),
    Case("from X originally, now", ("I work out of our Dublin office.", "I work out of the Cork office now."),
         "Cork", "Dublin"),
    Case("my job is", ("My job is frontend developer at Klarna.", "I'm a staff engineer at Klarna now."),
         "staff engineer", "frontend developer"),
    Case("name, goes by", ("I'm Jonathan, by the way.", "Most people call me Jon, please do too."), "Jon", "Jonathan"),
    Case("the project uses version", ("This project targets Java 17.", "We moved the project to Java 21 last week."),
         "21", "17"),
    Case("runs on, lower", ("The cron jobs run on Airflow.", "The cron jobs run on Dagster now."), "Dagster", "Airflow"),
    Case("stored in", ("Uploads are stored in S3.", "Uploads are stored in Cloudflare R2 since April."), "R2", "S3"),
    Case("monitoring via", ("Monitoring is done via Grafana.", "Monitoring is done via Honeycomb these days."),
         "Honeycomb", "Grafana"),
    Case("answers bullets", ("Keep your answers in bullet points please.", "Actually, keep your answers in prose."),
         "prose", "bullet"),
    Case("schedule moved", ("Our standup is on Mondays.", "Standup moved to Tuesdays."), "Tuesdays", "Mondays"),
    Case("zh role now", ("我是一名后端工程师。", "我现在转做产品经理了。"), "产品经理", "后端工程师"),
    Case("zh db is", ("我们的数据库是 MySQL。", "数据库已经换成 PostgreSQL 了。"), "PostgreSQL", "MySQL"),
    Case("zh deployed", ("我们的服务部署在阿里云上。", "服务现在迁移到腾讯云了。"), "腾讯云", "阿里云"),
    Case("zh editor", ("我平时用 VS Code 写代码。", "我现在改用 Cursor 写代码了。"), "Cursor", "VS Code"),
]

NOT_CORRECTIONS = [
    Case("not: brother based", ("I'm based in Porto.", "My brother is based in Braga, so I visit often."), "Porto", ""),
    Case("not: manager's name", ("You can call me Robert.", "My manager's name is Alan, if he shows up in mails."),
         "Robert", ""),
    Case("not: another thing deployed", ("The API is deployed on Render.",
                                         "The marketing site is deployed on Webflow."), "Render", ""),
    Case("not: also handled", ("Payments are handled by Stripe.",
                               "Invoices are also handled by Stripe Billing."), "Stripe", ""),
    Case("not: question about hosting", ("The API is deployed on Render.", "Would Fly.io be cheaper for the API?"),
         "Render", ""),
    Case("not: hypothetical style", ("Please keep answers brief.", "If I ask for a report, I'd rather you explain it in full."),
         "brief", ""),
    Case("not: one answer in detail", ("Please keep answers brief.", "Explain this one error in detail please."),
         "brief", ""),
    Case("not: one-off deploy", ("The API is deployed on Render.", "I deployed a demo on Vercel yesterday."),
         "Render", ""),
    Case("not: son goes by", ("Call me Robert.", "My son goes by Bobby at school."), "Robert", ""),
    Case("not: one document detailed", ("Please keep answers brief.", "For this PR description, keep it detailed."),
         "brief", ""),
    Case("not: other tests", ("Tests run under Jest.", "The e2e tests run under Playwright."), "Jest", ""),
    Case("not: metrics now", ("Logs go to Loki.", "Metrics go to Prometheus now."), "Loki", ""),
    Case("not: conference trip", ("I'm based in Porto.", "Next week I'm in Lisbon for a conference."), "Porto", ""),
    Case("not: zh friend call", ("叫我阿杰就行。", "我朋友都叫他小刘。"), "阿杰", ""),
    Case("not: zh also stripe", ("支付这块我们用的是 Stripe。", "发票这块另外用了 Paddle。"), "Stripe", ""),
]

TARGET = 0.9
FLOOR_3 = 0.92  # batch 3: 11/14 measured once, 12/14 after tuning, 13/14 with round 8
FLOOR_2 = 1.0  # batch 2: 11/16 measured once, 16/16 after tuning
FLOOR = 1.0  # batch 1: 28/29 measured once, 29/29 after tuning; never lower


@pytest.mark.parametrize(("batch", "cases", "floor"), [("batch 1", KEEP_CASES, FLOOR), ("batch 2", KEEP_CASES_2, FLOOR_2),
                                                     ("batch 3", KEEP_CASES_3, FLOOR_3)])
def test_ordinary_statements_of_a_slot_are_kept_and_superseded(evlog_home, capsys, batch, cases, floor):
    failures = failures_of(cases, evlog_home)
    ok = len(cases) - len(failures)
    show(capsys, f"keep corrections, {batch}: {ok}/{len(cases)} = {ok / len(cases):.0%} (target {TARGET:.0%})", failures)
    assert ok / len(cases) >= floor, "\n".join(failures)


def test_statements_that_are_not_corrections_replace_nothing(evlog_home, capsys):
    wrong = wrongly_replaced(NOT_CORRECTIONS, evlog_home)
    show(capsys, f"not corrections, wrongly replaced or lost: {len(wrong)}/{len(NOT_CORRECTIONS)}", wrong, "WRONG")
    assert not wrong, "\n".join(wrong)


def test_the_clause_that_states_a_slot_is_found_and_asides_are_left_behind():
    assert keep.slot_clause("I'm based in Lyon, just so you know for time zones.") == "I'm based in Lyon."
    assert keep.slot_clause("The upgrade went through, prod is running PostgreSQL 16.") == \
        "Prod is running PostgreSQL 16."
    assert keep.slot_clause("Error tracking is handled by Datadog since we consolidated vendors.") == \
        "Error tracking is handled by Datadog."
    assert keep.slot_clause("ok so update, just got settled in Denver after the job transfer") == \
        "I just got settled in Denver."  # "after the ...": a clause of time with its own subject is cut
    assert keep.slot_clause("You can call me Alexander.") == "Call me Alexander."
    assert keep.slot_clause("Please address me as Dr. Okafor in emails you draft.") == \
        "I want to be called Dr. Okafor."


def test_project_statements_need_a_thing_subject_and_a_name_shaped_value():
    assert keep.project_statement("Background jobs go through RabbitMQ")
    assert keep.project_statement("The app is deployed on Heroku")
    assert keep.project_statement("Infra is managed with Pulumi in TypeScript")
    assert not keep.project_statement("The app is deployed on Monday")  # a weekday is no value
    assert not keep.project_statement("My brother is running Arch Linux")  # a person, no project's thing
    assert not keep.project_statement("The tests are run with pytest")  # no name's shape: left to the signals
    assert not keep.project_statement("He goes to Berlin")
    assert keep.slot_clause("Would Rust be a better fit for the service?") is None
    assert keep.project_statement("CI is GitHub Actions")
    assert not keep.project_statement("The problem is React")  # talk about the work at hand
    assert not keep.project_statement("The bug is in Chrome")
    assert not keep.project_statement("Please use Katherine from now on")  # a request, no thing-subject
    assert not keep.project_statement("Always run Prettier")
    assert not keep.project_statement("The file is in Downloads")  # where a file is: no project's thing
    assert keep.slot_clause("The staging password is Swordfish.") is None  # a secret is never a fact


def test_answer_style_is_a_preference_in_the_third_person():
    assert keep.answer_style("Please keep answers short, bullet points only.") == \
        "The user wants the assistant's answers short, bullet points only."
    assert keep.answer_style("Actually, I'd rather you explain things in detail.") == \
        "The user would rather the assistant explain things in detail."
    assert keep.answer_style("If it's long, I'd rather you explain it in a list.") is None
    assert keep.answer_style("Explain this error please.") is None
