"""Held-out set 15 for corrections by meaning: written blind, nobody tuned on it.

How it was written: by the helper "blind15" on 2026-12-04, without reading evlog's code (processors/,
projections/, eventlog/), its docs (docs/, README.md, CHANGELOG), or any other tests/processors/test_corrections*
file's cases: the only inputs were tests/memory_pipeline.py (the Case class and helpers) and the harness of
held-out set 14 (its module docstring, imports, the FLOOR/NOT_FLOOR/_CJK lines, its list assembly and its
three test functions). The people, places, companies, tools and wordings are new. The file was run once only,
to check that it executes, with the failing cases filtered out of the output unseen; the cases were not edited
after that run.

What it covers:
- HELD_OUT_15: 60 corrections (45 English, 15 simplified Chinese): moves (city, country, neighbourhood), jobs
  (company, role, quitting, starting, retiring, a contract that ended, a layoff told in the passive), names
  (a misspelling corrected, a married name) and how to address the user, a project's tools and versions
  (language and its version, runtime version, framework, database version, OS, CI, hosting, package manager,
  editor, test runner, linter, cloud, queue, deploy tool), preference reversals (food, drink, diet, schedule,
  code style, UI theme), partial forgets ("forget the part/bit about ...": the first message said two things,
  `active` is the part kept, `gone` the part forgotten), temporary facts that ended (a stay "until Friday", a
  conference trip, a loaner laptop, a business trip). Styles vary: lower case, typos, emoji, two sentences,
  the change in the middle of other talk, an unrelated message in between, "used to", "switched from X to Y",
  "no longer", "not X anymore", "replaced X with Y", "these days", "as of", "nowadays", "turns out",
  "correction:", "scratch that", the passive voice, and third-person mistakes the user fixes ("no, I'm in X,
  not Y").
- NOT_CORRECTIONS_15: 20 statements (15 English, 5 Chinese) that mention the same kind of slot but change
  nothing (a friend's, coworker's, partner's or sibling's move, job, name or tool, a hypothetical, a plan that
  may not happen, a question, a past fact told as history, an added second tool, a one-off, a joke, a trip, a
  negated wish, a restatement, a client's stack); the first fact must stay active.

Floors: measured by the lead on main at 8aaf7d6 (37/60 and 20/20), before round 12's extractor changes, and
after its corr12 and quality12 merges (39/60 and 20/20) and its keep12 merge (40/60 and 20/20), without reading
which cases fail.
Do not tune the extractor on these cases, and do not edit them after seeing results.

Run: python -m pytest tests/processors/test_corrections_heldout15.py -q -s
"""

from __future__ import annotations

import re

from tests.memory_pipeline import Case, failures_of, show, wrongly_replaced

FLOOR = 0.66  # share of HELD_OUT_15 handled: 37/60 on main at 8aaf7d6 (measured once by the writer and once by the lead), 39/60 after corr12+quality12, 40/60 after keep12 (2026-12-04)
NOT_FLOOR = 0.95  # share of NOT_CORRECTIONS_15 kept: 20/20 on main at 8aaf7d6 (one case of slack, as sets 11-14)

