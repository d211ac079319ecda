"""Held-out corrections (issue 21, item 2): written with the tuning cases, before any tuning, never tuned on.

Its rate is reported on its own: the rules were not shaped by these cases. Run it with
``pytest tests/processors/test_corrections_heldout.py -q -s`` to see the rate printed.
"""

from __future__ import annotations

from tests.memory_pipeline import Case, failures_of

HELD_OUT = [
    Case("moved", ("I live in Madrid.", "I've moved to Valencia."), "Valencia", "Madrid"),
    Case("quit and joined", ("I work at Spotify.", "I quit Spotify last month and joined Netflix."), "Netflix",
         "Spotify"),
    Case("from now on call me", ("Call me Bob.", "From now on, call me Robert."), "Robert", "Bob"),
    Case("upgraded to version", ("We use Redis 6 as the cache.", "We upgraded Redis to version 7."), "7", "Redis 6"),
    Case("ci migrated", ("We deploy with Jenkins.", "We migrated our CI from Jenkins to GitHub Actions."),
         "GitHub Actions", "Jenkins"),
    Case("prefer for scripting", ("I prefer Python for scripting.", "I prefer Go for scripting these days."), "Go",
         "Python"),
    Case("job now", ("I'm a teacher at a primary school.", "I'm a school principal now."), "principal", "teacher"),
    Case("favourite band", ("My favourite band is Radiohead.", "My favourite band is Muse now."), "Muse",
         "Radiohead"),
    Case("browser", ("I use Firefox as my browser.", "I switched to Chrome as my browser."), "Chrome", "Firefox"),
    Case("any more; in now", ("I'm based in Dublin.", "I don't live in Dublin any more; I'm in Cork now."), "Cork",
         "Dublin"),
    Case("moved from to", ("We use Yarn to manage dependencies.", "We moved from Yarn to Bun."), "Bun", "Yarn"),
    Case("partial forget job", ("My name is Jordan and I work as an accountant.",
                                "Forget that I work as an accountant."), "Jordan", "accountant"),
    Case("meeting day", ("I have a standing meeting with Lee on Mondays.", "My meeting with Lee is on Tuesdays now."),
         "Tuesdays", "Mondays"),
    Case("anymore, now", ("I drink oat milk in my coffee.", "I don't use oat milk anymore, I use almond milk now."),
         "almond milk", "oat milk"),
    Case("runtime upgrade", ("The API runs on Node 18.", "We upgraded the API to Node 20."), "Node 20", "Node 18"),
    Case("left; at now", ("I'm working at Deloitte.", "I left Deloitte; I'm at PwC now."), "PwC", "Deloitte"),
    Case("piano to guitar", ("I'm learning the piano.", "I stopped piano lessons and started learning the guitar."),
         "guitar", "piano"),
    Case("gym", ("I usually work out at Gold's Gym.",
                 "I cancelled my Gold's Gym membership and go to a climbing gym now."), "climbing gym", "Gold's"),
    Case("zh now live", ("我住在广州。", "我现在住在深圳。"), "深圳", "广州"),
    Case("zh changed jobs", ("我在腾讯上班。", "我跳槽到了华为。"), "华为", "腾讯"),
    Case("zh ci", ("我们用 Jenkins 做持续集成。", "我们把持续集成迁移到了 GitLab CI。"), "GitLab CI", "Jenkins"),
    Case("zh name actually", ("叫我阿强。", "其实我叫志强，以后叫我志强。"), "志强", "阿强"),
]

#: The issue's target (90%) is printed beside the rate; the test fails below FLOOR, the rate measured when the slot
#: model was first committed (16/22), so a regression shows while the held-out cases stay untuned.
TARGET = 0.9
FLOOR = 0.95  # 21/22 after the third round of tuning (16/22 when the slot model was first committed)


def test_held_out_corrections_end_with_only_the_new_value_active(evlog_home, capsys):
    failures = failures_of(HELD_OUT, evlog_home)
    rate = 1 - len(failures) / len(HELD_OUT)
    with capsys.disabled():
        print(f"\nheld-out corrections: {len(HELD_OUT) - len(failures)}/{len(HELD_OUT)} = {rate:.0%} "
              f"(target {TARGET:.0%})")
    assert rate >= FLOOR, "\n".join(failures)
