"""A ninth held-out set of corrections (issue 21, item 2): written blind, measured once before and once after.

Written by a reader who saw no code, no test and no doc of evlog (only the ``Case`` format and the
kinds of statement to cover), before this round's extraction changes ("keep": ordinary statements of
a slot; "locomo": dates and weak sentences) were merged. Run once on main before the round (9/54 = 17%;
7 of 18 non-corrections wrong: the first fact lost, or replaced) and once on the merged code
(13/54 = 24%; 6 of 18): no rule was changed for it. The failures are mostly statements the offline
extractor keeps no fact of, in wordings the round's own sets did not have. EN and simplified Chinese.
``pytest tests/processors/test_corrections_heldout9.py -q -s`` prints the rate and the failures.
"""

from __future__ import annotations

from tests.memory_pipeline import Case, failures_of, holds, run_case

HELD_OUT_9 = [
    # Case(name, said, active, gone)
    # --- where the user lives ---
    Case("home: denver to austin",
         ("hey, quick context: I live in Denver, so mountain time for anything scheduling related",
          "unrelated but how do I stop my cat from sitting on the keyboard",
          "ok so update, i'm in austin now. the move was brutal but we're finally settled"),
         "Austin", "Denver"),
    Case("home: glasgow to edinburgh",
         ("I'm writing from Glasgow, fwiw — rain as usual",
          "lol no more glasgow rain for me, relocated to Edinburgh last month for the new flat. (it also rains here)"),
         "Edinburgh", "Glasgow"),
    Case("home zh: chengdu to hangzhou",
         ("我住在成都，平时吃辣比较多哈哈",
          "搬家了，现在在杭州，离西湖挺近的，周末可以去骑车"),
         "杭州", "成都"),
    Case("home zh: shenzhen to suzhou",
         ("我现在人在深圳，做硬件的朋友比较多。",
          "上周刚从深圳搬到苏州了，房租便宜太多，就是外卖没那么卷"),
         "苏州", "深圳"),
    Case("home: toronto to montreal",
         ("my home base is Toronto, if that matters for the tax stuff",
          "Been living in Montreal since january btw, forgot to mention. my french is still terrible"),
         "Montreal", "Toronto"),
    Case("home: seattle to portland typo",
         ("i live in seatle (seattle lol, can't type today) with my partner",
          "we ended up buying a place down in Portland so thats home now. smaller but ours"),
         "Portland", "Seattle"),

    # --- employer and role ---
    Case("job: shopify to stripe",
         ("I work at Shopify as a backend dev.",
          "started at Stripe on monday!! still onboarding, everything is new and the codebase is huge"),
         "Stripe", "Shopify"),
    Case("role: junior to senior analyst",
         ("I'm a junior data analyst at a small insurance company",
          "guess who got promoted 😎 officially a senior analyst now, same company, same desk"),
         "senior", "junior"),
    Case("job zh: bytedance to meituan",
         ("我在字节跳动做前端开发。",
          "跳槽了哈，现在在美团，还是写前端，不过换成做商家后台了"),
         "美团", "字节跳动"),
    Case("role zh: pm to tech lead",
         ("我是产品经理，在一家做SaaS的创业公司。",
          "我转岗了，现在不做产品经理了，改做技术负责人，压力有点大"),
         "技术负责人", "产品经理"),
    Case("job: atlassian to canva contract",
         ("context: I'm a QA engineer at Atlassian",
          "i left atlassian a while back actually, I'm contracting for Canva these days"),
         "Canva", "Atlassian"),
    Case("job: acquired startup",
         ("I'm the only DevOps person at my company, a logistics startup called Freightly",
          "so we got acquired, which means technically I work for Maersk now. weird feeling ngl"),
         "Maersk", "Freightly"),

    # --- what to call the user ---
    Case("name: kat to katherine",
         ("Hi! I'm Katherine, but everyone calls me Kat.",
          "honestly kat feels too casual for the way I use this, could you stick to Katherine from now on?"),
         "Katherine", "Kat"),
    Case("name: married surname change",
         ("I'm Laura Jensen, nice to meet you",
          "quick admin thing: I got married in june and changed my last name — it's Laura Okafor now"),
         "Okafor", "Jensen"),
    Case("name zh: xiaowang to wanggong",
         ("叫我小王就行。",
          "以后叫我王工吧，同事现在都这么叫，小王听着像实习生"),
         "王工", "小王"),
    Case("name zh: english name",
         ("我英文名叫 Kevin。",
          "其实 Kevin 这个名字我早就不用了，现在大家都叫我 Leo，你也改一下"),
         "Leo", "Kevin"),
    Case("name: handle to real name",
         ("I go by my handle, 'nullptr', in this chat",
          "can you switch to calling me Priya? the handle thing was a bit silly tbh"),
         "Priya", "nullptr"),

    # --- language / runtime / framework versions ---
    Case("version: python 3.9 to 3.12 with plan in between",
         ("The service is on Python 3.9.",
          "thinking we might try 3.11 at some point, no rush",
          "ok skipped 3.11 entirely — we're running python 3.12 in prod as of yesterday"),
         "3.12", "3.9"),
    Case("version: react 17 to 18",
         ("We use React 17 for the dashboard.",
          "the dashboard migration landed!! React 18 everywhere, concurrent stuff and all"),
         "React 18", "React 17"),
    Case("version: django lts",
         ("backend is Django 3.2 LTS",
          "upgraded django to 4.2 (the newer LTS), took a week of fixing deprecation warnings"),
         "4.2", "3.2"),
    Case("version zh: java 8 to 17",
         ("我们项目用的是 Java 8。",
          "终于把 JDK 升到 Java 17 了，老大拖了两年才同意"),
         "Java 17", "Java 8"),
    Case("version zh: vue 2 to 3",
         ("项目是用 Vue 2 写的",
          "上个月整体重构成 Vue 3 了，组合式 API 真香"),
         "Vue 3", "Vue 2"),
    Case("version: go directive bump",
         ("the app targets go 1.19",
          "heads up, bumped the go directive to 1.22 in go.mod, so generics-heavy stuff and range-over-int are fair game"),
         "1.22", "1.19"),
    Case("version: rails upgrade merged",
         ("We're pinned to Rails 6.1 for now, sadly.",
          "rails 7.1 upgrade is merged 🎉 no longer pinned to anything ancient"),
         "7.1", "6.1"),

    # --- tools and services ---
    Case("ci: jenkins to github actions",
         ("CI is Jenkins, self-hosted, please don't suggest anything else",
          "we finally killed the jenkins box. everything runs in GitHub Actions now"),
         "GitHub Actions", "Jenkins"),
    Case("db: mysql to postgres",
         ("Our database is MySQL 5.7.",
          "we migrated off mysql over the holidays, it's Postgres now so give me postgres syntax please"),
         "Postgres", "MySQL"),
    Case("cloud: aws to gcp",
         ("we host everything on AWS",
          "management moved us to GCP as part of some credits deal, so think gcp when you answer infra questions"),
         "GCP", "AWS"),
    Case("pkg manager: npm to pnpm",
         ("I use npm for this repo",
          "switched the repo to pnpm last week, the lockfile is pnpm-lock.yaml now"),
         "pnpm", "npm"),
    Case("editor: vscode to neovim",
         ("My editor is VS Code.",
          "I've been fully on Neovim for a month now, uninstalled the other thing. lazy.nvim config questions incoming"),
         "Neovim", "VS Code"),
    Case("test runner zh: jest to vitest",
         ("我们的测试框架是 Jest。",
          "测试这块已经换成 Vitest 了，跑起来快很多"),
         "Vitest", "Jest"),
    Case("cloud zh: aliyun to tencent",
         ("我们的服务部署在阿里云上。",
          "服务上周全部迁到腾讯云了，以后按腾讯云的产品来给建议"),
         "腾讯云", "阿里云"),
    Case("deploy: heroku to fly",
         ("deploys go to Heroku",
          "ok heroku is gone (rip free tier), we're deploying to Fly.io now"),
         "Fly.io", "Heroku"),
    Case("editor zh: pycharm to cursor",
         ("我平时用 PyCharm 写代码",
          "最近改用 Cursor 了，PyCharm 太吃内存，笔记本顶不住"),
         "Cursor", "PyCharm"),

    # --- preferences between options ---
    Case("pref: short to detailed answers",
         ("I like short answers, bullet points, no fluff.",
          "hmm, changed my mind on the terse thing. give me detailed explanations from now on, I'm learning and the bullets skip too much"),
         "detailed", "short"),
    Case("pref: tabs to spaces",
         ("I indent with tabs.",
          "the team voted and we're doing 2 spaces now, so please format my snippets with spaces"),
         "spaces", "tabs"),
    Case("pref: dark to light theme",
         ("dark mode everything pls, my eyes",
          "weirdly i've come around to light themes, working outside on the balcony a lot now and dark is unreadable"),
         "light", "dark"),
    Case("habit: coffee to tea",
         ("I drink coffee all day, like 4 cups minimum",
          "quit coffee three weeks ago!! green tea only now, the headaches are finally gone"),
         "tea", "coffee"),
    Case("hours zh: night to early morning",
         ("我习惯晚上写代码，一般十点以后才开始。",
          "最近作息调整了，改成早上六点起来写代码，晚上就不碰电脑了"),
         "六点", "十点"),
    Case("pref zh: reply language",
         ("回答请用中文。",
          "以后用英文回复我吧，我想练练英语，看不懂的我再问"),
         "英文", "中文"),
    Case("diet: vegetarian to pescatarian",
         ("I'm vegetarian, fyi, in case recipes come up",
          "small update on the food front — I eat fish again, so pescatarian these days"),
         "pescatarian", "vegetarian"),
    Case("pref: british to us spelling",
         ("please always use British English spelling in anything you write for me",
          "ignore the british spelling thing, US spelling is what we want now, our docs standardised on it"),
         "US", "British"),

    # --- partial forgets ---
    Case("forget: dog, keep remote work",
         ("I have a dog named Biscuit and I work remotely from home.",
          "please forget the dog stuff, Biscuit passed away last week. it's hard to see it come up"),
         "remotely", "Biscuit"),
    Case("forget: band, keep japanese",
         ("I play guitar in a band and I'm learning Japanese.",
          "the band broke up so scratch that part, but yeah still grinding japanese every day"),
         "Japanese", "band"),
    Case("forget zh: fish tank, keep hiking",
         ("我养了一缸热带鱼，周末喜欢去爬山。",
          "鱼缸上个月清掉了，鱼都送人了，这条你删了吧。爬山还在坚持"),
         "爬山", "鱼"),
    Case("forget zh: grad school, keep bank job",
         ("我在读在职研究生，同时在一家银行上班。",
          "研究生我退了，太累，这个你不用再记了。银行的工作还在"),
         "银行", "研究生"),
    Case("forget: marathon, keep standing desk",
         ("I'm training for a marathon and I use a standing desk.",
          "no longer training for the marathon, knee injury 🙃 desk setup is the same though"),
         "standing desk", "marathon"),
    Case("forget: dvorak, keep colorblind",
         ("fyi I'm colorblind (red-green) and I type on a Dvorak layout",
          "you can drop the dvorak note, I gave up and went back to qwerty"),
         "colorblind", "Dvorak"),
    Case("forget zh: badminton, keep piano",
         ("我每周三晚上去打羽毛球，周末带孩子上钢琴课。",
          "羽毛球不打了，这条可以忘掉。钢琴课还是每周末照常"),
         "钢琴", "羽毛球"),

    # --- schedules ---
    Case("sched: sprint planning day",
         ("Sprint planning is every other Monday.",
          "fyi sprint planning is on tuesday now (still biweekly), mondays were a mess"),
         "Tuesday", "Monday"),
    Case("sched: 1:1 moved",
         ("I have a 1:1 with my manager every Thursday at 3pm",
          "my manager shifted our 1:1 to Friday mornings, so that's the slot now"),
         "Friday", "Thursday"),
    Case("sched zh: release day",
         ("我们每周五下午发版。",
          "发版时间改到周二上午了，之前周五发版出过一次大事故"),
         "周二", "周五"),
    Case("sched zh: standup time",
         ("我们组的站会是每天早上九点半。",
          "站会挪到下午两点了，为了跟美国那边的同事对齐"),
         "两点", "九点半"),
    Case("sched: backup cron",
         ("the nightly backup job runs at 2am UTC",
          "changed the backup cron to 4am utc, it kept colliding with the reports job"),
         "4am", "2am"),
    Case("sched: release cadence",
         ("our release train ships every two weeks",
          "we went to weekly releases this quarter, product wanted faster feedback"),
         "weekly", "two weeks"),
]

