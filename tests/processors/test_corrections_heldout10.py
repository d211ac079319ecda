"""Held-out set 10 for issue 21 item 2 (corrections by meaning): written blind, nobody tuned on it.

How it was written: by the helper "blind" on 2026-12-02, without reading evlog's code (processors/,
projections/, eventlog/), its docs or README, the earlier correction tests or their cases. The only
inputs were tests/memory_pipeline.py (the Case format and the helpers) and issue 21 (what a
correction is). The set was committed before it was ever run.

What it covers:
- HELD_OUT_10: 60 corrections (45 English, 15 simplified Chinese): moved/relocated, new job/left/
  joined, promoted, renamed / "call me", upgraded/migrated/switched tool, version or service, a
  preference reversed, a schedule changed, a partial forget ("forget that I X" where the first
  message said two things), a temporary fact ended. Some have an unrelated message in between;
  the wording is informal (lowercase, typos, emoji, asides).
- NOT_CORRECTIONS_10: 20 statements (15 English, 5 Chinese) that mention the same kind of thing
  but change nothing (a trip, someone else's city or job, a past job told as history, a question,
  a hypothetical, a tool tried and dropped, an addition); the first fact must stay active.

Floors: measured by the lead once on main before round 7 (4ddce05: 24/60 = 40% handled, 0/20
not-corrections wrongly replaced) and once after its corrections work merged (the general change
path, processors/extract/change.py: 29/60 = 48%, 0/20). Round 8 read its first 35 English cases (and so
they are no longer blind) and raised FLOOR to its 49/60; the other 25 stayed held out (19/25 before and
after). The target (>= 90%) is not met.
Do not tune the extractor on these cases, and do not edit them after seeing results.

Run: python -m pytest tests/processors/test_corrections_heldout10.py -q -s
"""

from __future__ import annotations

import re

from tests.memory_pipeline import Case, assert_corrections_floor, assert_kept_floor

#: Share of HELD_OUT_10 handled: 24/60 on main before round 7, 29/60 after (measured once each); 49/60 with round 8,
#: which read and used its first 35 English cases (10/35 -> 30/35) and held out the other 25 (19/25 before and after).
FLOOR = 0.86  # 52/60 after corr12 (round 12 studied sets 9-14's failures: not blind)
NOT_FLOOR = 1.0  # share of NOT_CORRECTIONS_10 kept: 20/20 before and after round 7

