"""Held-out set 13 for corrections by meaning: written blind, nobody tuned on it.

How it was written: by the helper "blind13" on 2026-12-03, without reading evlog's code (processors/,
projections/, eventlog/), its docs, or any other tests/processors/test_corrections* file's cases: the only
inputs were tests/memory_pipeline.py (the Case class and helpers) and the harness of held-out set 12 (its
module docstring, imports, the FLOOR/NOT_FLOOR/_CJK lines, its list assembly and its three test functions).
The people, places, companies, tools and wordings are new. The file was run once only, to check that it
executes; the cases were not edited after that run.

What it covers:
- HELD_OUT_13: 60 corrections (45 English, 15 simplified Chinese): moves (city, country), jobs (company,
  role, quitting, retiring, a cover that ended), names and handles, a project's, repo's or package's
  rename, versions (language, framework, database), tool and service switches in a project (CI, hosting,
  package manager, editor, chat, tracker, database, monitoring, backups), preference reversals, partial
  forgets ("forget the part about ...": the first message said two things, `active` is the part kept,
  `gone` the part forgotten), temporary facts that ended ("until friday", "this week", "back from ...").
  Styles vary: lower case, typos, emoji, two sentences, indirect wording ("been using Zed for a month now"),
  the change in the middle of other talk, and a third, unrelated message in between.
- NOT_CORRECTIONS_13: 20 statements (15 English, 5 Chinese) that mention the same kind of slot but change
  nothing (another person's move or job, a hypothetical or plan, a question, a past fact told as history,
  an added second tool or pet, a one-off, a joke, a weekend trip); the first fact must stay active.

Floors: measured by the lead on main (41/60 and 19/20, the same before and after round 10's extractor change).
Do not tune the extractor on these cases, and do not edit them after seeing results.

Run: python -m pytest tests/processors/test_corrections_heldout13.py -q -s
"""

from __future__ import annotations

import re

from tests.memory_pipeline import Case, failures_of, show, wrongly_replaced

FLOOR = 0.91  # share of HELD_OUT_13 handled: 41/60 on main at b9b668e and at c6a665b (measured once each, 2026-12-03);
#   46/60 after corr11's own-slot step, 47/60 after its rename step, 49/60 after its
#   team-tool step, 50/60 with 'promoted' no value of its own again,
#   51/60 after its answer-style and feeling steps, 55/60 after its Chinese team-thing and 'from tomorrow' steps, all TUNED ON this set's failures (no longer blind)
NOT_FLOOR = 0.95  # share of NOT_CORRECTIONS_13 kept: 19/20 on main at b9b668e and at c6a665b

