"""A fifth held-out set of corrections (issue 21, item 2), written after the code of the fourth round was final.

``test_corrections_heldout4.py`` was read while fixing (round four), so it no longer measures what the code does on
new text; these cases were written afterwards, measured once, and no rule was changed for them: their rate is the
held-out figure of round four's code: 14/21 = 67%. Round five then read its failures by class, so its 20/21 after
that is no longer held out (``test_corrections_heldout6.py`` is). EN and simplified Chinese. Run with
``pytest tests/processors/test_corrections_heldout5.py -q -s`` to see the rate printed.
"""

from __future__ import annotations

from tests.memory_pipeline import Case, failures_of

HELD_OUT_5 = [
    Case("relocated from to", ("I'm based in Zurich.", "Quick update: I relocated from Zurich to Geneva in August."),
         "Geneva", "Zurich"),
    Case("retrained", ("I work at a hospital as a nurse.", "I've retrained and I'm now working as a paramedic."),
         "paramedic", "nurse"),
    Case("go by now, not", ("You can call me Jim.", "I go by James now, not Jim."), "James", "Jim"),
    Case("api upgraded", ("Our API runs on PHP 7.4.", "Our API has been upgraded to PHP 8.2."), "PHP 8.2", "PHP 7.4"),
    Case("replaced for infra", ("We use Terraform for infrastructure.",
                                "We replaced Terraform with Pulumi for infrastructure last quarter."), "Pulumi",
         "Terraform"),
    Case("lately prefer", ("I prefer tea in the afternoon.", "Lately I prefer coffee in the afternoon."),
         "coffee in the afternoon", "tea in the afternoon"),
    Case("changed dentists", ("My dentist is Dr. Patel.", "I changed dentists; my dentist is Dr. Okafor now."), "Okafor",
         "Patel"),
    Case("dating then married", ("I'm dating Sofia.", "Sofia and I got married in June."), "married", "dating"),
    Case("secrets now, not", ("We keep secrets in Vault.", "Secrets are kept in AWS Secrets Manager now, not Vault."),
         "AWS Secrets Manager", "Vault"),
    Case("tennis day", ("I play tennis on Saturdays.", "I play tennis on Sundays these days."), "Sundays", "Saturdays"),
    Case("forget the parrot", ("My name is Omar and I have a parrot named Kiwi.", "Please forget about my parrot."),
         "Omar", "Kiwi"),
    Case("passwords moved over", ("I use Bitwarden for passwords.", "I moved my passwords over to 1Password."),
         "1Password", "Bitwarden"),
    Case("week away then back", ("This week I'm working from Madrid.", "I'm back in Barcelona now."), "Barcelona",
         "Madrid"),
    Case("process from to", ("Our team uses Scrum.", "Our team moved from Scrum to Kanban."), "Kanban", "Scrum"),
    Case("ditched and now", ("We bundle with Webpack.", "We ditched Webpack and bundle with Vite now."), "Vite",
         "Webpack"),
    Case("zh moved back home", ("我住在厦门。", "我搬回老家福州了。"), "福州", "厦门"),
    Case("zh same job new firm", ("我在一家银行当会计。", "我现在在一家保险公司当会计。"), "保险公司", "银行"),
    Case("zh database from to", ("我们的数据库是 Oracle。", "我们把数据库从 Oracle 迁移到了 TiDB。"), "TiDB", "Oracle"),
    Case("zh weekend", ("我周末喜欢爬山。", "我现在周末更喜欢去游泳。"), "游泳", "爬山"),
    Case("zh chat tool", ("我们用钉钉沟通。", "我们现在改用飞书沟通了。"), "飞书", "钉钉"),
    Case("zh pet died", ("我养了一只狗，叫旺财。", "旺财去年走了，现在我养了一只猫。"), "猫", "旺财"),
]

#: The issue's target; the test fails below FLOOR, the rate measured on this set (rounded down).
TARGET = 0.9
FLOOR = 1.0  # 21/21 after the "keep" round; 14/21 = 67% with the code of round four (the held-out figure); 20/21 after round five (read)


def test_fifth_held_out_corrections_end_with_only_the_new_value_active(evlog_home, capsys):
    assert len(HELD_OUT_5) >= 15
    failures = failures_of(HELD_OUT_5, evlog_home)
    ok = len(HELD_OUT_5) - len(failures)
    with capsys.disabled():
        print(f"\nfifth held-out corrections: {ok}/{len(HELD_OUT_5)} = {ok / len(HELD_OUT_5):.0%} "
              f"(target {TARGET:.0%})")
        for f in failures:
            print("  FAIL", f)
    assert ok / len(HELD_OUT_5) >= FLOOR, "\n".join(failures)