_ENGLISH = [
    # moved / relocated
    Case("en_relocated_leeds", ("I live in Manchester.", "we relocated to leeds in october, the commute is way better"),
         "Leeds", "Manchester"),
    Case("en_moved_vancouver_aside", ("I'm based in Toronto, Canada.", "quick q unrelated - what's a good pasta recipe?",
                                      "oh btw i'm in vancouver now, moved for my partner's job 🙂"), "Vancouver", "Toronto"),
    Case("en_moved_denver_typo", ("I live in Chicago.", "finaly moved out of chicago, been living in denver since june"),
         "Denver", "Chicago"),
    Case("en_moved_dublin", ("My home is in Melbourne.", "we packed up and moved across the world to dublin!! ☘️"),
         "Dublin", "Melbourne"),
    Case("en_these_days_seattle", ("I live in Austin, Texas.", "these days i live in seattle, austin got too hot for me"),
         "Seattle", "Austin"),
    # new job / left / joined
    Case("en_new_job_datadog", ("I work at Shopify as a backend developer.", "started at Datadog on monday, new job who dis 😅"),
         "Datadog", "Shopify"),
    Case("en_left_spotify", ("I'm an engineer at Spotify.", "left spotify in the spring. i'm at Klarna now"),
         "Klarna", "Spotify"),
    Case("en_quit_joined_startup", ("I work for Deloitte as a consultant.",
                                    "Some news: I quit Deloitte and joined a startup called Fernwood as their first engineer."),
         "Fernwood", "Deloitte"),
    Case("en_joined_canva_aside", ("I work at Atlassian.", "What's the difference between a mutex and a semaphore?",
                                   "anyway, just joined canva, last day at atlassian was friday"), "Canva", "Atlassian"),
    Case("en_no_longer_hospital", ("I'm a nurse at St Mary's Hospital.",
                                   "no longer at st mary's — i've been working at the royal free since august"),
         "Royal Free", "St Mary"),
    # promoted
    Case("en_promoted_senior", ("I'm a junior developer at Acme.", "got promoted to senior developer last week 🎉"),
         "senior", "junior"),
    Case("en_made_design_lead", ("My title is Product Designer.", "they made me design lead as of this month"),
         "design lead", "Product Designer"),
    Case("en_promoted_manager", ("I'm a team lead at my company.", "i was promoted, now i'm engineering manager for two teams"),
         "engineering manager", "team lead"),
    # renamed / call me
    Case("en_call_me_bobby", ("Call me Rob.", "actually i prefer Bobby now, please use that from now on"),
         "Bobby", "Rob"),
    Case("en_call_me_kate", ("My name is Katherine.", "pls call me kate, nobody says katherine except my mom"),
         "Kate", "Katherine"),
    Case("en_changed_name_jordan", ("I go by Alex.", "i changed my name - it's Jordan now, legally and everything"),
         "Jordan", "Alex"),
    Case("en_app_renamed_kestrel", ("Our app is called Sparrow.", "we renamed the app to Kestrel, marketing didn't like the old name"),
         "Kestrel", "Sparrow"),
    Case("en_repo_renamed", ("The repo is named billing-core.", "heads up the repo got renamed to payments-core yesterday"),
         "payments-core", "billing-core"),
    # upgraded / migrated / switched tool, version, service
    Case("en_python_312", ("Our backend runs on Python 3.9.", "we finally upgraded to python 3.12 😌"), "3.12", "3.9"),
    Case("en_mysql_to_postgres", ("We use MySQL for the main database.",
                                  "migrated everything from mysql to postgres over the weekend, took forever"),
         "Postgres", "MySQL"),
    Case("en_ditched_jenkins", ("Our CI runs on Jenkins.", "we ditched jenkins, CI is on github actions now"),
         "GitHub Actions", "Jenkins"),
    Case("en_vim_to_neovim", ("I use Vim for everything.", "switched to neovim a couple months ago and never looking back"),
         "Neovim", "Vim"),
    Case("en_vue_3", ("The frontend is written in Vue 2.", "we're on vue 3 now, the migration finally landed"),
         "Vue 3", "Vue 2"),
    Case("en_heroku_to_fly", ("We deploy to Heroku.", "moved hosting off heroku to fly.io last sprint"), "fly.io", "Heroku"),
    Case("en_npm_to_pnpm", ("Our project uses npm as the package manager.",
                            "we switched the project to pnpm, the old one was too slow with the monorepo"), "pnpm", "npm"),
    Case("en_node_22", ("We're on Node 18.", "I need help naming a variable.", "bumped node to 22 across all services"),
         "22", "18"),
    Case("en_slack_to_teams", ("Our team chats on Slack.", "company moved us to microsoft teams, rip slack"), "Teams", "Slack"),
    Case("en_phone_pixel", ("I use an iPhone 12.", "upgraded my phone, it's a pixel 8 now"), "Pixel", "iPhone"),
    Case("en_unittest_to_pytest", ("Our tests use unittest.", "we've migrated the test suite to pytest"), "pytest", "unittest"),
    Case("en_terraform_to_pulumi", ("We use Terraform for infrastructure.",
                                    "we replaced terraform with pulumi since the team prefers writing python"),
         "Pulumi", "Terraform"),
    # preference reversed
    Case("en_light_mode", ("I prefer dark mode in every editor.", "honestly i've switched to light mode, my eyes like it better"),
         "light mode", "dark mode"),
    Case("en_coffee_to_tea", ("I drink coffee every morning.", "gave up coffee, it's green tea in the mornings now 🍵"),
         "tea", "coffee"),
    Case("en_vegetarian_ended", ("I'm vegetarian.", "i eat meat again since last year, that diet didn't stick"),
         "meat", "vegetarian"),
    Case("en_theme_gruvbox", ("My favourite editor theme is Solarized.", "these days my fav theme is gruvbox"),
         "gruvbox", "Solarized"),
    Case("en_browser_chrome", ("I prefer Firefox as my browser.", "i'm a chrome person now, firefox kept crashing on my laptop"),
         "Chrome", "Firefox"),
    # schedule changed
    Case("en_standup_1015", ("Our standup is at 9:30 every morning.", "standup moved to 10:15 starting this week"),
         "10:15", "9:30"),
    Case("en_gym_days", ("I go to the gym on Mondays and Thursdays.", "my gym days are tuesdays and fridays now, work schedule changed"),
         "tuesdays", "Mondays"),
    Case("en_release_day", ("Our releases go out every Friday.", "releases go out every wednesday now, no more end-of-week deploys 😬"),
         "wednesday", "Friday"),
    Case("en_night_to_day_shifts", ("I work night shifts.", "switched to day shifts in january, sleeping like a normal person again"),
         "day shifts", "night shifts"),
    # partial forget
    Case("en_forget_cello", ("I have two cats and I play the cello.", "forget that i play the cello, i gave it up years ago"),
         "cats", "cello"),
    Case("en_forget_job_keep_name", ("I'm a data scientist and my name is Priya.", "forget the data scientist bit, pls"),
         "Priya", "data scientist"),
    Case("en_forget_japanese", ("I speak Spanish and I'm learning Japanese.", "forget that I'm learning japanese, i stopped"),
         "Spanish", "Japanese"),
    Case("en_forget_civic", ("I have a dog named Biscuit and I drive a Honda Civic.",
                             "you can forget the honda civic part, sold it"), "Biscuit", "Civic"),
    # temporary fact ended
    Case("en_temporary_porto_over", ("I'm working from my parents' place in Porto this month.",
                                     "back home in Madrid now, that stint is over"), "Madrid", "Porto"),
    Case("en_crutches_gone", ("I'm on crutches for the next few weeks after knee surgery.", "crutches are gone, walking fine now!"),
         "walking", "crutches"),
]

