"""Held-out set 11 for issue 21 item 2 (corrections by meaning): written blind, nobody tuned on it.

How it was written: by the helper "blind" on 2026-12-02, without reading evlog's code (processors/,
projections/, eventlog/), its docs, README or CHANGELOG, or any other test file: the only inputs were
tests/memory_pipeline.py (the Case format and the helpers), the shape of held-out set 10 (its docstring,
imports and three test functions, not its cases) and issue 21 (item 2 and the Corrections target: what a
correction is). The people, places, tools and wordings are new. The set was committed before it was ever
run: only its count test was run.

What it covers:
- HELD_OUT_11: 60 corrections (45 English, 15 simplified Chinese): moves, jobs (started, left, joined,
  went freelance, retired), promotions, names and "call me", renamed projects and repositories, upgraded
  or migrated versions, switched tools, services, editors and languages, preference reversals ("used to
  ... now"), changed schedules, partial forgets ("forget that I X" where the first message said two
  things: `active` is the part kept, `gone` the part forgotten) and temporary facts that ended. Some have
  one or two unrelated messages in between; the wording is informal (lower case, typos, emoji, asides,
  a reason given, the new value first or last, the old value named or not).
- NOT_CORRECTIONS_11: 20 statements (15 English, 5 Chinese) that mention the same kind of thing but
  change nothing (a trip, someone else's job, city or name, history told as history, a question, a
  hypothetical, a tool tried and dropped, an addition, a plan not made, a one-off); the first fact must
  stay active.

Floors: measured by the lead once on main (2a288d1, 2026-12-02): 16/60 = 27% handled, 18/20 not-corrections
kept (2 wrongly replaced); then once after round 8's corrections work merged: 20/60 = 33%, 18/20 kept.
FLOOR and NOT_FLOOR hold the second figures; the target (>= 90%) is not met.
Do not tune the extractor on these cases, and do not edit them after seeing results.

Run: python -m pytest tests/processors/test_corrections_heldout11.py -q -s
"""

from __future__ import annotations

from tests.memory_pipeline import Case, assert_corrections_floor, assert_kept_floor, check_blind_set

FLOOR = 0.6  # share of HELD_OUT_11 handled: 16/60 on main at 2a288d1, 20/60 after round 8, 25/60 after round 9 (whose engineer read the even half: odd half 9/30 before and after); 29/60 after corr11's own-slot step, 30/60 after its rename step, 31/60 with 'promoted' no value of its own again, 32/60 after its Chinese team-thing step (all built on sets 12/13, set 11 not read); 35/60 after corr12 and 36/60 with its rename step (round 12, which studied sets 9-14's failures, this one's TUNED ON)
NOT_FLOOR = 0.9  # share of NOT_CORRECTIONS_11 kept: 18/20 on main at 2a288d1