_ENGLISH = [
    # moves: city, country
    Case("h13_move_ljubljana_graz",
         ("I live in Ljubljana, been here about three years.",
          "update: we moved to Graz last month, the flat is way bigger"),
         active="Graz", gone="Ljubljana"),
    Case("h13_country_portugal_uruguay",
         ("I'm based in Portugal, working remotely for a US startup.",
          "can you help me with a regex that matches ISO dates?",
          "oh btw i'm not in europe anymore, relocated to Uruguay in june"),
         active="Uruguay", gone="Portugal"),
    Case("h13_move_typo_dunedin_wellington",
         ("I live in Dunedin.",
          "actualy I live in Wellington now, moved there for the job"),
         active="Wellington", gone="Dunedin"),
    Case("h13_move_emoji_winnipeg_tucson",
         ("I live in Winnipeg ❄️",
          "finally escaped the cold 🎉🌵 I live in Tucson now"),
         active="Tucson", gone="Winnipeg"),
    Case("h13_move_indirect_krakow_gdansk",
         ("I'm living in Kraków at the moment.",
          "Packing my last boxes tonight. From tomorrow my home address is in Gdańsk."),
         active="Gdańsk", gone="Kraków"),
    # jobs: company, role, quitting, retiring
    Case("h13_job_fernhill_quillby",
         ("I work at Fernhill Robotics as a firmware engineer.",
          "Quick update: new job, I'm at Quillby Labs now, same kind of firmware work."),
         active="Quillby", gone="Fernhill"),
    Case("h13_role_promoted_analytics_lead",
         ("I'm a junior data analyst at Harrow & Finch.",
          "Got promoted!! I'm now the analytics lead there 🥳"),
         active="analytics lead", gone="junior data analyst"),
    Case("h13_quit_barista_webdesign",
         ("I work as a barista at Copperleaf Café.",
          "I quit the café job yesterday. I'm freelancing as a web designer now."),
         active="web designer", gone="barista"),
    Case("h13_retired_chemistry_teacher",
         ("I teach chemistry at Ridgemont High.",
          "As of this month I'm retired, no more lesson plans, just gardening."),
         active="retired", gone="chemistry"),
    Case("h13_job_nimbusly_tallgrass",
         ("My job: SRE at Nimbusly.",
          "what's a good name for a cron wrapper script?",
          "i'm at Tallgrass Health now doing platform work, new badge and everything"),
         active="Tallgrass", gone="Nimbusly"),
    Case("h13_role_backend_to_frontend",
         ("I'm the only backend dev at Pebblestack.",
          "Team reshuffle last sprint, so I'm a frontend dev at Pebblestack now."),
         active="frontend dev", gone="backend dev"),
    # names and handles
    Case("h13_name_seun_tobi",
         ("My name is Oluwaseun but everyone calls me Seun.",
          "Actually call me Tobi, I go by my middle name these days."),
         active="Tobi", gone="Seun"),
    Case("h13_handle_quietfox_loudfox",
         ("My GitHub handle is @quietfox.",
          "I renamed my github account, it's @loudfox_dev now"),
         active="loudfox_dev", gone="quietfox"),
    Case("h13_name_marguerite_maggie",
         ("Please call me Marguerite.",
          "on second thought that's too formal, just call me Maggie 🙂"),
         active="Maggie", gone="Marguerite"),
    Case("h13_surname_okonkwo_adeyemi",
         ("My last name is Okonkwo.",
          "I got married in May and my surname is Adeyemi now."),
         active="Adeyemi", gone="Okonkwo"),
    # a project's, repo's or package's rename
    Case("h13_repo_tidepool_harbor",
         ("Our repo is called tidepool-api.",
          "we renamed the repo to harbor-api last week, update any links you generate"),
         active="harbor-api", gone="tidepool-api"),
    Case("h13_project_lanternfish_glowline",
         ("The project's name is Lanternfish.",
          "Heads up, legal made us rename Lanternfish. It's called Glowline now."),
         active="Glowline", gone="Lanternfish"),
    Case("h13_package_sqlbird_sqlwren",
         ("The package on PyPI is named sqlbird.",
          "pip name changed: from 2.0 on it's published as sqlwren"),
         active="sqlwren", gone="sqlbird"),
    # versions: language, framework, database
    Case("h13_python_39_to_312",
         ("Our service runs on Python 3.9.",
          "we bumped everything to Python 3.12 over the weekend"),
         active="Python 3.12", gone="Python 3.9"),
    Case("h13_frontend_angular_sveltekit",
         ("The frontend is built with Angular 14.",
          "the frontend is SvelteKit now, the migration finished on friday"),
         active="SvelteKit", gone="Angular"),
    Case("h13_postgres_12_to_16",
         ("We use PostgreSQL 12 for the main db.",
          "main db is on Postgres 16 since the upgrade window on tuesday"),
         active="Postgres 16", gone="PostgreSQL 12"),
    Case("h13_node_18_to_22",
         ("I'm on Node 18 for this project.",
          "lunch break, brb",
          "ok back. switched the project to node 22, 18 kept giving me openssl errors"),
         active="node 22", gone="Node 18"),
    Case("h13_rails_61_to_72",
         ("Our app is on Rails 6.1.",
          "The Rails 7.2 upgrade is merged and deployed 🚀"),
         active="Rails 7.2", gone="Rails 6.1"),
    # tool and service switches of a project
    Case("h13_ci_travis_buildkite",
         ("We run CI on Travis.",
          "moved our CI over to Buildkite, travis was too slow for the monorepo"),
         active="Buildkite", gone="Travis"),
    Case("h13_hosting_heroku_flyio",
         ("The app is hosted on Heroku.",
          "We host the app on Fly.io now. Cheaper and the deploys are faster."),
         active="Fly.io", gone="Heroku"),
    Case("h13_pkg_npm_pnpm",
         ("We use npm in this repo.",
          "switched the repo to pnpm yesterday, the new lockfile is commited"),
         active="pnpm", gone="npm"),
    Case("h13_editor_sublime_zed",
         ("I code in Sublime Text.",
          "been using Zed for a month now and honestly not going back"),
         active="Zed", gone="Sublime"),
    Case("h13_chat_slack_mattermost",
         ("Our team chats on Slack.",
          "can you draft a daily standup template for us?",
          "fyi the team moved to Mattermost last week so format it for that"),
         active="Mattermost", gone="Slack"),
    Case("h13_tracker_jira_linear",
         ("We track issues in Jira.",
          "We dropped Jira in the spring, everything lives in Linear now."),
         active="Linear", gone="Jira"),
    Case("h13_db_mongodb_clickhouse",
         ("The analytics store is MongoDB.",
          "We replaced MongoDB with ClickHouse for analytics, queries are 20x faster"),
         active="ClickHouse", gone="MongoDB"),
    Case("h13_backups_backblaze_wasabi",
         ("Our backups go to Backblaze B2.",
          "backups go to Wasabi now instead, cheaper egress"),
         active="Wasabi", gone="Backblaze"),
    Case("h13_monitoring_datadog_grafana",
         ("We use Datadog for monitoring.",
          "monitoring is on Grafana Cloud now, the old bill got silly"),
         active="Grafana", gone="Datadog"),
    # preference reversals
    Case("h13_pref_tabs_to_spaces",
         ("I prefer tabs for indentation.",
          "I've come around. Spaces, always spaces now."),
         active="spaces", gone="tabs"),
    Case("h13_pref_short_to_detailed",
         ("I like my answers short and to the point.",
          "Actually I'd rather have detailed explanations with examples from now on."),
         active="detailed explanations", gone="short"),
    Case("h13_pref_hate_to_love_cilantro",
         ("I hate cilantro.",
          "weirdly I love cilantro now?? my taste changed 😅"),
         active="love cilantro", gone="hate cilantro"),
    Case("h13_pref_comments_german_english",
         ("Please write code comments in German.",
          "Comments in English from now on please, we hired people from abroad."),
         active="English", gone="German"),
    Case("h13_pref_deep_work_morning_evening",
         ("I'm a morning person, I do deep work before 9am.",
          "new baby = new schedule lol. I do my deep work after 8pm now"),
         active="after 8pm", gone="before 9am"),
    # partial forgets: active is the part kept, gone the part forgotten
    Case("h13_forget_shellfish_keep_biscuit",
         ("I have a cat named Biscuit and I'm allergic to shellfish.",
          "forget the part about shellfish, that was my brother not me"),
         active="Biscuit", gone="shellfish"),
    Case("h13_forget_marathon_keep_cello",
         ("I play the cello and I'm training for the Lisbon marathon.",
          "please forget the marathon bit, I dropped out"),
         active="cello", gone="marathon"),
    Case("h13_forget_dog_keep_ingrid",
         ("My partner is Ingrid and we have a dog called Pretzel.",
          "can you forget what I said about the dog? Pretzel is my neighbour's"),
         active="Ingrid", gone="Pretzel"),
    Case("h13_forget_windows_keep_arch",
         ("I run Arch Linux at home and Windows 11 at work.",
          "Forget the part about Windows 11, I don't want that stored."),
         active="Arch", gone="Windows 11"),
    # temporary facts that ended
    Case("h13_temp_oslo_until_friday",
         ("I'm working from the Oslo office until friday.",
          "Back home in Bergen since Saturday, working from here again."),
         active="Bergen", gone="Oslo"),
    Case("h13_temp_back_from_nairobi",
         ("This week I'm in Nairobi for a conference.",
          "Back from the conference, I'm home in Kigali again."),
         active="Kigali", gone="Nairobi"),
    Case("h13_temp_thinkpad_until_macbook",
         ("I'm using my old ThinkPad until my new laptop arrives.",
          "the new MacBook finally arrived!! setting it up now"),
         active="MacBook", gone="ThinkPad"),
    Case("h13_temp_covering_team_lead",
         ("I'm covering for Priya as team lead until friday.",
          "Priya's back from leave, so I'm just a regular dev on the team again."),
         active="regular dev", gone="team lead"),
]

