"""Held-out set 14 for corrections by meaning: written blind, nobody tuned on it.

How it was written: by the helper "blind14" on 2026-12-03, without reading evlog's code (processors/,
projections/, eventlog/), its docs (docs/, README.md, CHANGELOG), or any other tests/processors/test_corrections*
file's cases: the only inputs were tests/memory_pipeline.py (the Case class and helpers) and the harness of
held-out set 13 (its module docstring, imports, the FLOOR/NOT_FLOOR/_CJK lines, its list assembly and its
three test functions). The people, places, companies, tools and wordings are new. The file was run once only,
to check that it executes; the cases were not edited after that run.

What it covers:
- HELD_OUT_14: 60 corrections (45 English, 15 simplified Chinese): moves (city, country, neighbourhood), jobs
  (company, role, quitting, retiring, a contract that ended, parental leave that is over, a layoff told in the
  passive), names, handles and pronouns, a project's, repo's or package's rename, versions (language,
  framework, database, OS), tool and service switches in a project (CI, hosting, package manager, editor,
  terminal, test runner, linter, formatter, cloud, auth provider, queue, database), preference reversals
  (food, drink, schedule, code style, UI), partial forgets ("forget the part about ...": the first message
  said two things, `active` is the part kept, `gone` the part forgotten), temporary facts that ended (a stay
  "until Friday", an office stint, a business trip). Styles vary: lower case, typos, emoji, two sentences,
  indirect wording ("our new place in Morningside"), the change in the middle of other talk, an unrelated
  message in between, "used to", "switched from X to Y", "no longer", "not X anymore", "we dropped X",
  "replaced X with Y", "these days", "as of", and the passive voice.
- NOT_CORRECTIONS_14: 20 statements (15 English, 5 Chinese) that mention the same kind of slot but change
  nothing (another person's move, job or handle, a hypothetical, a plan that may not happen, a question, a
  past fact told as history, an added second tool, a one-off, a joke, sarcasm, a trip, a negated wish); the
  first fact must stay active.

Floors: measured by the lead on main at 12ece5c (34/60 and 19/20), before round 11's extractor changes,
and at a08d4b9 after them (37/60 and 19/20), without reading which cases fail.
Do not tune the extractor on these cases, and do not edit them after seeing results.

Run: python -m pytest tests/processors/test_corrections_heldout14.py -q -s
"""

from __future__ import annotations

import re

from tests.memory_pipeline import Case, failures_of, show, wrongly_replaced

FLOOR = 0.61  # share of HELD_OUT_14 handled: 34/60 on main at 12ece5c, 37/60 after round 11's merge at a08d4b9 (measured once each, 2026-12-03)
NOT_FLOOR = 0.95  # share of NOT_CORRECTIONS_14 kept: 19/20 on main at 12ece5c

