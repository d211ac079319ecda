"""Round seven of corrections by meaning (issue 21, item 2): tuned cases and negative cases.

``CASES`` are corrections (EN and simplified Chinese: moves, jobs, names, versions, tool and service switches,
preference reversals, partial forgets, temporary facts) written before round seven's code and read while it was
written, so their rate is a tuned figure, not a held-out one. ``NOT_CORRECTIONS`` are statements that change
nothing (an added fact sharing words, another person's fact, a question, a hypothetical): the first fact must stay
active and nothing may be superseded; their false-supersede rate is printed. Run with
``pytest tests/processors/test_corrections_round7.py -q -s`` to see both rates.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from eventlog.app.workspace import Workspace, init_workspace
from tests.memory_pipeline import Case, failures_of, holds, run_case

CASES = [
    Case("moved last month", ("I live in Leeds.", "We moved to York last month."), "York", "Leeds"),
    Case("home is these days", ("My home is in Porto.", "Home is Braga these days."), "Braga", "Porto"),
    Case("relocated in spring", ("I'm based in Austin.", "I relocated to Denver in the spring."), "Denver", "Austin"),
    Case("new job at", ("I work for Deloitte.", "I started a new job at KPMG this week."), "KPMG", "Deloitte"),
    Case("retrained now", ("I'm a nurse.", "I retrained and I'm a paramedic now."), "paramedic", "nurse"),
    Case("stopped teaching", ("I teach maths at a secondary school.", "I stopped teaching; I'm a data analyst now."),
         "data analyst", "maths"),
    Case("call me from now on", ("Call me Alex.", "Actually, please call me Sasha from now on."), "Sasha", "Alex"),
    Case("surname after wedding", ("My surname is Novak.", "After the wedding my surname is Horvat."), "Horvat",
         "Novak"),
    Case("upgraded python", ("We're on Python 3.10.", "We upgraded to Python 3.12 last week."), "Python 3.12",
         "Python 3.10"),
    Case("bumped node", ("The app targets Node 18.", "We bumped the app to Node 20."), "Node 20", "Node 18"),
    Case("notes live in", ("I write my notes in Notion.", "My notes live in Obsidian now."), "Obsidian", "Notion"),
    Case("site hosted on", ("We host the site on Netlify.", "The site is hosted on Vercel these days."), "Vercel",
         "Netlify"),
    Case("ci moved", ("Our CI runs on Jenkins.", "CI moved to GitHub Actions."), "GitHub Actions", "Jenkins"),
    Case("switched browsers", ("I use Chrome as my browser.", "I've switched browsers, Firefox is my browser now."),
         "Firefox", "Chrome"),
    Case("team chat on", ("We use Slack for team chat.", "Team chat is on Discord now."), "Discord", "Slack"),
    Case("bank account moved", ("I bank with Barclays.", "I moved my bank account to Monzo."), "Monzo", "Barclays"),
    Case("replaced error tracking", ("Our error tracking is Sentry.", "We replaced Sentry with Rollbar."), "Rollbar",
         "Sentry"),
    Case("prefer reversed", ("I prefer tea over coffee.", "These days I prefer coffee over tea."), "coffee over tea",
         "tea over coffee"),
    Case("steak now", ("I like my steak well done.", "I like my steak medium rare now."), "medium rare", "well done"),
    Case("work late now", ("I prefer working early in the morning.", "I prefer working late at night now."),
         "late at night", "early in the morning"),
    Case("forget the oud", ("I'm Omar and I play the oud.", "Forget that I play the oud."), "Omar", "oud"),
    Case("forget where I work", ("My name is Lena, I work at Zalando.", "Please forget where I work."), "Lena",
         "Zalando"),
    Case("back home from hotel", ("This week I'm staying at a hotel in Oslo.", "I'm back home in Bergen."), "Bergen",
         "Oslo"),
    Case("vegetarian to meat", ("I'm vegetarian.", "I eat meat again these days."), "meat", "vegetarian"),
    Case("deployments done with", ("We deploy with Ansible.", "Deployments are done with Terraform now."),
         "Terraform", "Ansible"),
    Case("laptop runs", ("I run Ubuntu on my laptop.", "My laptop runs Fedora now."), "Fedora", "Ubuntu"),
    Case("gave up spanish", ("I'm learning Spanish.", "I gave up Spanish and I'm learning Japanese now."), "Japanese",
         "Spanish"),
    Case("sprint length", ("Our sprints are two weeks long.", "Sprints are three weeks long now."), "three weeks",
         "two weeks"),
    Case("turned 35", ("I'm 34.", "I turned 35 yesterday."), "35", "34"),
    Case("favourite band lately", ("My favourite band is Radiohead.", "Lately my favourite band is Muse."), "Muse",
         "Radiohead"),
    Case("docs live now", ("We keep the docs in Confluence.", "The docs live in Notion now."), "Notion",
         "Confluence"),
    Case("sold and bought", ("I drive a Golf.", "I sold the Golf and bought a Tesla."), "Tesla", "Golf"),
    Case("standup moved", ("Our standup is at 9am.", "Standup moved to 10am."), "10am", "9am"),
    Case("emails through", ("We send transactional emails with SendGrid.",
                            "Transactional emails go through Postmark now."), "Postmark", "SendGrid"),
    Case("editor these days", ("I code in Sublime Text.", "These days I code in Zed."), "Zed", "Sublime"),
    Case("zh moved last year", ("我住在成都。", "我们家去年搬去了重庆。"), "重庆", "成都"),
    Case("zh left and now", ("我在腾讯上班。", "我已经离开腾讯，现在在字节跳动上班。"), "字节跳动", "腾讯"),
    Case("zh changed career", ("我是一名老师。", "我现在改行做程序员了。"), "程序员", "老师"),
    Case("zh ci switched", ("我们用 Jenkins 做持续集成。", "持续集成已经换成 GitLab 了。"), "GitLab", "Jenkins"),
    Case("zh stopped coffee", ("我喜欢喝咖啡。", "我现在不喝咖啡了，改喝绿茶。"), "绿茶", "咖啡"),
    Case("zh database migrated", ("我们的数据库是 MySQL。", "数据库迁移到 PostgreSQL 了。"), "PostgreSQL", "MySQL"),
    Case("zh upgraded python", ("我们用 Python 3.8。", "我们升级到 Python 3.11 了。"), "Python 3.11", "Python 3.8"),
    Case("zh call me from now", ("大家叫我小李。", "以后请叫我李工。"), "李工", "小李"),
    Case("zh swim day", ("我每周二去游泳。", "游泳改到每周四了。"), "四", "二"),
    Case("zh from to job", ("我在京东做运营。", "我从京东跳到了美团。"), "美团", "京东"),
]
#: A second batch, written after the first round of code (measured once: 26/30; three of its failures then fixed).
CASES_2 = [
    Case("moved now", ("I'm living in Ghent.", "I've moved, I live in Antwerp now."), "Antwerp", "Ghent"),
    Case("office moved", ("My office is in Canary Wharf.", "Our office moved to Shoreditch."), "Shoreditch", "Canary Wharf"),
    Case("promoted", ("I'm a junior developer at Monzo.", "I got promoted to senior developer."), "senior developer", "junior developer"),
    Case("notice and joined", ("I work remotely for Spotify.", "I handed in my notice at Spotify and joined Klarna."), "Klarna", "Spotify"),
    Case("username now", ("My username is jdoe42.", "My username is now jdoe_dev."), "jdoe_dev", "jdoe42"),
    Case("frontend on", ("We're on React 17.", "The frontend is on React 18 now."), "React 18", "React 17"),
    Case("database upgraded", ("Our database is MySQL 5.7.", "We upgraded the database to MySQL 8."), "MySQL 8", "MySQL 5.7"),
    Case("files stored", ("We store files in S3.", "Files are stored in Cloudflare R2 now."), "Cloudflare R2", "S3"),
    Case("switched to for notes", ("I take notes with Evernote.", "I switched to Bear for notes."), "Bear", "Evernote"),
    Case("meetings happen on", ("We use Zoom for meetings.", "Meetings happen on Google Meet these days."), "Google Meet", "Zoom"),
    Case("logs shipped", ("Our logs go to Papertrail.", "Logs are shipped to Datadog now."), "Datadog", "Papertrail"),
    Case("changed my mind", ("I prefer spaces over tabs.", "I changed my mind, I prefer tabs over spaces."), "tabs over spaces", "spaces over tabs"),
    Case("working in silence", ("I like working with music on.", "These days I like working in silence."), "silence", "music"),
    Case("favourite food now", ("My favourite food is sushi.", "My favourite food is ramen now."), "ramen", "sushi"),
    Case("forget about the cat", ("I'm Jonas and I have a cat called Mimi.", "Please forget about the cat."), "Jonas", "Mimi"),
    Case("back from until", ("I'm working from Madrid until Friday.", "I'm back in Barcelona."), "Barcelona", "Madrid"),
    Case("package manager from to", ("Our package manager is npm.", "We moved from npm to pnpm."), "pnpm", "npm"),
    Case("commute by", ("I commute by bus.", "I commute by bike now."), "bike", "bus"),
    Case("got a new phone", ("My phone is an iPhone 12.", "I got a Pixel 8 as my new phone."), "Pixel 8", "iPhone"),
    Case("rewrote in", ("The API is written in Flask.", "We rewrote the API in FastAPI."), "FastAPI", "Flask"),
    Case("zh work city now", ("我在上海工作。", "我现在在深圳工作了。"), "深圳", "上海"),
    Case("zh database switched", ("我们用 MySQL 做数据库。", "数据库换成 PostgreSQL 了。"), "PostgreSQL", "MySQL"),
    Case("zh prefer now", ("我喜欢看足球。", "我现在更喜欢看篮球。"), "篮球", "足球"),
    Case("zh frontend changed", ("我们的前端用 Vue。", "前端已经改成 React 了。"), "React", "Vue"),
    Case("zh renamed", ("我的名字是张伟。", "我改名了，现在叫张大伟。"), "张大伟", "张伟"),
    Case("zh age now", ("我今年30岁。", "我现在31岁了。"), "31", "30"),
    Case("standups moved", ("Our standups are on Zoom.", "Standups moved to Slack huddles."), "Slack", "Zoom"),
    Case("blog on now", ("I run my blog on WordPress.", "My blog is on Ghost now."), "Ghost", "WordPress"),
    Case("payments go through", ("We pay with Stripe.", "Payments go through Adyen now."), "Adyen", "Stripe"),
    Case("got divorced", ("I'm married.", "I got divorced last year."), "divorced", "married"),
]
#: A third batch, written after the second round of code (measured once: 13/19; three of its failures then fixed).
CASES_3 = [
    Case("now based in", ("I'm based in Lagos.", "I'm now based in Accra."), "Accra", "Lagos"),
    Case("build moved over", ("We build the app with Webpack.", "We've moved the build over to Vite."), "Vite", "Webpack"),
    Case("planning happens in", ("We use Trello for planning.", "Planning happens in Linear now."), "Linear", "Trello"),
    Case("left; these days at", ("I'm a product manager at Miro.", "I left Miro; these days I'm a product manager at Canva."), "Canva", "Miro"),
    Case("email changed", ("My email is ana@old.com.", "My email changed to ana@new.io."), "ana@new.io", "ana@old.com"),
    Case("moved to kotlin", ("We're on Kotlin 1.8.", "We moved to Kotlin 1.9 last sprint."), "Kotlin 1.9", "Kotlin 1.8"),
    Case("podcasts on now", ("I listen to podcasts on Spotify.", "I listen to podcasts on Overcast now."), "Overcast", "Spotify"),
    Case("linting done by", ("We lint Python with Pylint.", "Linting is done by Ruff now."), "Ruff", "Pylint"),
    Case("don't like anymore", ("I love horror films.", "I don't like horror films anymore, I prefer comedies."), "comedies", "horror"),
    Case("forget the violin", ("I'm Maya, and I play the violin.", "Forget that I play the violin."), "Maya", "violin"),
    Case("this week then back", ("This week I'm working from Porto.", "I'm back in Lisbon now."), "Lisbon", "Porto"),
    Case("branch renamed", ("Our main branch is master.", "The main branch was renamed to main."), "main", "master"),
    Case("tests run under", ("We run tests with pytest.", "Tests run under nox now."), "nox", "pytest"),
    Case("traded in for", ("My car is a Honda Civic.", "I traded the Civic in for a Mazda 3."), "Mazda", "Civic"),
    Case("gym day now", ("I go to the gym on Tuesdays.", "I go to the gym on Thursdays now."), "Thursdays", "Tuesdays"),
    Case("zh moved back home", ("我住在广州。", "我已经搬回老家长沙了。"), "长沙", "广州"),
    Case("zh service migrated", ("我们的服务部署在阿里云上。", "服务现在迁移到腾讯云了。"), "腾讯云", "阿里云"),
    Case("zh switched os", ("我用 Windows 写代码。", "我现在换成 Mac 写代码了。"), "Mac", "Windows"),
    Case("quit the bakery", ("I'm Leo and I work at a bakery.", "I quit the bakery, I'm a barista now."), "barista", "bakery"),
]
#: A fourth batch, written after the third round of code (measured once: 9/16; three of its failures then fixed).
CASES_4 = [
    Case("since may living", ("I live in Nairobi.", "Since May I've been living in Mombasa."), "Mombasa", "Nairobi"),
    Case("at now", ("I work at Atlassian.", "I'm at Canva now."), "Canva", "Atlassian"),
    Case("rewritten in", ("Our frontend uses Angular.", "The frontend was rewritten in Svelte."), "Svelte", "Angular"),
    Case("code hosting moved", ("We use GitLab for code hosting.", "Code hosting moved to GitHub."), "GitHub", "GitLab"),
    Case("switched phone", ("I'm on Android.", "I switched to an iPhone."), "iPhone", "Android"),
    Case("use name from now on", ("I go by Kate.", "Please use Katherine from now on."), "Katherine", "Kate"),
    Case("go version now", ("Our Go version is 1.20.", "We're on Go 1.22 now."), "1.22", "1.20"),
    Case("alerts go to", ("We send alerts to PagerDuty.", "Alerts go to Opsgenie now."), "Opsgenie", "PagerDuty"),
    Case("roast now", ("I prefer light roast coffee.", "I prefer dark roast coffee now."), "dark roast", "light roast"),
    Case("not vegan anymore", ("I'm a vegan.", "I'm not vegan anymore, I'm pescatarian now."), "pescatarian", "vegan"),
    Case("cancelled and joined", ("My gym is PureGym.", "I cancelled PureGym and joined The Gym Group."), "Gym Group", "PureGym"),
    Case("docs moved", ("We host our docs on GitBook.", "Our docs moved to Mintlify."), "Mintlify", "GitBook"),
    Case("zh changed work city", ("我在杭州上班。", "我上个月换到南京上班了。"), "南京", "杭州"),
    Case("zh task tool", ("我们用 Jira 管理任务。", "任务管理现在用 Linear 了。"), "Linear", "Jira"),
    Case("zh sold car", ("我开的是丰田。", "我把丰田卖了，现在开比亚迪。"), "比亚迪", "丰田"),
    Case("until then home again", ("I'm in Tokyo until Sunday for work.", "I'm home in Osaka again."), "Osaka", "Tokyo"),
]


@dataclass(frozen=True)
class NotACorrection:
    """Statements of which the later ones change nothing: ``kept`` stays active and nothing is superseded."""

    name: str
    said: tuple[str, ...]
    kept: str


NOT_CORRECTIONS = [
    NotACorrection("also use", ("I use VS Code for Python.", "I also use Vim for quick edits."), "VS Code"),
    NotACorrection("brother moved", ("I live in Munich.", "My brother moved to Hamburg."), "Munich"),
    NotACorrection("question move", ("I live in Munich.", "Should I move to Lisbon?"), "Munich"),
    NotACorrection("if I moved", ("I live in Munich.", "If I moved to Lisbon I'd learn Portuguese."), "Munich"),
    NotACorrection("wife works now", ("I work at Google.", "My wife works at Apple now."), "Google"),
    NotACorrection("another purpose", ("We use Postgres for the main database.", "We now use Redis for caching."),
                   "Postgres"),
    NotACorrection("sister lives", ("My sister lives in Paris.", "I live in Lyon."), "Paris"),
    NotACorrection("dad now farmer", ("I'm a teacher.", "My dad was a teacher and now he's a farmer."), "teacher"),
    NotACorrection("husband likes", ("My favourite genre is jazz.", "My husband likes rock these days."), "jazz"),
    NotACorrection("might move", ("We deploy to AWS.", "We might move to GCP next year."), "AWS"),
    NotACorrection("thinking of leaving", ("I work at Google.", "I'm thinking about leaving Google."), "Google"),
    NotACorrection("friend's city", ("I live in Munich.", "Tom lives in Vienna now."), "Munich"),
    NotACorrection("other tool other job", ("We use Jest for unit tests.", "We now use Playwright for browser tests."),
                   "Jest"),
    NotACorrection("zh friend moved", ("我住在北京。", "我朋友搬到上海了。"), "北京"),
    NotACorrection("zh also use", ("我们用 MySQL 存用户数据。", "我们现在也用 Redis 做缓存。"), "MySQL"),
    NotACorrection("zh question", ("我住在北京。", "我要不要搬到上海？"), "北京"),
    # a third batch, written after the second round of code (measured once: 0/8 wrong)
    NotACorrection("cousin lives now", ("I live in Lagos.", "My cousin lives in Accra now."), "Lagos"),
    NotACorrection("other tool for chat", ("We use Trello for planning.", "We use Slack for chat now."), "Trello"),
    NotACorrection("should I apply", ("I work at Miro.", "Should I apply at Canva?"), "Miro"),
    NotACorrection("if we moved", ("We build with Webpack.", "If we moved to Vite the builds would be faster."), "Webpack"),
    NotACorrection("also listen", ("I listen to podcasts on Spotify.", "I also listen to audiobooks on Audible."), "Spotify"),
    NotACorrection("zh sister moved", ("我住在广州。", "我姐姐搬到深圳了。"), "广州"),
    NotACorrection("other tool for lint", ("We run tests with pytest.", "We run the linter with Ruff now."), "pytest"),
    NotACorrection("she became", ("I'm a nurse.", "She became a doctor last year."), "nurse"),
    # a second batch, written after the first round of code (measured once: 1/12 wrong, then fixed)
    NotACorrection("parents live now", ("I live in Oslo.", "My parents live in Bergen now."), "Oslo"),
    NotACorrection("other setting", ("We use Docker for local development.", "We now use Kubernetes in production."), "Docker"),
    NotACorrection("would I be", ("I work at IKEA.", "Would I be happier at Spotify?"), "IKEA"),
    NotACorrection("tool is slow", ("I use Firefox as my browser.", "Firefox is slow these days."), "Firefox"),
    NotACorrection("manager moved", ("My manager is Priya.", "Priya moved to Toronto."), "Priya"),
    NotACorrection("now also", ("I drink coffee every morning.", "I now also drink green tea in the afternoon."), "coffee"),
    NotACorrection("other part", ("We deploy the backend to Fly.", "We write the frontend in Svelte now."), "Fly"),
    NotACorrection("maybe someday", ("I live in Oslo.", "Maybe I'll move to Stockholm someday."), "Oslo"),
    NotACorrection("zh wife works", ("我在北京工作。", "我老婆现在在上海工作。"), "北京"),
    NotACorrection("other language", ("I use Vim for Go.", "I now use Emacs for Lisp."), "Vim"),
    NotACorrection("daughter's school", ("My daughter goes to Elm School.", "I started at Oak Labs."), "Elm School"),
    NotACorrection("other site", ("We host the docs on Read the Docs.", "Our marketing site is on Webflow now."), "Read the Docs"),
]

#: The issue's target for corrections; the tests fail below the floors, the rates measured (rounded down).
TARGET = 0.9
FLOOR = 0.92  # 26/45 = 58% before round seven's code; 99/110 = 90.0% after (all four batches read); 102/110 with the change path
#: The most false supersedes the negative cases may show (measured).
MAX_FALSE = 0  # 6/16 before round seven's code; 0/36 after


def _false_supersedes(cases: list[NotACorrection], root: str) -> list[str]:
    out = []
    for i, case in enumerate(cases):
        home = os.path.join(root, f"neg{i}")
        init_workspace(home)
        ws = Workspace.open(home, writable=True)
        try:
            facts = run_case(ws, Case(case.name, case.said, case.kept, ""))
        finally:
            ws.close()
        active = [f.text for f in facts if f.state == "active"]
        gone = [(f.state, f.text) for f in facts if f.state in ("superseded", "forgotten")]
        if gone or not any(holds(t, case.kept) for t in active):
            out.append(f"{case.name}: gone {gone}; active {active}")
    return out


def test_round_seven_corrections_end_with_only_the_new_value_active(evlog_home, capsys):
    cases = CASES + CASES_2 + CASES_3 + CASES_4
    assert len(cases) >= 40
    failures = failures_of(cases, evlog_home)
    ok = len(cases) - len(failures)
    with capsys.disabled():
        print(f"\nround seven corrections: {ok}/{len(cases)} = {ok / len(cases):.0%} (target {TARGET:.0%})")
        for f in failures:
            print("  FAIL", f)
    assert ok / len(cases) >= FLOOR, "\n".join(failures)


def test_statements_that_change_nothing_supersede_nothing(evlog_home, capsys):
    wrong = _false_supersedes(NOT_CORRECTIONS, str(evlog_home))
    with capsys.disabled():
        print(f"\nfalse supersedes: {len(wrong)}/{len(NOT_CORRECTIONS)}")
        for w in wrong:
            print("  WRONG", w)
    assert len(wrong) <= MAX_FALSE, "\n".join(wrong)