_ENGLISH = [
    # moves: city, country, neighbourhood
    Case("h15_move_city_plain",
         ("I live in Trondheim.",
          "We moved to Bergen last month. The rain is somehow worse."),
         active="Bergen", gone="Trondheim"),
    Case("h15_move_city_lowercase_typo",
         ("i'm based in ljubljana",
          "relocated to maribor this weekend, finaly unpacked the last boxes"),
         active="maribor", gone="ljubljana"),
    Case("h15_move_country_used_to",
         ("I live in Uruguay.",
          "I used to live in Uruguay, but these days I'm in Paraguay."),
         active="Paraguay", gone="Uruguay"),
    Case("h15_move_country_emoji",
         ("I'm based in Kenya.",
          "Moved to Rwanda for the new role 🇷🇼 still getting used to the hills"),
         active="Rwanda", gone="Kenya"),
    Case("h15_move_neighbourhood_update",
         ("My flat is in Kallio.",
          "Quick update: we're in Vallila now, closer to the tram depot."),
         active="Vallila", gone="Kallio"),
    Case("h15_move_third_person_fix",
         ("I live in Rosario.",
          "my aunt told the whole group chat I'm still in Rosario. no, I'm in Mendoza now, not Rosario 🙃"),
         active="Mendoza", gone="Rosario"),
    Case("h15_move_as_of_unrelated_between",
         ("My home is in Ghent.",
          "Can you recommend a good book on typography?",
          "As of March I live in Leuven."),
         active="Leuven", gone="Ghent"),
    # jobs: company, role, quitting, starting, retiring, contract ended
    Case("h15_job_started_no_longer",
         ("I work at Fastly.",
          "Started at Cloudinary on Monday, so I'm no longer at Fastly."),
         active="Cloudinary", gone="Fastly"),
    Case("h15_job_promoted_role",
         ("I'm a QA engineer at Tessellate.",
          "Got promoted last week! I'm the QA lead at Tessellate now."),
         active="QA lead", gone="QA engineer"),
    Case("h15_job_quit_freelance",
         ("I work as a barista at Kettle & Crane.",
          "I quit Kettle & Crane last week. I'm freelancing as a wedding photographer now."),
         active="photographer", gone="barista"),
    Case("h15_job_retired",
         ("I'm a pharmacist at Linden Row Pharmacy.",
          "Retired at the end of June! No more pharmacy shifts, I'm gardening full time."),
         active="retired", gone="pharmacist"),
    Case("h15_job_contract_ended",
         ("I'm contracting for Halvorsen Freight.",
          "My contract with Halvorsen Freight ended on Friday. I've taken a permanent role at Brightwake Labs."),
         active="Brightwake Labs", gone="Halvorsen Freight"),
    Case("h15_job_let_go_passive",
         ("I'm a data analyst at Quillfeather.",
          "I was let go by Quillfeather in the restructuring, and I've been hired by Oakmere Insurance as an actuary."),
         active="Oakmere Insurance", gone="Quillfeather"),
    # names and how to address the user
    Case("h15_name_call_me",
         ("Call me Theo.",
          "Actually I'd rather go by Teddy from now on."),
         active="Teddy", gone="Theo"),
    Case("h15_name_correction_spelling",
         ("My name is Ingrid.",
          "correction: it's Ingrith, with a th at the end. People always misspell it."),
         active="Ingrith", gone="Ingrid"),
    Case("h15_name_married",
         ("My surname is Okonkwo.",
          "I got married in May and took my wife's name, so my surname is Adeyemi now."),
         active="Adeyemi", gone="Okonkwo"),
    Case("h15_name_drop_title",
         ("Please address me as Dr. Pemberton.",
          "You can drop the formal stuff, just call me Lucinda."),
         active="Lucinda", gone="Pemberton"),
    # a project's tools and versions
    Case("h15_tool_language_rewrite",
         ("Our backend is written in Elixir.",
          "we rewrote the whole backend in kotlin over the winter"),
         active="Kotlin", gone="Elixir"),
    Case("h15_tool_framework_switched_from",
         ("The frontend uses Svelte.",
          "We switched from Svelte to SolidJS in the last sprint."),
         active="SolidJS", gone="Svelte"),
    Case("h15_tool_database_version",
         ("Our API runs on MySQL 5.7.",
          "Upgraded the API database to MySQL 8.0 on Tuesday, went smoother than expected."),
         active="MySQL 8.0", gone="MySQL 5.7"),
    Case("h15_tool_os",
         ("My laptop runs Fedora.",
          "Wiped the laptop over the weekend and put openSUSE Tumbleweed on it."),
         active="Tumbleweed", gone="Fedora"),
    Case("h15_tool_ci_turns_out",
         ("Our CI is Travis.",
          "Turns out we left Travis months ago and nobody told me. CI actually runs on Buildkite."),
         active="Buildkite", gone="Travis"),
    Case("h15_tool_hosting_as_of",
         ("The marketing site is hosted on Netlify.",
          "As of this week the marketing site lives on Cloudflare Pages."),
         active="Cloudflare Pages", gone="Netlify"),
    Case("h15_tool_package_manager_replaced",
         ("We manage the monorepo's dependencies with Yarn.",
          "We replaced Yarn with pnpm in the monorepo."),
         active="pnpm", gone="Yarn"),
    Case("h15_tool_editor_nowadays",
         ("I write code in Sublime Text.",
          "i'm on Zed nowadays, sublime started feeling slow on big files"),
         active="Zed", gone="Sublime"),
    Case("h15_tool_test_runner",
         ("Our unit tests run with Jest.",
          "Moved the whole test suite over to Vitest, Jest isn't used at all anymore."),
         active="Vitest", gone="Jest"),
    Case("h15_tool_linter_dropped",
         ("Our Python code is linted with Prospector.",
          "We dropped Prospector; pylint is our linter now."),
         active="pylint", gone="Prospector"),
    Case("h15_tool_cloud_emoji",
         ("Our infrastructure is on Azure.",
          "Finished the cloud migration last night 🎉 all our infrastructure is on Hetzner now."),
         active="Hetzner", gone="Azure"),
    Case("h15_tool_queue_passive",
         ("Background jobs go through RabbitMQ.",
          "RabbitMQ was replaced by NATS JetStream for the background jobs."),
         active="NATS", gone="RabbitMQ"),
    Case("h15_tool_python_version_lowercase",
         ("The billing service runs on Python 3.9.",
          "bumped the billing service to python 3.12 yesterday"),
         active="Python 3.12", gone="Python 3.9"),
    Case("h15_tool_node_version_mid_talk",
         ("Our build uses Node 18.",
          "Long day. The e2e test is still flaky and the designer wants yet another logo round. "
          "Oh, and the build is on Node 22 now. Anyway, off to lunch."),
         active="Node 22", gone="Node 18"),
    Case("h15_tool_deploy_scratch_that",
         ("We deploy with Ansible.",
          "Scratch that, we deploy with Pulumi. Ansible was the old setup before I joined."),
         active="Pulumi", gone="Ansible"),
    # preference reversals: food, drink, schedule, code style, UI
    Case("h15_pref_diet",
         ("I'm vegetarian.",
          "I started eating fish again, so I'm pescatarian now."),
         active="pescatarian", gone="vegetarian"),
    Case("h15_pref_drink",
         ("My favourite drink is rooibos.",
          "I've gone off rooibos completely, it's hibiscus tea for me these days."),
         active="hibiscus", gone="rooibos"),
    Case("h15_pref_lunch_lowercase",
         ("My go-to lunch is a burrito.",
          "no more burritos for lunch, it's poke bowls now"),
         active="poke", gone="burrito"),
    Case("h15_pref_schedule",
         ("I work out in the mornings.",
          "I switched my workouts to the evenings, early starts just weren't happening."),
         active="evenings", gone="mornings"),
    Case("h15_pref_indentation",
         ("I prefer tabs for indentation.",
          "I've come around to four spaces for indentation."),
         active="spaces", gone="tabs"),
    Case("h15_pref_quotes",
         ("I prefer single quotes in JavaScript.",
          "Changed my mind: double quotes in JavaScript from now on, it matches the formatter's default."),
         active="double quotes", gone="single quotes"),
    Case("h15_pref_theme_not_anymore",
         ("I like light mode in my editor.",
          "not a light mode person anymore, dark theme everywhere now"),
         active="dark", gone="light mode"),
    # partial forgets: the first message said two things
    Case("h15_forget_part_allergy",
         ("I have a cat called Marzipan and I'm allergic to peanuts.",
          "Forget the part about the peanut allergy, that was my brother, not me."),
         active="Marzipan", gone="peanuts"),
    Case("h15_forget_bit_chess",
         ("I play the bassoon and I coach a junior chess club.",
          "please forget the bit about the chess club."),
         active="bassoon", gone="chess"),
    Case("h15_forget_part_typo",
         ("I'm learning Portuguese and I'm training for a half marathon.",
          "can u forget the part abt the half marathon, my knee's wrecked"),
         active="Portuguese", gone="marathon"),
    # temporary facts that ended
    Case("h15_temp_until_friday",
         ("I'm working from my parents' place in Tralee until Friday.",
          "Friday's come and gone, I'm back at my own flat in Limerick."),
         active="Limerick", gone="Tralee"),
    Case("h15_temp_conference_trip_over",
         ("I'm in Porto for a conference this week.",
          "Flew home to Braga yesterday, the Porto trip is done."),
         active="Braga", gone="Porto"),
    Case("h15_temp_loaner_laptop",
         ("I'm on a loaner ThinkPad while my MacBook is being repaired.",
          "Got the MacBook back from the repair shop, and the loaner ThinkPad went back to IT."),
         active="MacBook", gone="ThinkPad"),
]