_CHINESE = [
    Case("h13_zh_move_chengdu_hangzhou",
         ("我住在成都。",
          "我上个月搬到杭州了。"),
         active="杭州", gone="成都"),
    Case("h13_zh_country_singapore_shenzhen",
         ("我现在在新加坡工作。",
          "帮我看看这个SQL为什么这么慢？",
          "对了，我已经回国了，现在在深圳上班。"),
         active="深圳", gone="新加坡"),
    Case("h13_zh_job_xinghe_lanjing",
         ("我在星河科技做后端开发。",
          "我换工作了，现在在蓝鲸数据。"),
         active="蓝鲸数据", gone="星河科技"),
    Case("h13_zh_role_qa_to_pm",
         ("我是一名测试工程师。",
          "我转岗了，现在做产品经理。"),
         active="产品经理", gone="测试工程师"),
    Case("h13_zh_retired_teller",
         ("我在银行当柜员。",
          "我今年退休了，不用再上班了。"),
         active="退休", gone="柜员"),
    Case("h13_zh_name_xiaolin_ajie",
         ("叫我小林就好。",
          "以后叫我阿杰吧。"),
         active="阿杰", gone="小林"),
    Case("h13_zh_repo_moonbeam_sunray",
         ("我们的仓库叫 moonbeam-web。",
          "仓库已经改名为 sunray-web 了。"),
         active="sunray-web", gone="moonbeam-web"),
    Case("h13_zh_java_11_to_21",
         ("项目用的是 Java 11。",
          "我们已经升级到 Java 21 了。"),
         active="Java 21", gone="Java 11"),
    Case("h13_zh_ci_jenkins_gitlab",
         ("我们用 Jenkins 做持续集成。",
          "持续集成已经换成 GitLab CI 了。"),
         active="GitLab CI", gone="Jenkins"),
    Case("h13_zh_chat_dingtalk_feishu",
         ("团队沟通用钉钉。",
          "我们现在改用飞书了。"),
         active="飞书", gone="钉钉"),
    Case("h13_zh_pref_americano_greentea",
         ("我喜欢喝美式咖啡。",
          "最近不喝咖啡了，改喝绿茶。"),
         active="绿茶", gone="美式咖啡"),
    Case("h13_zh_forget_peanut_keep_doudou",
         ("我养了一只叫豆豆的狗，我对花生过敏。",
          "把花生过敏那部分忘掉吧，我记错了。"),
         active="豆豆", gone="花生"),
    Case("h13_zh_temp_shanghai_trip",
         ("这周我在上海出差。",
          "出差结束了，我已经回到北京了。"),
         active="北京", gone="上海"),
    Case("h13_zh_db_mysql_tidb",
         ("我们的数据库是 MySQL 5.7。",
          "数据库已经迁移到 TiDB 了。"),
         active="TiDB", gone="MySQL"),
    Case("h13_zh_editor_vim_vscode",
         ("我平时用 Vim 写代码。",
          "今天天气不错，适合出去走走。",
          "我现在改用 VS Code 了，插件多。"),
         active="VS Code", gone="Vim"),
]