NOT_CORRECTIONS_9 = [
    # statements that look similar but must NOT replace the first fact; gone = ""
    Case("not: spouse job offer",
         ("I work at Deloitte as a consultant.",
          "my husband just got an offer from Accenture, we're celebrating tonight"),
         "Deloitte", ""),
    Case("not: hypothetical ecs",
         ("We deploy to Kubernetes on EKS.",
          "what would it take to move to ECS? just curious, not planning anything"),
         "EKS", ""),
    Case("not: conference trip",
         ("I live in Lyon.",
          "spent last week in Marseille for a conference, the food was amazing"),
         "Lyon", ""),
    Case("not: side project package manager",
         ("The main repo uses Yarn.",
          "for my side project I'm using bun, it's pretty fun"),
         "Yarn", ""),
    Case("not: joke about spaces",
         ("I prefer tabs.",
          "lol imagine if I said I prefer spaces. jk. tabs forever"),
         "tabs", ""),
    Case("not: additional ci",
         ("Our CI runs on CircleCI.",
          "we also added Buildkite for the mobile builds, the rest stays where it is"),
         "CircleCI", ""),
    Case("not: other machine os",
         ("My work laptop runs Ubuntu 22.04.",
          "my personal macbook is on Sonoma, totally separate machine"),
         "Ubuntu", ""),
    Case("not: question about upgrade",
         ("I'm on Python 3.11 for this project.",
          "if we ever upgraded to 3.13, would the free-threading stuff matter for us?"),
         "3.11", ""),
    Case("not: coworker with similar name",
         ("call me Ben",
          "my coworker Benjamin keeps getting my emails lol, people mix us up constantly"),
         "Ben", ""),
    Case("not: one-off standup shift",
         ("standup is at 9:30 every day",
          "tomorrow's standup is pushed to 11 because of the offsite, just this once"),
         "9:30", ""),
    Case("not: someday emacs",
         ("I use Vim.",
          "thinking about trying Emacs someday, everyone says org-mode is great"),
         "Vim", ""),
    Case("not: hiring another lead",
         ("I'm the tech lead on the payments team.",
          "we're hiring another tech lead for the growth team if you know anyone good"),
         "payments", ""),
    Case("not zh: brother moving",
         ("我住在北京。",
          "我哥下个月要搬去上海了，以后过年得两头跑"),
         "北京", ""),
    Case("not zh: database question",
         ("我们的数据库用的是 MongoDB。",
          "如果换成 PostgreSQL 会不会更好？你帮我分析一下优缺点，只是问问"),
         "MongoDB", ""),
    Case("not zh: past employer",
         ("我在腾讯做后端。",
          "之前在华为待过三年，那会儿加班很猛"),
         "腾讯", ""),
    Case("not zh: meeting cancelled once",
         ("每周一早上十点开周会。",
          "这周一的周会临时取消了，下周照常"),
         "十点", ""),
    Case("not zh: one-time milk tea",
         ("我喜欢喝美式咖啡。",
          "今天破例喝了杯奶茶，偶尔换换口味"),
         "美式", ""),
    Case("not zh: legacy service version",
         ("我用 Go 1.21 写这个服务。",
          "另一个老服务还停在 Go 1.16，暂时不打算动"),
         "1.21", ""),
]


