"""The MEMORY.md budget (processors/extract/budget.py): within lines and bytes, pinned stay, least valuable leave."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from processors.extract import budget
from processors.extract.model import EVENTS, PREFERENCES, PROFILE, PROJECT, SECTIONS, ExistingFact


def f(i: int, text: str = "", *, section: str = PROFILE, when: str = "", pinned: bool = False,
      state: str = "active") -> ExistingFact:
    return ExistingFact(fact_id=f"f{i:03d}", text=text or f"Fact number {i} is here.", subject="user", scope="global",
                        section=section, when=when or f"2024-01-{1 + i % 28:02d}T00:00:{i % 60:02d}.000Z",
                        pinned=pinned, state=state)


def test_render_format_and_size():
    facts = [f(1, "A.", section=EVENTS), f(2, "B.", section=PROFILE), f(3, "C.", section="Odd"), f(4, "D.", section="")]
    text = budget.render(facts, header="# Memory\n\n")
    assert text == ("# Memory\n\n## User Profile\n- B.\n\n## Events\n- A.\n\n## Notes\n- D.\n\n## Odd\n- C.\n")
    assert budget.size(facts, header="# Memory\n\n") == (text.count("\n"), len(text.encode()))
    assert budget.size([]) == (0, 0)


def test_everything_stays_when_it_fits():
    facts = [f(i) for i in range(10)]
    assert budget.apply_budget(facts) == (facts, [])


def test_the_oldest_leave_first_when_nothing_is_cited():
    facts = [f(i, when=f"2024-01-{10 + i:02d}T00:00:00.000Z") for i in range(10)]
    kept, archived = budget.apply_budget(facts, max_lines=6)  # heading + 5 facts
    assert [x.fact_id for x in archived] == [x.fact_id for x in facts[:5]]
    assert kept == facts[5:]


def test_cited_and_recalled_facts_stay_longer_and_pinned_never_leave():
    facts = [f(i, when=f"2024-01-{10 + i:02d}T00:00:00.000Z", pinned=(i == 0)) for i in range(6)]
    kept, archived = budget.apply_budget(facts, max_lines=4, cited={"f001": 2}, recalled={"f002": 1})
    assert [x.fact_id for x in kept] == ["f000", "f001", "f002"]
    assert [x.fact_id for x in archived] == ["f003", "f004", "f005"]


def test_pinned_facts_stay_even_over_budget():
    facts = [f(i, pinned=True) for i in range(5)] + [f(9)]
    kept, archived = budget.apply_budget(facts, max_lines=2)
    assert kept == facts[:5] and archived == [facts[5]]
    assert not budget.fits(kept, max_lines=2)


def test_inactive_facts_are_in_neither_list():
    facts = [f(1), f(2, state="superseded"), f(3, state="forgotten"), f(4, state="archived")]
    assert budget.apply_budget(facts) == ([facts[0]], [])


def test_bytes_count_utf8_and_headings():
    facts = [f(i, "事" * 100) for i in range(10)]  # 300 bytes a character run, 305 a line
    kept, _ = budget.apply_budget(facts, max_bytes=1000)
    assert budget.size(kept)[1] <= 1000 and len(kept) == 3


def test_a_custom_line_renderer_is_counted():
    facts = [f(i) for i in range(10)]
    wide = budget.apply_budget(facts, max_bytes=300, line=lambda x: f"- [{x.when[:10]}] {x.text}")[0]
    plain = budget.apply_budget(facts, max_bytes=300)[0]
    assert len(wide) < len(plain)


def test_file_key():
    assert budget.file_key(f(1)) == ("global", "")
    assert budget.file_key(msgspec.structs.replace(f(1), scope="project", project="/p")) == ("project", "/p")


_FACT = st.builds(
    lambda i, text, section, day, pinned, state: ExistingFact(
        fact_id=f"f{i}", text=text, subject="user", scope="global", section=section,
        when=f"2024-02-{day:02d}T00:00:00.000Z", pinned=pinned, state=state),
    st.integers(0, 10_000), st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=120),
    st.sampled_from([*SECTIONS, "", "Other"]), st.integers(1, 28),
    st.sampled_from([False, False, False, True]),
    st.sampled_from(["active", "active", "active", "superseded", "archived"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_FACT, max_size=60, unique_by=lambda x: x.fact_id), st.integers(0, 80), st.integers(0, 6000),
       st.dictionaries(st.sampled_from([f"f{i}" for i in range(50)]), st.integers(0, 5)), st.text(max_size=20))
def test_budget_properties(facts, max_lines, max_bytes, cited, header):
    kept, archived = budget.apply_budget(facts, max_lines=max_lines, max_bytes=max_bytes, cited=cited, header=header)
    active = [x for x in facts if x.state == "active"]
    # a partition of the active facts, in their order
    assert sorted(x.fact_id for x in kept + archived) == sorted(x.fact_id for x in active)
    assert kept == [x for x in active if x in kept] and archived == [x for x in active if x in archived]
    # pinned never leave
    assert not any(x.pinned for x in archived)
    # within budget, unless the pinned facts alone are over it
    pinned_only = [x for x in active if x.pinned]
    if budget.fits(pinned_only, max_lines=max_lines, max_bytes=max_bytes, header=header):
        assert budget.fits(kept, max_lines=max_lines, max_bytes=max_bytes, header=header)
    else:
        assert all(x.pinned for x in kept)
    # nothing leaves without need: putting back the last one to leave would not fit
    if archived:
        last = max(archived, key=lambda x: budget.leave_order(x, cited, {}))
        assert not budget.fits([*kept, last], max_lines=max_lines, max_bytes=max_bytes, header=header)
    # the least valuable leave first
    if archived and kept:
        worst_kept = min((x for x in kept if not x.pinned), key=lambda x: budget.leave_order(x, cited, {}),
                         default=None)
        if worst_kept is not None:
            assert max(budget.leave_order(x, cited, {}) for x in archived) <= budget.leave_order(worst_kept, cited, {})
    # deterministic, and the meter agrees with the rendered text
    assert budget.apply_budget(list(facts), max_lines=max_lines, max_bytes=max_bytes, cited=dict(cited),
                               header=header) == (kept, archived)
    text = budget.render(kept, header=header)
    assert budget.size(kept, header=header) == (text.count("\n") + (0 if not text or text.endswith("\n") else 1),
                                                len(text.encode()))


def test_sections_are_the_fixed_small_set():
    assert SECTIONS == (PROFILE, PREFERENCES, EVENTS, PROJECT)