HELD_OUT_13 = _ENGLISH + _CHINESE

NOT_CORRECTIONS_13 = [
    Case("h13_not_sister_moved_perth",
         ("I live in Hobart.",
          "My sister just moved to Perth."),
         active="Hobart", gone=""),
    Case("h13_not_husband_new_job",
         ("I work at Brightwater Analytics.",
          "My husband started a new job at Kestrel Motors today."),
         active="Brightwater", gone=""),
    Case("h13_not_might_move_copenhagen",
         ("I live in Utrecht.",
          "I might move to Copenhagen next year if the visa works out."),
         active="Utrecht", gone=""),
    Case("h13_not_question_railway",
         ("We deploy on Render.",
          "Would Railway be cheaper than what we have?"),
         active="Render", gone=""),
    Case("h13_not_history_line_cook",
         ("I work as a nurse in Calgary.",
          "Back in 2015 I was a line cook in Halifax, wild times."),
         active="nurse", gone=""),
    Case("h13_not_added_posthog",
         ("We use Sentry for error tracking.",
          "We also added PostHog for product analytics."),
         active="Sentry", gone=""),
    Case("h13_not_second_pet_tortoise",
         ("I have a parrot named Kiwi.",
          "We adopted a second pet, a tortoise called Dash!"),
         active="Kiwi", gone=""),
    Case("h13_not_oneoff_chamomile",
         ("I usually drink coffee in the morning.",
          "had chamomile tea today, felt like a change"),
         active="coffee", gone=""),
    Case("h13_not_joke_goat_farmer",
         ("I'm a Go developer.",
          "lol some days I think I should just become a goat farmer 🐐"),
         active="Go developer", gone=""),
    Case("h13_not_plan_github_actions",
         ("Our CI runs on CircleCI.",
          "we're evaluating GitHub Actions, no decision yet"),
         active="CircleCI", gone=""),
    Case("h13_not_question_django5",
         ("The API is on Django 4.2.",
          "is Django 5 worth it for us?"),
         active="Django 4.2", gone=""),
    Case("h13_not_coworker_rafaela",
         ("My name is Rafael.",
          "My coworker's name is Rafaela, people mix us up all the time"),
         active="Rafael", gone=""),
    Case("h13_not_other_team_rename",
         ("Our repo is named orchard-core.",
          "the other team renamed their repo to grove-core"),
         active="orchard-core", gone=""),
    Case("h13_not_dad_light_mode",
         ("I prefer dark mode in every app.",
          "what's the shortcut to toggle light mode in vscode? asking for my dad"),
         active="dark mode", gone=""),
    Case("h13_not_weekend_quebec",
         ("I live in Montréal.",
          "spending the weekend in Québec City with friends 🍁"),
         active="Montréal", gone=""),
    Case("h13_zh_not_friend_moved_xiamen",
         ("我住在南京。",
          "我朋友搬到厦门去了。"),
         active="南京", gone=""),
    Case("h13_zh_not_maybe_animation",
         ("我在一家游戏公司当美术。",
          "如果有机会，我可能会去学做动画。"),
         active="美术", gone=""),
    Case("h13_zh_not_question_memcached",
         ("我们用 Redis 做缓存。",
          "要不要试试 Memcached？"),
         active="Redis", gone=""),
    Case("h13_zh_not_second_pet_wangcai",
         ("我养了一只猫叫团子。",
          "我们又养了一只狗，叫旺财。"),
         active="团子", gone=""),
    Case("h13_zh_not_history_cpp",
         ("我用 Python 写后端。",
          "大学的时候我写过很多 C++。"),
         active="Python", gone=""),
]