_ENGLISH = [
    # moves
    Case("en_packed_up_lyon", ("I live in Porto, near the river.",
                               "so we finally packed up and moved to lyon last month, rent got silly"),
         "Lyon", "Porto"),
    Case("en_home_is_tucson_aside", ("My home is in Albuquerque.", "btw whats the best way to descale a kettle?",
                                     "home is tucson these days fwiw, the winters up there were too much for me"),
         "Tucson", "Albuquerque"),
    Case("en_auckland_for_good", ("I'm based in Wellington.", "update: i'm in auckland now for good, new flat in ponsonby 🏠"),
         "Auckland", "Wellington"),
    Case("en_lease_rotterdam", ("I live in Ghent.",
                                "signed the lease in rotterdam!! moving day was saturday, so that's home now"),
         "Rotterdam", "Ghent"),
    Case("en_left_the_city_bath", ("I live in Bristol with my partner.",
                                   "we left bristol in the end — we live in a village just outside Bath now, way quieter"),
         "Bath", "Bristol"),
    # jobs
    Case("en_started_atlassian", ("I work at Zendesk as a support engineer.",
                                  "started at Atlassian on monday!! 🎉 same kind of role, better pay"),
         "Atlassian", "Zendesk"),
    Case("en_notice_ocado", ("I'm a data analyst at Unilever.", "can you remind me how vlookup works",
                             "handed in my notice and my last day was friday. i'm at Ocado now, same analyst stuff"),
         "Ocado", "Unilever"),
    Case("en_went_freelance", ("I work for Deloitte as a consultant.",
                               "went freelance in march, no more big-four life for me"),
         "freelance", "Deloitte"),
    Case("en_joined_loomwell", ("My employer is Siemens.",
                                "joined a tiny startup called Loomwell after six yrs there, wish me luck"),
         "Loomwell", "Siemens"),
    Case("en_quit_teaching", ("I teach chemistry at a high school.",
                              "quit teaching in june. I'm a junior web developer now, the bootcamp paid off"),
         "web developer", "chemistry"),
    Case("en_retired_pilot", ("I work as a pilot for KLM.", "my knees hate the stairs lately haha",
                              "retired last month after 30 years of flying! no more rosters 😎"),
         "retired", "pilot"),
    # promotions
    Case("en_promoted_senior_designer", ("I'm a junior designer at Canva.",
                                         "got promoted!! senior designer as of this week 🥳"),
         "senior designer", "junior designer"),
    Case("en_title_principal", ("My title is Staff Engineer.", "title changed to Principal Engineer on the 1st, finally"),
         "Principal Engineer", "Staff Engineer"),
    Case("en_made_head_chef", ("I'm a line cook at a bistro.", "they made me head chef last week, still the same bistro"),
         "head chef", "line cook"),
    # names / call me
    Case("en_call_me_nico", ("My name is Nicholas.", "pls just call me Nico, only my gran uses the long version"),
         "Nico", "Nicholas"),
    Case("en_surname_changed", ("I'm Priya Raman.", "heads up, I got married and took his surname, it's Priya Iyer now"),
         "Iyer", "Raman"),
    Case("en_go_by_rebecca", ("Everyone calls me Bex.", "what time zone is Chile in?",
                              "actually I'd rather go by Rebecca from now on, the nickname feels like school"),
         "Rebecca", "Bex"),
    Case("en_github_handle", ("My github handle is tomcodes.",
                              "renamed my github account to tbaxter, the old one felt cringe"),
         "tbaxter", "tomcodes"),
    # renamed projects
    Case("en_renamed_meridian", ("Our project is called Skylark.",
                                 "we renamed the project to Meridian, legal said the old name was taken"),
         "Meridian", "Skylark"),
    Case("en_repo_ledgerly", ("The repo is named acme-billing.",
                              "repo's called ledgerly now (renamed it yesterday, update your remotes)"),
         "ledgerly", "acme-billing"),
    Case("en_rebrand_verdant", ("My app is called PlantPal.", "lunch was great today", "rebranded the app → it's Verdant now"),
         "Verdant", "PlantPal"),
    # versions
    Case("en_bumped_python", ("The project runs on Python 3.9.", "bumped us to python 3.12 this morning, all green ✅"),
         "3.12", "3.9"),
    Case("en_node_everywhere", ("We're on Node 18.", "node 22 across all services now, the old one hits EOL soon anyway"),
         "Node 22", "Node 18"),
    Case("en_django_migration_done", ("The backend uses Django 3.2.", "finished the migration, we're on django 5.0 as of friday"),
         "5.0", "3.2"),
    Case("en_clusters_upgraded", ("Our clusters run Kubernetes 1.27.", "any good podcasts for a long drive?",
                                  "upgraded the clusters to 1.30 over the weekend, zero downtime"),
         "1.30", "1.27"),
    # switched tools, services, editors, languages
    Case("en_zed_full_time", ("I write code in Sublime Text.", "been using Zed full time for a month, uninstalled the other thing"),
         "Zed", "Sublime"),
    Case("en_ci_buildkite", ("We use Jenkins for CI.", "ci moved to buildkite, the old box is getting decommissioned"),
         "Buildkite", "Jenkins"),
    Case("en_hosting_fly", ("The site is hosted on Heroku.", "we migrated hosting over to Fly.io last sprint"),
         "Fly.io", "Heroku"),
    Case("en_rewrote_in_go", ("The ingest service is written in Ruby.", "my cat knocked my coffee over lol",
                              "rewrote the ingest service in Go, it was way too slow before"),
         "Go", "Ruby"),
    Case("en_db_cockroach", ("Our main database is MySQL.", "we're on CockroachDB now, replication kept biting us"),
         "CockroachDB", "MySQL"),
    Case("en_ditched_pip_tools", ("We manage dependencies with pip-tools.", "ditched that for uv, the lockfile is uv.lock now"),
         "uv", "pip-tools"),
    Case("en_terminal_these_days", ("My terminal is iTerm2.", "these days it's WezTerm for me"),
         "WezTerm", "iTerm2"),
    # preference reversals
    Case("en_come_around_spaces", ("I prefer tabs over spaces.", "ok I've come around, spaces all the way now"),
         "spaces", "tabs over spaces"),
    Case("en_switched_sides_tea", ("I like coffee more than tea.",
                                   "weirdly i've switched sides, I prefer tea these days ☕→🍵"),
         "tea", "coffee more than tea"),
    Case("en_light_mode_now", ("I prefer dark mode everywhere.",
                               "used to swear by dark mode but my eyes like light mode better now, go figure"),
         "light mode", "dark mode"),
    Case("en_aisle_seat", ("I always pick a window seat when I fly.", "can you convert 30 celsius to fahrenheit",
                           "aisle seats for me now, i get up way too much on long hauls"),
         "aisle", "window seat"),
    # schedules
    Case("en_gym_days", ("I go to the gym on Tuesdays and Thursdays.",
                         "new job messed up my week so gym is monday, wednesday and friday now"),
         "Wednesday", "Tuesdays"),
    Case("en_standup_pushed", ("Our daily standup is at 9:30.",
                               "standup got pushed to 10:15 starting this week, too many ppl on school runs"),
         "10:15", "9:30"),
    Case("en_release_weekly", ("We ship a release every two weeks.", "dropping that cadence, we release weekly now, thursdays"),
         "weekly", "every two weeks"),
    # partial forgets
    Case("en_forget_kids", ("I'm a vet and I have three kids.", "forget that I have kids, I'd rather that wasn't stored"),
         "vet", "kids"),
    Case("en_forget_age", ("I'm 41 and I live in Cardiff.", "random but what's a good name for a goldfish",
                           "hmm could you forget my age? keeping the city is fine"),
         "Cardiff", "41"),
    Case("en_forget_friday_deploys", ("The project uses Terraform and we deploy on Fridays.",
                                      "forget what i said about the friday deploys pls, that's not a thing anymore"),
         "Terraform", "Fridays"),
    Case("en_forget_marathons", ("I play in a chess club and I run marathons.",
                                 "drop the marathon part from memory, knee's done and i don't want it in there"),
         "chess", "marathons"),
    # temporary facts ended
    Case("en_loaner_returned", ("I'm on a loaner ThinkPad until my MacBook comes back from repair.",
                                "macbook's back from the shop 🙌 returned the loaner today"),
         "MacBook", "ThinkPad"),
    Case("en_galway_stint_over", ("I'm working from my sister's place in Galway this month.",
                                  "back home in limerick since sunday, the galway stint is done"),
         "Limerick", "Galway"),
]