#: The issue's target; the test fails below FLOOR, the rate measured on this set (rounded down).
TARGET = 0.9
FLOOR = 0.24  # 13/54 with the merged round-5 code, measured once, no rule changed for it
MAX_WRONG = 6  # of NOT_CORRECTIONS_9, the first fact lost or wrongly replaced: 6/18 with that code


def test_ninth_held_out_corrections_end_with_only_the_new_value_active(evlog_home, capsys):
    assert len(HELD_OUT_9) >= 40
    failures = failures_of(HELD_OUT_9, evlog_home)
    ok = len(HELD_OUT_9) - len(failures)
    with capsys.disabled():
        print(f"\nninth held-out corrections: {ok}/{len(HELD_OUT_9)} = {ok / len(HELD_OUT_9):.0%} "
              f"(target {TARGET:.0%})")
        for f in failures:
            print("  FAIL", f)
    assert ok / len(HELD_OUT_9) >= FLOOR, "\n".join(failures)


def test_statements_that_are_not_corrections_keep_the_first_fact(evlog_home, capsys):
    from eventlog.app.workspace import Workspace, init_workspace

    wrong = []
    for i, case in enumerate(NOT_CORRECTIONS_9):
        home = evlog_home / f"not{i}"
        init_workspace(str(home))
        ws = Workspace.open(str(home), writable=True)
        try:
            facts = run_case(ws, case)
        finally:
            ws.close()
        active = [f.text for f in facts if f.state == "active"]
        gone = [f.text for f in facts if f.state in ("superseded", "forgotten")]
        if not any(holds(t, case.active) for t in active) or any(holds(t, case.active) for t in gone):
            wrong.append(f"{case.name}: active {active}; gone {gone}")
    with capsys.disabled():
        print(f"\nnot corrections, first fact lost or wrongly replaced: {len(wrong)}/{len(NOT_CORRECTIONS_9)}")
        for w in wrong:
            print("  WRONG", w)
    assert len(wrong) <= MAX_WRONG, "\n".join(wrong)
