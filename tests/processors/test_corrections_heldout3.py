"""A third held-out set of corrections (issue 21, item 2), written before the third round of tuning.

The cases were written and committed before the slot code was read for that round: EN and simplified
Chinese, moves, jobs and titles, names, versions, tool and service switches, preference reversals,
partial forgets, temporary facts, relationship status, pets, diets, embedded in other talk and in
many sentence shapes ("turns out", "not X but Y", "we've since", "as of this week", "no more X",
"ended up going with Y"). Run with ``pytest tests/processors/test_corrections_heldout3.py -q -s``
to see the rate printed.

Measured: 20/51 = 39% with the code of the day the set was committed (the honest held-out figure); the third round
of tuning then read its failures (by class, not by sentence), so the 49/51 after it is no longer a held-out figure:
``test_corrections_heldout4.py``, written after the code was final, is.
"""

from __future__ import annotations

from tests.memory_pipeline import Case, failures_of

HELD_OUT_3 = [
    Case("turns out settled", ("I live in Austin.", "Turns out I'm not in Austin anymore, we settled in Boulder."),
         "Boulder", "Austin"),
    Case("not X but Y", ("I work at Oracle.", "Small correction: it's not Oracle but Salesforce where I work."),
         "Salesforce", "Oracle"),
    Case("we've since", ("We build with CircleCI.", "We've since moved our builds to Buildkite."), "Buildkite",
         "CircleCI"),
    Case("as of this week", ("Our main database is MongoDB.", "As of this week our main database is CockroachDB."),
         "CockroachDB", "MongoDB"),
    Case("no more meat", ("I eat meat most days.", "No more meat for me, I'm pescatarian now."), "pescatarian",
         "meat"),
    Case("I quit X", ("I work at Uber as a driver.", "I quit Uber, I drive for Lyft these days."), "Lyft", "Uber"),
    Case("ended up going with", ("We're using Auth0 for login.", "We ended up going with Clerk for login instead."),
         "Clerk", "Auth0"),
    Case("title changed", ("I'm a staff engineer.", "My title changed last month, I'm a principal engineer now."),
         "principal engineer", "staff engineer"),
    Case("engaged", ("I'm single.", "I got engaged to Maria in May."), "engaged", "single"),
    Case("broke up", ("My girlfriend is Anna.", "Anna and I broke up; my girlfriend is Clara now."), "Clara",
         "Anna"),
    Case("pet passed", ("I have a cat named Miso.", "Miso passed away last year, and now I have a dog called Biscuit."),
         "Biscuit", "Miso"),
    Case("diet stopped", ("I'm on a keto diet.", "I stopped keto and I'm on a balanced diet these days."),
         "balanced", "keto"),
    Case("editor since", ("I write code in Sublime Text.", "I've since switched to Neovim for all my coding."),
         "Neovim", "Sublime Text"),
    Case("moved off cloud", ("Our servers are on DigitalOcean.", "We moved off DigitalOcean; everything runs on Hetzner now."),
         "Hetzner", "DigitalOcean"),
    Case("instead of pip", ("We install packages with pip.", "We install packages with conda now instead."), "conda",
         "pip"),
    Case("in favour of", ("Our CI is Travis CI.", "We dropped Travis CI in favour of GitHub Actions."),
         "GitHub Actions", "Travis CI"),
    Case("finally got onto", ("The backend runs Java 11.", "We finally got the backend onto Java 21 last sprint."),
         "Java 21", "Java 11"),
    Case("bumped while at it", ("We use TypeScript 4.9 in the frontend.",
                                "The sprint went okay, and we bumped TypeScript to 5.4 while we were at it."),
         "5.4", "4.9"),
    Case("call me instead", ("Call me Chris.", "Please call me Topher instead, everyone does."), "Topher", "Chris"),
    Case("married surname", ("My last name is Smith.", "I got married, so my last name is Johnson now."), "Johnson",
         "Smith"),
    Case("embedded move", ("I live in Glasgow.",
                           "Thanks for the help yesterday! By the way, I moved to Edinburgh over the weekend, "
                           "so the commute is much shorter."), "Edinburgh", "Glasgow"),
    Case("prefer late", ("I prefer working in the morning.",
                         "Honestly I prefer working late at night now, mornings don't suit me."), "late at night",
         "in the morning"),
    Case("coffee with milk", ("I like my coffee black.", "I take my coffee with milk these days."), "with milk",
         "black"),
    Case("forget my age", ("I'm Tom, I'm 34 and I live in Bristol.", "Please forget my age."), "Bristol", "34"),
    Case("forget sister", ("I work at Nike and I have a sister called Jane.", "You can forget the bit about my sister."),
         "Nike", "Jane"),
    Case("conference then home", ("I'm in Tokyo for a conference this week.", "I'm home in Osaka again."), "Osaka",
         "Tokyo"),
    Case("part-time until", ("Until the end of the month I'm working part-time.", "I'm back to working full-time now."),
         "full-time", "part-time"),
    Case("retro moved", ("Our retro is on Wednesday afternoons.", "We moved the retro to Friday mornings."), "Friday",
         "Wednesday"),
    Case("went freelance", ("I'm a graphic designer at an agency.", "I went freelance, I'm self-employed now."),
         "self-employed", "agency"),
    Case("email delivery", ("We send emails through SendGrid.", "We switched email delivery over to Postmark."),
         "Postmark", "SendGrid"),
    Case("is now, not", ("We monitor errors with Sentry.", "Error monitoring is Rollbar now, not Sentry."), "Rollbar",
         "Sentry"),
    Case("shell", ("My shell is bash.", "I use zsh as my shell these days."), "zsh", "bash"),
    Case("dev machine", ("I develop on Windows.", "I do all my development on a Mac now."), "Mac", "Windows"),
    Case("postdoc since", ("I'm a PhD student.", "I defended my thesis in May, and since June I'm a postdoc."),
         "postdoc", "PhD student"),
    Case("we're now in", ("We live in a flat in Manchester.", "We bought a house and we're now in Sheffield."),
         "Sheffield", "Manchester"),
    Case("been on since", ("The site runs on WordPress 5.", "The site has been on WordPress 6 since the upgrade."),
         "WordPress 6", "WordPress 5"),
    Case("frontend hosting", ("Our frontend is hosted on Netlify.", "We moved the frontend hosting to Vercel."),
         "Vercel", "Netlify"),
    Case("zh moved house", ("我住在苏州。", "我们上周搬家了，现在住在无锡。"), "无锡", "苏州"),
    Case("zh resigned", ("我在京东上班。", "我辞职了，现在在小米上班。"), "小米", "京东"),
    Case("zh not X but Y name", ("你可以叫我小张。", "不是小张，是张伟，请叫我张伟。"), "张伟", "小张"),
    Case("zh migrated vue", ("我们的项目用 Vue 2。", "我们已经迁移到 Vue 3 了。"), "Vue 3", "Vue 2"),
    Case("zh cloud", ("我们的服务部署在阿里云上。", "现在我们的服务都部署在腾讯云上。"), "腾讯云", "阿里云"),
    Case("zh no more yarn", ("我们用 yarn 管理依赖。", "我们不用 yarn 了，改成 pnpm。"), "pnpm", "yarn"),
    Case("zh breakfast", ("我每天早上喝牛奶。", "我现在早上改喝豆浆了。"), "豆浆", "牛奶"),
    Case("zh promoted", ("我是初级工程师。", "我今年升职成了高级工程师。"), "高级工程师", "初级工程师"),
    Case("zh pet", ("我养了一只猫。", "我把猫送人了，现在养了一只狗。"), "狗", "猫"),
    Case("zh editor", ("我用 Emacs 写代码。", "我现在用 Cursor 写代码。"), "Cursor", "Emacs"),
    Case("zh forget work", ("我叫李雷，我在微软工作。", "请忘掉我在哪里工作。"), "李雷", "微软"),
    Case("zh trip over", ("这周我在上海出差。", "我出差回来了，现在在北京。"), "北京", "上海"),
    Case("zh theme", ("我喜欢用深色主题。", "我现在更喜欢浅色主题。"), "浅色", "深色"),
    Case("zh meeting day", ("我们每周一开例会。", "例会改到每周三了。"), "周三", "周一"),
]

#: The issue's target; the test fails below FLOOR, the rate measured on this set (rounded down).
TARGET = 0.9
FLOOR = 0.98  # 20/51 = 39% with the code before round three (the held-out figure); 50/51 after round four (read)


def test_third_held_out_corrections_end_with_only_the_new_value_active(evlog_home, capsys):
    assert len(HELD_OUT_3) >= 40
    failures = failures_of(HELD_OUT_3, evlog_home)
    ok = len(HELD_OUT_3) - len(failures)
    with capsys.disabled():
        print(f"\nthird held-out corrections: {ok}/{len(HELD_OUT_3)} = {ok / len(HELD_OUT_3):.0%} "
              f"(target {TARGET:.0%})")
        for f in failures:
            print("  FAIL", f)
    assert ok / len(HELD_OUT_3) >= FLOOR, "\n".join(failures)