_CHINESE = [
    Case("h15_zh_move_city",
         ("我住在成都。",
          "上个月搬到重庆了，火锅更辣了😂"),
         active="重庆", gone="成都"),
    Case("h15_zh_move_neighbourhood",
         ("我家在浦东。",
          "我们现在搬到徐汇了，离公司近一点。"),
         active="徐汇", gone="浦东"),
    Case("h15_zh_move_no_longer",
         ("我住在新加坡。",
          "我已经不在新加坡了，现在住在吉隆坡。"),
         active="吉隆坡", gone="新加坡"),
    Case("h15_zh_job_company",
         ("我在字节跳动上班。",
          "我跳槽到美团了，下周一入职。"),
         active="美团", gone="字节跳动"),
    Case("h15_zh_job_quit",
         ("我是一名中学数学老师。",
          "我辞职了，现在自己开了一家咖啡店。"),
         active="咖啡店", gone="数学老师"),
    Case("h15_zh_job_retired",
         ("我在国家电网当工程师。",
          "我今年三月正式退休了。"),
         active="退休", gone="国家电网"),
    Case("h15_zh_name_correction",
         ("我叫李明轩。",
          "更正一下：我的名字是李铭轩，铭是金字旁的那个。"),
         active="李铭轩", gone="李明轩"),
    Case("h15_zh_address",
         ("你可以叫我小周。",
          "以后别叫我小周了，叫我周老师吧。"),
         active="周老师", gone="小周"),
    Case("h15_zh_database",
         ("我们的项目用 MongoDB。",
          "我们把 MongoDB 换成了 TiDB。"),
         active="TiDB", gone="MongoDB"),
    Case("h15_zh_framework",
         ("我们前端用的是 Angular。",
          "前端现在改用 Vue 了，Angular 已经不用了。"),
         active="Vue", gone="Angular"),
    Case("h15_zh_ci",
         ("我们的持续集成用 Jenkins。",
          "现在 CI 都迁到 GitLab CI 上了。"),
         active="GitLab CI", gone="Jenkins"),
    Case("h15_zh_os_version",
         ("我的电脑装的是 Windows 10。",
          "周末把电脑升级到 Windows 11 了。"),
         active="Windows 11", gone="Windows 10"),
    Case("h15_zh_pref_drink",
         ("我每天早上喝豆浆。",
          "最近早上改喝咖啡了。"),
         active="咖啡", gone="豆浆"),
    Case("h15_zh_forget_part",
         ("我养了一只柯基，还在学吉他。",
          "把我学吉他那部分忘掉吧。"),
         active="柯基", gone="吉他"),
    Case("h15_zh_temp_trip_over",
         ("我这周在杭州出差，到周五。",
          "出差结束了，已经回到南京了。"),
         active="南京", gone="杭州"),
]