_CHINESE = [
    Case("zh_moved_hangzhou", ("我住在上海。", "我上个月搬到杭州了，房租便宜多了"), "杭州", "上海"),
    Case("zh_new_job_bytedance", ("我在阿里巴巴上班。", "我已经离职了，现在在字节跳动做后端"), "字节跳动", "阿里巴巴"),
    Case("zh_call_me", ("大家都叫我阿明。", "以后叫我明哥吧😄"), "明哥", "阿明"),
    Case("zh_mysql_8", ("我们项目用的是 MySQL 5.7。", "数据库已经升级到 MySQL 8.0 了"), "8.0", "5.7"),
    Case("zh_coffee_to_tea", ("我喜欢喝咖啡。", "最近戒咖啡了，改喝茶"), "茶", "咖啡"),
    Case("zh_meeting_day", ("我们每周一开例会。", "例会改到周三下午了"), "周三", "周一"),
    Case("zh_promoted", ("我是初级工程师。", "刚升职了，现在是高级工程师🎉"), "高级工程师", "初级工程师"),
    Case("zh_jenkins_to_gitlab", ("我们用 Jenkins 做持续集成。", "CI 已经全部迁到 GitLab CI 了，Jenkins 停掉了"), "GitLab", "Jenkins"),
    Case("zh_transferred_shenzhen", ("我在北京工作。", "插一句，Python 的 GIL 是什么？", "对了，我现在调到深圳分公司了"),
         "深圳", "北京"),
    Case("zh_vscode_to_cursor", ("我用 VS Code 写代码。", "现在换成 Cursor 了，原来那个基本不开了"), "Cursor", "VS Code"),
    Case("zh_app_renamed", ("我们的应用叫小蜜蜂。", "应用改名叫蜂鸟了"), "蜂鸟", "小蜜蜂"),
    Case("zh_forget_guitar", ("我养了一只猫，还在学吉他。", "把我学吉他那条忘掉吧，早就不学了"), "猫", "吉他"),
    Case("zh_trip_over", ("这周我在成都出差。", "出差结束了，已经回到广州了"), "广州", "成都"),
    Case("zh_cloud_migrated", ("我们部署在阿里云上。", "服务器都迁移到腾讯云了"), "腾讯云", "阿里云"),
    Case("zh_light_theme", ("我喜欢用深色主题。", "我现在改用浅色主题了，眼睛舒服点"), "浅色", "深色"),
]