_ENGLISH = [
    # moves: city, country, neighbourhood
    Case("h14_move_city_lowercase",
         ("i live in Tampere, been here since uni",
          "moved to Oulu last month, still unpacking boxes lol"),
         active="Oulu", gone="Tampere"),
    Case("h14_move_country_two_sentences",
         ("I'm based in Uruguay, so I'm usually online in the evening your time.",
          "Quick update. I relocated to Paraguay in October."),
         active="Paraguay", gone="Uruguay"),
    Case("h14_move_neighbourhood_indirect",
         ("My flat is in Leith, near the shore.",
          "Our new place in Morningside finally has a garden 🌱"),
         active="Morningside", gone="Leith"),
    Case("h14_move_used_to",
         ("I live in Ljubljana.",
          "I used to live in Ljubljana, but these days I'm in Maribor."),
         active="Maribor", gone="Ljubljana"),
    Case("h14_move_unrelated_between",
         ("We live in Rotterdam Noord.",
          "Can you explain what a Dockerfile ARG does?",
          "btw we're in Delft now, the commute is way better"),
         active="Delft", gone="Rotterdam"),
    # jobs: company, role, quitting, retiring, contract ending, parental leave over, passive
    Case("h14_job_company_switch",
         ("I work at Quillmark as a backend dev.",
          "Started at Ferrobyte on Monday, left Quillmark after four years."),
         active="Ferrobyte", gone="Quillmark"),
    Case("h14_job_role_as_of",
         ("I'm a junior data analyst at Brindle Health.",
          "as of this month I'm the analytics lead at Brindle Health"),
         active="analytics lead", gone="junior data analyst"),
    Case("h14_job_quit_typos",
         ("I'm a barista at Copper Kettle while I study.",
          "i quit the cafe job, im freelancing full tiem now"),
         active="freelancing", gone="barista"),
    Case("h14_job_retired",
         ("I teach chemistry at a high school in Nanaimo.",
          "Retired in June! No more marking lab reports."),
         active="retired", gone="chemistry"),
    Case("h14_job_contract_ended",
         ("I'm contracting for Velloso Freight until the end of the year.",
          "The Velloso contract wrapped up early, I'm now on a retainer with Nordlicht Media."),
         active="Nordlicht", gone="Velloso"),
    Case("h14_job_parental_leave_over",
         ("I'm on parental leave until March, so replies may be slow.",
          "I'm back at work full time since Monday, the baby's in daycare now."),
         active="back at work", gone="parental leave"),
    Case("h14_job_passive",
         ("I'm employed by Tessaly Robotics as a firmware engineer.",
          "I was let go by Tessaly in the layoffs; I've been hired by Orvane Systems since."),
         active="Orvane", gone="Tessaly"),
    # names, handles, pronouns
    Case("h14_name_surname_changed",
         ("My name is Rosalind Achterberg.",
          "I got married, my surname is Okafor now - Rosalind Okafor."),
         active="Okafor", gone="Achterberg"),
    Case("h14_name_call_me",
         ("Call me Tibor.",
          "actually, call me Tibi, everyone does"),
         active="Tibi", gone="Tibor"),
    Case("h14_handle_renamed",
         ("my github handle is @quietkestrel",
          "renamed my github account to @loudkestrel, the old one redirects"),
         active="loudkestrel", gone="quietkestrel"),
    Case("h14_pronouns",
         ("My pronouns are she/her.",
          "Update: I go by they/them now."),
         active="they/them", gone="she/her"),
    # renames: repo, package, project
    Case("h14_repo_renamed",
         ("Our repo is called tidepool-api.",
          "we renamed the repo to tidewater-api last sprint"),
         active="tidewater-api", gone="tidepool-api"),
    Case("h14_package_renamed",
         ("The package is published on PyPI as ferncrate.",
          "ferncrate clashed with an existing trademark, so it ships as fernbox from 2.0 on."),
         active="fernbox", gone="ferncrate"),
    Case("h14_project_renamed_emoji",
         ("The app I'm building is called Pocketgrove.",
          "Pocketgrove is now Grovekit 🚀 new logo and everything"),
         active="Grovekit", gone="Pocketgrove"),
    # versions: language, framework, database, OS
    Case("h14_python_bumped",
         ("The billing service runs on Python 3.10.",
          "We bumped the billing service to Python 3.12 over the weekend."),
         active="3.12", gone="3.10"),
    Case("h14_angular_lowercase",
         ("The frontend is on Angular 15.",
          "angular 17 upgrade is done, finally"),
         active="Angular 17", gone="Angular 15"),
    Case("h14_mariadb_these_days",
         ("We run MariaDB 10.6 in production.",
          "prod's on MariaDB 11.4 these days"),
         active="11.4", gone="10.6"),
    Case("h14_fedora_reinstalled",
         ("My laptop runs Fedora 38.",
          "Reinstalled with Fedora 40 after the disk died."),
         active="Fedora 40", gone="Fedora 38"),
    Case("h14_node_typo",
         ("we pin node 18 in .nvmrc",
          "upgarded the nvmrc to node 22, the old one goes EOL soon"),
         active="node 22", gone="node 18"),
    # tool and service switches
    Case("h14_ci_moved",
         ("CI runs on Buildkite.",
          "We moved CI off Buildkite and onto Woodpecker."),
         active="Woodpecker", gone="Buildkite"),
    Case("h14_hosting_switched_from_to",
         ("The marketing site is hosted on a Hetzner box.",
          "switched from Hetzner to Scaleway for the marketing site"),
         active="Scaleway", gone="Hetzner"),
    Case("h14_package_manager_replaced",
         ("Dependencies are managed with PDM.",
          "we replaced PDM with uv across all the services"),
         active="uv", gone="PDM"),
    Case("h14_editor_indirect",
         ("I code in Sublime Text.",
          "been on Helix for a few weeks now and i'm not going back"),
         active="Helix", gone="Sublime"),
    Case("h14_terminal_not_anymore",
         ("My terminal is Alacritty.",
          "I don't use Alacritty anymore, WezTerm does everything I need."),
         active="WezTerm", gone="Alacritty"),
    Case("h14_test_runner_dropped",
         ("Our JS tests run with Jest.",
          "We dropped Jest. Vitest runs the whole suite now."),
         active="Vitest", gone="Jest"),
    Case("h14_linter_unrelated_between",
         ("The Python code is linted with flake8.",
          "What's a good name for a helper that retries HTTP calls?",
          "oh and linting is done by ruff now, we took the old linter out of pre-commit"),
         active="ruff", gone="flake8"),
    Case("h14_formatter_passive",
         ("Prettier formats the frontend code.",
          "The frontend code is formatted by Biome these days."),
         active="Biome", gone="Prettier"),
    Case("h14_cloud_no_longer",
         ("Our infrastructure lives on DigitalOcean.",
          "We're no longer on DigitalOcean; as of Q3 everything runs on Exoscale."),
         active="Exoscale", gone="DigitalOcean"),
    Case("h14_auth_provider",
         ("Login goes through Auth0.",
          "auth0 got too pricey so we're on Keycloak now, self-hosted"),
         active="Keycloak", gone="Auth0"),
    Case("h14_queue_inside_other_talk",
         ("Background jobs go through RabbitMQ.",
          "Can you look at the retry logic in worker.py? Since we swapped RabbitMQ for NATS JetStream the "
          "redelivery behaves differently and I think the backoff is off."),
         active="NATS", gone="RabbitMQ"),
    # preference reversals
    Case("h14_food_pescatarian",
         ("I'm vegetarian.",
          "I eat fish again since the summer, so pescatarian I guess"),
         active="pescatarian", gone="vegetarian"),
    Case("h14_schedule_meetings",
         ("I prefer meetings in the morning.",
          "Changed my mind, afternoons work much better for meetings now."),
         active="afternoons", gone="morning"),
    Case("h14_code_style_tabs",
         ("I like tabs for indentation.",
          "ok you convinced me, spaces from now on, 4 of them"),
         active="spaces", gone="tabs"),
    Case("h14_ui_dark_mode",
         ("I prefer light mode in every app.",
          "dark mode everywhere now, my eyes thank me 😎"),
         active="dark mode", gone="light mode"),
    Case("h14_coffee_these_days",
         ("I drink my coffee black.",
          "These days I take oat milk in my coffee."),
         active="oat milk", gone="black"),
    # partial forgets
    Case("h14_forget_part_parrot",
         ("I have a cat called Biscuit and a parrot called Nimbus.",
          "forget the part about the parrot, she lives with my sister now"),
         active="Biscuit", gone="Nimbus"),
    Case("h14_forget_part_ansible",
         ("The backend is written in Elixir and we deploy with Ansible.",
          "Forget the part about Ansible."),
         active="Elixir", gone="Ansible"),
    Case("h14_forget_part_half_marathon",
         ("I'm allergic to peanuts and I'm training for a half marathon.",
          "you can forget the bit about the training, I got injured"),
         active="peanuts", gone="half marathon"),
    # temporary facts that ended
    Case("h14_temp_stay_until_friday",
         ("I'm staying at my brother's in Kraków until Friday.",
          "back home in Gdańsk now, the visit went great"),
         active="Gdańsk", gone="Kraków"),
    Case("h14_temp_office_stint",
         ("I'm working out of the Halifax office for the next two weeks.",
          "two weeks done, I'm back at the Moncton office 🙌"),
         active="Moncton", gone="Halifax"),
]