HELD_OUT_15 = _ENGLISH + _CHINESE

NOT_CORRECTIONS_15 = [
    Case("h15_not_friend_moved",
         ("I live in Trieste.",
          "My friend Oskar just moved to Udine."),
         active="Trieste", gone=""),
    Case("h15_not_hypothetical_database",
         ("We use MariaDB for the orders service.",
          "If we ever outgrow it, we might look at CockroachDB."),
         active="MariaDB", gone=""),
    Case("h15_not_interview_plan",
         ("I work at Ravelin Books.",
          "I have an interview at Pellucid Games next week, no idea if I'd even take it."),
         active="Ravelin Books", gone=""),
    Case("h15_not_question_ci",
         ("Our CI runs on CircleCI.",
          "Is Drone CI any good for monorepos?"),
         active="CircleCI", gone=""),
    Case("h15_not_history_city",
         ("I live in Aarhus.",
          "Before Aarhus I spent five years in Odense, back in my twenties."),
         active="Aarhus", gone=""),
    Case("h15_not_added_tool",
         ("We deploy the API with Docker Compose.",
          "We also added Terraform for the DNS records."),
         active="Docker Compose", gone=""),
    Case("h15_not_one_off_drink",
         ("I drink green tea in the afternoons.",
          "Had a hot chocolate today because the café had run out of tea."),
         active="green tea", gone=""),
    Case("h15_not_joke_job",
         ("I'm a backend developer at Moorfield Analytics.",
          "Some days I'm convinced I'm actually a full-time Jira ticket janitor 😂"),
         active="Moorfield Analytics", gone=""),
    Case("h15_not_negated_wish",
         ("I code in Rust.",
          "I have no desire to switch to Zig, whatever the hype says."),
         active="Rust", gone=""),
    Case("h15_not_coworker_name",
         ("My name is Perpetua.",
          "My new coworker is called Wilhelmina, she's lovely."),
         active="Perpetua", gone=""),
    Case("h15_not_weekend_trip",
         ("I live in Tromsø.",
          "Heading to Reykjavik for a long weekend, back on Monday."),
         active="Tromsø", gone=""),
    Case("h15_not_partner_job",
         ("I work as a radiographer.",
          "My husband just started as a paramedic."),
         active="radiographer", gone=""),
    Case("h15_not_curious_no_migration",
         ("Our frontend is built with Ember.",
          "I'm reading up on Qwik out of curiosity, we're not planning to migrate."),
         active="Ember", gone=""),
    Case("h15_not_sibling_editor",
         ("I use Helix as my editor.",
          "My brother swears by Kakoune, we argue about it constantly."),
         active="Helix", gone=""),
    Case("h15_not_hypothetical_unrelated_between",
         ("I'm vegan.",
          "What's a good egg substitute for a sponge cake?",
          "If I weren't vegan I'd probably live on cheese."),
         active="vegan", gone=""),
    Case("h15_not_zh_classmate_moved",
         ("我住在苏州。",
          "我同学最近搬去深圳了。"),
         active="苏州", gone=""),
    Case("h15_not_zh_maybe_cloud",
         ("我们的服务部署在阿里云上。",
          "如果以后预算够，可能会考虑腾讯云。"),
         active="阿里云", gone=""),
    Case("h15_not_zh_question_editor",
         ("我用 PyCharm 写 Python。",
          "VS Code 写 Python 好用吗？"),
         active="PyCharm", gone=""),
    Case("h15_not_zh_history_job",
         ("我在华为做测试工程师。",
          "大学毕业后我先在一家小公司干了两年。"),
         active="华为", gone=""),
    Case("h15_not_zh_one_off_commute",
         ("我每天骑车上班。",
          "今天下大雨，就打车去公司了。"),
         active="骑车", gone=""),
]