HELD_OUT_10: list[Case] = _ENGLISH + _CHINESE

NOT_CORRECTIONS_10: list[Case] = [
    Case("not_en_trip_rome", ("I live in Edinburgh.", "going to rome next week for a conference, can't wait"), "Edinburgh", ""),
    Case("not_en_friend_moved", ("I live in Boston.", "my best friend just moved to san diego, so jealous"), "Boston", ""),
    Case("not_en_past_job", ("I work at Microsoft.", "before microsoft i spent three years at ibm, that was rough"),
         "Microsoft", ""),
    Case("not_en_question_upgrade", ("We use Postgres 14.", "should we upgrade to postgres 16? what changes?"), "14", ""),
    Case("not_en_hypothetical_move", ("I live in Paris.", "if i ever moved it would be to lyon, but no plans"), "Paris", ""),
    Case("not_en_tried_and_dropped", ("I use Emacs.", "tried vscode for a week but went back to emacs"), "Emacs", ""),
    Case("not_en_also_podman", ("I use Docker for local development.", "I also use Podman on my work laptop."), "Docker", ""),
    Case("not_en_wife_job", ("I work at Airbnb.", "my wife just started at netflix!"), "Airbnb", ""),
    Case("not_en_brother_name", ("Call me Mike.", "my brother's name is Daniel, he's visiting this weekend"), "Mike", ""),
    Case("not_en_business_trip", ("I'm based in Singapore.", "flying to tokyo tomorrow for a week of meetings ✈️"),
         "Singapore", ""),
    Case("not_en_also_typescript", ("I prefer Python for scripting.", "for the frontend I use typescript, obviously"),
         "Python", ""),
    Case("not_en_thinking_actions", ("Our CI runs on CircleCI.", "been thinking about github actions, but not switching anytime soon"),
         "CircleCI", ""),
    Case("not_en_grew_up", ("I live in Amsterdam.", "i grew up in rotterdam, moved here after uni"), "Amsterdam", ""),
    Case("not_en_standup_question", ("Our standup is at 9am.", "could we move standup to 10? asking for the team, nothing decided"),
         "9am", ""),
    Case("not_en_rented_car", ("I drive a Tesla Model 3.", "rented a jeep for the camping trip last weekend, was fun"),
         "Tesla", ""),
    Case("not_zh_trip", ("我住在南京。", "下周去西安旅游，有什么推荐吗"), "南京", ""),
    Case("not_zh_wife_job", ("我在腾讯工作。", "我老婆在华为上班"), "腾讯", ""),
    Case("not_zh_hypothetical", ("我们用 React 开发前端。", "要是重写的话你觉得用 Svelte 怎么样？只是问问"), "React", ""),
    Case("not_zh_past_job", ("我在美团工作。", "毕业后我先在百度干了两年，然后才去的美团"), "美团", ""),
    Case("not_zh_also_vscode", ("我用 PyCharm 写 Python。", "我也装了 VS Code，偶尔写前端用"), "PyCharm", ""),
]

_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_set_is_as_described() -> None:
    """The counts the docstring states: 60 corrections (45 English, 15 Chinese), 20 non-corrections, names unique."""
    assert len(HELD_OUT_10) == 60
    assert sum(1 for c in HELD_OUT_10 if _CJK.search(c.said[-1])) == 15
    assert all(2 <= len(c.said) <= 4 and c.active and c.gone for c in HELD_OUT_10)
    assert len(NOT_CORRECTIONS_10) == 20
    assert all(c.gone == "" and c.active for c in NOT_CORRECTIONS_10)
    names = [c.name for c in HELD_OUT_10 + NOT_CORRECTIONS_10]
    assert len(names) == len(set(names))


def test_heldout10_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each correction through the real pipeline; print the rate and hold the measured floor."""
    assert_corrections_floor(HELD_OUT_10, tmp_path, capsys, "held-out10", FLOOR)


def test_heldout10_not_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each non-correction through the real pipeline: the first fact must stay active and not be superseded."""
    assert_kept_floor(NOT_CORRECTIONS_10, tmp_path, capsys, "held-out10", NOT_FLOOR)