_CHINESE = [
    Case("h14_zh_move_city",
         ("我住在洛阳。",
          "上个月搬到了珠海，海边生活挺好的"),
         active="珠海", gone="洛阳"),
    Case("h14_zh_move_country_no_longer",
         ("我现在在新西兰工作。",
          "我已经不在新西兰了，现在在智利"),
         active="智利", gone="新西兰"),
    Case("h14_zh_job_company",
         ("我在青禾科技做测试工程师。",
          "我跳槽到蓝鲸物流了，还是做测试"),
         active="蓝鲸物流", gone="青禾科技"),
    Case("h14_zh_job_quit",
         ("我在一家咖啡连锁店当店长。",
          "辞职了，现在自己开了一家面包店 😄"),
         active="面包店", gone="店长"),
    Case("h14_zh_nickname",
         ("叫我小周就行。",
          "以后叫我阿周吧，大家都这么叫"),
         active="阿周", gone="小周"),
    Case("h14_zh_project_renamed",
         ("我们的项目叫星河日记。",
          "项目改名了，现在叫云帆笔记"),
         active="云帆笔记", gone="星河日记"),
    Case("h14_zh_java_version",
         ("我们的后端用的是 Java 11。",
          "后端已经升级到 Java 21 了"),
         active="Java 21", gone="Java 11"),
    Case("h14_zh_ci",
         ("我们用 Jenkins 跑持续集成。",
          "持续集成换成 GitLab CI 了，老的那台机器已经下线"),
         active="GitLab CI", gone="Jenkins"),
    Case("h14_zh_database_used_to",
         ("数据库用的是 MongoDB。",
          "以前用 MongoDB，现在全部换成 TiDB 了"),
         active="TiDB", gone="MongoDB"),
    Case("h14_zh_editor",
         ("我平时用 VS Code 写代码。",
          "最近改用 Neovim 了，用习惯了真香"),
         active="Neovim", gone="VS Code"),
    Case("h14_zh_food_spicy",
         ("我不吃辣。",
          "现在能吃辣了，在四川待了一年练出来的"),
         active="能吃辣", gone="不吃辣"),
    Case("h14_zh_schedule",
         ("我习惯晚上写代码。",
          "最近改成早上六点起来写代码了"),
         active="早上", gone="晚上"),
    Case("h14_zh_forget_part",
         ("我养了一只狗叫豆豆，还养了两条金鱼。",
          "金鱼那部分忘掉吧"),
         active="豆豆", gone="金鱼"),
    Case("h14_zh_trip_ended",
         ("这周我在上海出差。",
          "出差结束了，已经回到杭州"),
         active="杭州", gone="上海"),
    Case("h14_zh_cloud_unrelated_between",
         ("服务部署在阿里云上。",
          "帮我写一个正则，匹配手机号",
          "对了，上个季度服务全部迁到了腾讯云"),
         active="腾讯云", gone="阿里云"),
]