_CHINESE = [
    Case("zh_moved_hangzhou", ("我住在南京。", "上个月搬到杭州了，房子也退租了"), "杭州", "南京"),
    Case("zh_settled_xiamen", ("我在成都生活。", "今天好冷啊", "现在定居厦门了，空气好太多 😄"), "厦门", "成都"),
    Case("zh_left_huawei", ("我在华为做测试工程师。", "已经离职啦，现在在小米上班"), "小米", "华为"),
    Case("zh_teacher_to_planner", ("我是一名中学数学老师。", "教书的工作我辞了，现在在一家游戏公司当策划"),
         "策划", "数学老师"),
    Case("zh_promoted_manager", ("我目前是组长。", "上周升职了，现在是部门经理啦 🎉"), "部门经理", "组长"),
    Case("zh_call_me_aming", ("我叫王小明。", "以后叫我阿明就行，全名太正式了"), "阿明", "王小明"),
    Case("zh_project_renamed", ("我们的项目叫青鸟。", "项目已经改名叫星河了，老名字别再用"), "星河", "青鸟"),
    Case("zh_java_upgraded", ("项目用的是 Java 8。", "我们已经升级到 Java 17 了"), "Java 17", "Java 8"),
    Case("zh_editor_neovim", ("我平时用 VS Code 写代码。", "最近换成 Neovim 了，用着顺手多了"), "Neovim", "VS Code"),
    Case("zh_repo_gitee", ("我们的代码托管在 GitLab 上。", "周末把仓库全部迁到 Gitee 了"), "Gitee", "GitLab"),
    Case("zh_tea_to_coffee", ("我更喜欢喝绿茶。", "以前爱喝绿茶，现在更喜欢咖啡了"), "咖啡", "绿茶"),
    Case("zh_run_evenings", ("我每天早上七点起床跑步。", "跑步改到晚上了，早上实在起不来 😂"), "晚上", "七点"),
    Case("zh_forget_cats", ("我是护士，养了两只猫。", "帮我把养猫这件事忘掉吧"), "护士", "猫"),
    Case("zh_trip_over", ("这周我在上海出差。", "出差结束了，已经回到北京家里"), "北京", "上海"),
    Case("zh_phone_iphone", ("我用的是安卓手机。", "推荐一本好看的小说？", "换了 iPhone 15，安卓那台已经送人了"),
         "iPhone 15", "安卓"),
]