_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_set_is_as_described() -> None:
    """The counts the docstring states: 60 corrections (45 English, 15 Chinese), 20 non-corrections (5 Chinese), names unique."""
    assert len(HELD_OUT_15) == 60
    assert sum(1 for c in HELD_OUT_15 if _CJK.search(c.said[-1])) == 15
    assert all(2 <= len(c.said) <= 4 and c.active and c.gone for c in HELD_OUT_15)
    assert len(NOT_CORRECTIONS_15) == 20
    assert sum(1 for c in NOT_CORRECTIONS_15 if _CJK.search(c.said[-1])) == 5
    assert all(2 <= len(c.said) <= 4 and c.gone == "" and c.active for c in NOT_CORRECTIONS_15)
    names = [c.name for c in HELD_OUT_15 + NOT_CORRECTIONS_15]
    assert len(names) == len(set(names))


def test_heldout15_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each correction through the real pipeline; print the rate and hold the measured floor."""
    failures = failures_of(HELD_OUT_15, tmp_path)
    n = len(HELD_OUT_15)
    ok = n - len(failures)
    show(capsys, f"held-out15: {ok}/{n} corrections handled (blind set)", failures)
    assert ok / n >= FLOOR, "\n".join(failures)


def test_heldout15_not_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each non-correction through the real pipeline: the first fact must stay active and not be superseded."""
    wrong = wrongly_replaced(NOT_CORRECTIONS_15, tmp_path)
    n = len(NOT_CORRECTIONS_15)
    kept = n - len(wrong)
    show(capsys, f"held-out15 not-corrections: {kept}/{n} kept (blind set)", wrong, mark="REPLACED")
    assert kept / n >= NOT_FLOOR, "\n".join(wrong)