HELD_OUT_14 = _ENGLISH + _CHINESE

NOT_CORRECTIONS_14 = [
    Case("h14_not_sister_moved",
         ("I live in Bergen.",
          "My sister just moved to Stavanger, I'm helping her paint this weekend."),
         active="Bergen", gone=""),
    Case("h14_not_partner_offer",
         ("I work at Halden Analytics.",
          "My partner got an offer from Kestrel Bank, we're celebrating tonight."),
         active="Halden", gone=""),
    Case("h14_not_hypothetical",
         ("We deploy with Nomad.",
          "If we ever outgrow it, would Kubernetes be the obvious next step?"),
         active="Nomad", gone=""),
    Case("h14_not_maybe_plan",
         ("The worker runs on Python 3.11.",
          "we might upgrade to 3.13 next year if the deps catch up"),
         active="3.11", gone=""),
    Case("h14_not_question",
         ("Our CI is CircleCI.",
          "Is Drone cheaper than CircleCI for a team of five?"),
         active="CircleCI", gone=""),
    Case("h14_not_history",
         ("I live in Porto Alegre.",
          "Before that I spent three years in Curitiba, which I still miss."),
         active="Porto Alegre", gone=""),
    Case("h14_not_added_tool",
         ("We use Sentry for error tracking.",
          "We also added Grafana for dashboards, alongside the error tracking."),
         active="Sentry", gone=""),
    Case("h14_not_one_off",
         ("I write my notes in Obsidian.",
          "Just this once I jotted the meeting notes in Google Docs because I was on my phone."),
         active="Obsidian", gone=""),
    Case("h14_not_joke",
         ("I work as a nurse in Wollongong.",
          "honestly I should just quit and become a llama farmer 😂"),
         active="nurse", gone=""),
    Case("h14_not_sarcasm",
         ("Our editor of choice is Emacs.",
          "oh sure, let's all switch to Notepad, that'll go great"),
         active="Emacs", gone=""),
    Case("h14_not_trip",
         ("I live in Tartu.",
          "Flying to Reykjavík for a week of hiking on Saturday!"),
         active="Tartu", gone=""),
    Case("h14_not_negated_wish",
         ("We use SQLite for the desktop app.",
          "I wouldn't want to swap it for anything heavier, it's perfect here."),
         active="SQLite", gone=""),
    Case("h14_not_coworker_handle",
         ("My handle is @brambleowl.",
          "my coworker changed her handle to @nightjar last week"),
         active="brambleowl", gone=""),
    Case("h14_not_second_dog_plan",
         ("I have a greyhound named Pixel.",
          "We're thinking about getting a second dog, maybe a whippet."),
         active="Pixel", gone=""),
    Case("h14_not_old_version_history",
         ("The API runs on Ruby 3.3.",
          "Back in 2019 it was still on Ruby 2.6, what a pain that was."),
         active="Ruby 3.3", gone=""),
    Case("h14_not_zh_cousin_moved",
         ("我住在厦门。",
          "我表哥刚搬去了长沙"),
         active="厦门", gone=""),
    Case("h14_not_zh_hypothetical",
         ("我们用 Redis 做缓存。",
          "如果以后流量更大，要不要考虑换成 Memcached？"),
         active="Redis", gone=""),
    Case("h14_not_zh_trip",
         ("我在南京上班。",
          "下周去青岛玩三天"),
         active="南京", gone=""),
    Case("h14_not_zh_roommate_job",
         ("我在一家游戏公司做美术。",
          "我室友刚从银行辞职了"),
         active="美术", gone=""),
    Case("h14_not_zh_negated_wish",
         ("我用 Vim 写代码。",
          "我才不想换 Emacs 呢，哈哈"),
         active="Vim", gone=""),
]