_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_set_is_as_described() -> None:
    """The counts the docstring states: 60 corrections (45 English, 15 Chinese), 20 non-corrections (5 Chinese), names unique."""
    assert len(HELD_OUT_13) == 60
    assert sum(1 for c in HELD_OUT_13 if _CJK.search(c.said[-1])) == 15
    assert all(2 <= len(c.said) <= 4 and c.active and c.gone for c in HELD_OUT_13)
    assert len(NOT_CORRECTIONS_13) == 20
    assert sum(1 for c in NOT_CORRECTIONS_13 if _CJK.search(c.said[-1])) == 5
    assert all(2 <= len(c.said) <= 4 and c.gone == "" and c.active for c in NOT_CORRECTIONS_13)
    names = [c.name for c in HELD_OUT_13 + NOT_CORRECTIONS_13]
    assert len(names) == len(set(names))


def test_heldout13_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each correction through the real pipeline; print the rate and hold the measured floor."""
    failures = failures_of(HELD_OUT_13, tmp_path)
    n = len(HELD_OUT_13)
    ok = n - len(failures)
    show(capsys, f"held-out13: {ok}/{n} corrections handled (blind set)", failures)
    assert ok / n >= FLOOR, "\n".join(failures)


def test_heldout13_not_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each non-correction through the real pipeline: the first fact must stay active and not be superseded."""
    wrong = wrongly_replaced(NOT_CORRECTIONS_13, tmp_path)
    n = len(NOT_CORRECTIONS_13)
    kept = n - len(wrong)
    show(capsys, f"held-out13 not-corrections: {kept}/{n} kept (blind set)", wrong, mark="REPLACED")
    assert kept / n >= NOT_FLOOR, "\n".join(wrong)
