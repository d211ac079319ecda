"""A fourth held-out set of corrections (issue 21, item 2), written after the code of the third round was final.

No rule was changed after these cases were written, and none was shaped by them: their rate is the held-out
figure of the third round (``test_corrections_heldout3.py`` was read while fixing): 12/22 = 55%. Round four then
read its failures by class, so its 20/22 after that is no longer held out (``test_corrections_heldout5.py`` is).
EN and simplified Chinese,
moves, jobs, names, versions, tool and service switches, preference reversals, a partial forget, status, pets,
habits. Run with ``pytest tests/processors/test_corrections_heldout4.py -q -s`` to see the rate printed.
"""

from __future__ import annotations

from tests.memory_pipeline import Case, failures_of

HELD_OUT_4 = [
    Case("packed up and left", ("I live in Nairobi.", "We packed up and left Nairobi; home is Kigali now."), "Kigali",
         "Nairobi"),
    Case("handed in my notice", ("I work for Airbus.", "I handed in my notice at Airbus and now work for Rolls-Royce."),
         "Rolls-Royce", "Airbus"),
    Case("nickname to full name", ("Please call me Dan.", "Dan was a nickname; I'd prefer Daniel from now on."),
         "Daniel", "Dan"),
    Case("finished the upgrade", ("We're on Angular 14.", "We finished the upgrade, the app is on Angular 17 now."),
         "Angular 17", "Angular 14"),
    Case("migrated storage", ("We store files in S3.", "We've migrated file storage to Cloudflare R2."),
         "Cloudflare R2", "S3"),
    Case("units reversal", ("I prefer Celsius over Fahrenheit.",
                            "Living here changed me, I prefer Fahrenheit over Celsius now."), "Fahrenheit over Celsius",
         "Celsius over Fahrenheit"),
    Case("eating fish again", ("I'm a vegetarian.", "I started eating fish again, so I'm not vegetarian anymore."),
         "fish", "vegetarian"),
    Case("editor is dead", ("My editor is Atom.", "Atom is dead, so my editor is VS Codium these days."), "VS Codium",
         "Atom"),
    Case("version control", ("We use Mercurial for version control.", "We finally moved version control to Git."),
         "Git", "Mercurial"),
    Case("commute", ("I commute by bus.", "I bought a bike, so I commute by bike now."), "by bike", "by bus"),
    Case("rotation", ("Our on-call rotation is weekly.", "Our on-call rotation is biweekly as of this month."),
         "biweekly", "weekly"),
    Case("divorced", ("I'm married.", "I got divorced last year."), "divorced", "married"),
    Case("one dog now", ("I have two dogs.", "Sadly one of my dogs died, so I have one dog now."), "one dog",
         "two dogs"),
    Case("cluster moved", ("The cluster runs Elasticsearch 7.", "The cluster was moved to OpenSearch."), "OpenSearch",
         "Elasticsearch"),
    Case("forget about", ("I'm Priya and I work at a bakery.", "Forget about the bakery."), "Priya", "bakery"),
    Case("deploy day", ("We deploy every Friday.", "We deploy on Wednesdays now, never on Fridays."), "Wednesdays",
         "every Friday"),
    Case("zh whole family moved", ("我住在天津。", "我们全家已经搬去大连了。"), "大连", "天津"),
    Case("zh changed jobs same role", ("我在拼多多做运营。", "我换工作了，现在在快手做运营。"), "快手", "拼多多"),
    Case("zh backend", ("我们的后端用 Flask。", "我们的后端改成 FastAPI 了。"), "FastAPI", "Flask"),
    Case("zh reading", ("我喜欢看科幻小说。", "我最近更喜欢看历史书了。"), "历史书", "科幻小说"),
    Case("zh stop calling me", ("请叫我小刘。", "别叫我小刘了，叫我刘洋。"), "刘洋", "小刘"),
    Case("zh code hosting", ("我们用 GitHub 托管代码。", "代码现在托管在 GitLab 上。"), "GitLab", "GitHub"),
]

#: The issue's target; the test fails below FLOOR, the rate measured on this set (rounded down).
TARGET = 0.9
FLOOR = 1.0  # 22/22 after corr12 (round 12, read); 21/22 after the "keep" round; 12/22 = 55% with the code of the third round (the held-out figure); 20/22 after round four (read)


def test_fourth_held_out_corrections_end_with_only_the_new_value_active(evlog_home, capsys):
    assert len(HELD_OUT_4) >= 15
    failures = failures_of(HELD_OUT_4, evlog_home)
    ok = len(HELD_OUT_4) - len(failures)
    with capsys.disabled():
        print(f"\nfourth held-out corrections: {ok}/{len(HELD_OUT_4)} = {ok / len(HELD_OUT_4):.0%} "
              f"(target {TARGET:.0%})")
        for f in failures:
            print("  FAIL", f)
    assert ok / len(HELD_OUT_4) >= FLOOR, "\n".join(failures)