_CJK = re.compile(r"[\u4e00-\u9fff]")


def test_set_is_as_described() -> None:
    """The counts the docstring states: 60 corrections (45 English, 15 Chinese), 20 non-corrections (5 Chinese), names unique."""
    assert len(HELD_OUT_14) == 60
    assert sum(1 for c in HELD_OUT_14 if _CJK.search(c.said[-1])) == 15
    assert all(2 <= len(c.said) <= 4 and c.active and c.gone for c in HELD_OUT_14)
    assert len(NOT_CORRECTIONS_14) == 20
    assert sum(1 for c in NOT_CORRECTIONS_14 if _CJK.search(c.said[-1])) == 5
    assert all(2 <= len(c.said) <= 4 and c.gone == "" and c.active for c in NOT_CORRECTIONS_14)
    names = [c.name for c in HELD_OUT_14 + NOT_CORRECTIONS_14]
    assert len(names) == len(set(names))


def test_heldout14_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each correction through the real pipeline; print the rate and hold the measured floor."""
    failures = failures_of(HELD_OUT_14, tmp_path)
    n = len(HELD_OUT_14)
    ok = n - len(failures)
    show(capsys, f"held-out14: {ok}/{n} corrections handled (blind set)", failures)
    assert ok / n >= FLOOR, "\n".join(failures)


def test_heldout14_not_corrections(tmp_path, capsys) -> None:  # noqa: ANN001 - pytest fixtures
    """Each non-correction through the real pipeline: the first fact must stay active and not be superseded."""
    wrong = wrongly_replaced(NOT_CORRECTIONS_14, tmp_path)
    n = len(NOT_CORRECTIONS_14)
    kept = n - len(wrong)
    show(capsys, f"held-out14 not-corrections: {kept}/{n} kept (blind set)", wrong, mark="REPLACED")
    assert kept / n >= NOT_FLOOR, "\n".join(wrong)