HELD_OUT_11: list[Case] = _ENGLISH + _CHINESE

NOT_CORRECTIONS_11: list[Case] = [
    Case("not_en_conference_trip", ("I live in Halifax.", "flying to reykjavik next week for a conference, so excited"),
         "Halifax", ""),
    Case("not_en_brother_moved", ("I live in Denver.", "my brother just moved to Boise, he loves it"), "Denver", ""),
    Case("not_en_wife_new_job", ("I work at Etsy.", "my wife started a new job at Wayfair today 🎉"), "Etsy", ""),
    Case("not_en_college_history", ("I'm a nurse at St Mary's hospital.",
                                    "back in college i waited tables at a diner for 3 years, good times"),
         "nurse", ""),
    Case("not_en_question_fastapi", ("The project uses Flask.", "should we move to fastapi at some point? thoughts?"),
         "Flask", ""),
    Case("not_en_hypothetical_gcp", ("We deploy on AWS.", "if we ever moved to GCP would the terraform carry over?"),
         "AWS", ""),
    Case("not_en_tried_helix", ("I use Emacs.", "tried helix for a weekend, went back, muscle memory wins"),
         "Emacs", ""),
    Case("not_en_also_portuguese", ("I speak Spanish.", "also picking up portuguese on duolingo, 40 day streak!"),
         "Spanish", ""),
    Case("not_en_maybe_coast", ("I live in Nantes.", "maybe someday we'd move to the coast, no actual plans tho"),
         "Nantes", ""),
    Case("not_en_added_grafana", ("We use Sentry for error tracking.", "added grafana for dashboards too"),
         "Sentry", ""),
    Case("not_en_react_not_yet", ("The frontend is on React 17.", "is react 19 stable enough yet? not upgrading till it is"),
         "React 17", ""),
    Case("not_en_son_nickname", ("My name is Oskar.", "my son wants everyone to call him Ollie now lol"), "Oskar", ""),
    Case("not_en_grew_up_tartu", ("I live in Tallinn.", "fun fact i grew up in tartu, came here for uni"), "Tallinn", ""),
    Case("not_en_standup_cancelled_once", ("Our team standup is at 9:45 every morning.",
                                           "tomorrow's standup is cancelled because of the offsite"),
         "9:45", ""),
    Case("not_en_coworker_notion", ("I write my notes in Obsidian.", "my coworker swears by notion, not for me though"),
         "Obsidian", ""),
    Case("not_zh_trip_xian", ("我住在青岛。", "下周去西安玩几天"), "青岛", ""),
    Case("not_zh_wife_meituan", ("我在京东工作。", "我老婆刚跳槽去了美团"), "京东", ""),
    Case("not_zh_question_vue", ("项目用的是 Vue 2。", "要不要升级到 Vue 3？大家怎么看"), "Vue 2", ""),
    Case("not_zh_college_cafe", ("我是一名律师。", "大学的时候我在咖啡店打过工"), "律师", ""),
    Case("not_zh_tried_cursor", ("我用 Vim 写代码。", "试了一下 Cursor，还是用回 Vim 了"), "Vim", ""),
]

def test_set_is_as_described() -> None:
    """The counts the docstring states: 60 corrections (45 English, 15 Chinese), 20 non-corrections (5 Chinese), names unique."""
    check_blind_set(HELD_OUT_11, NOT_CORRECTIONS_11)


def test_heldout11_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each correction through the real pipeline; print the rate and hold the measured floor."""
    assert_corrections_floor(HELD_OUT_11, tmp_path, capsys, "held-out11", FLOOR)


def test_heldout11_not_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each non-correction through the real pipeline: the first fact must stay active and not be superseded."""
    assert_kept_floor(NOT_CORRECTIONS_11, tmp_path, capsys, "held-out11", NOT_FLOOR)
