"""A session's preview: the fast paths of ``_preview`` give exactly the plain folding of the message's start."""

from __future__ import annotations

import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from projections.sessions import PREVIEW_CHARS, _preview


def folded(content: str) -> str:
    """The definition: the first ``PREVIEW_CHARS * 4`` characters, whitespace folded, cut to ``PREVIEW_CHARS``."""
    return " ".join(content[: PREVIEW_CHARS * 4].split())[:PREVIEW_CHARS]


def test_no_printable_whitespace_but_the_space() -> None:
    """The first fast path trusts ``isprintable``: no other character ``split`` cuts at is printable."""
    odd = [c for c in map(chr, range(sys.maxunicode + 1)) if c.isprintable() and c.isspace() and c != " "]
    assert odd == []


_WORDS = st.text(alphabet=st.sampled_from("ab é🐈 \n\t\u00a0\u3000\x1f"), max_size=700)


@settings(max_examples=1000, deadline=None)
@given(_WORDS)
def test_preview_is_the_folded_start(content: str) -> None:
    assert _preview(content) == folded(content)


@given(st.text(max_size=600))
def test_preview_of_any_text(content: str) -> None:
    assert _preview(content) == folded(content)


def test_edges() -> None:
    """Around the cut: a space just before, at and after it, trailing and leading spaces, runs, newlines."""
    word = "x" * (PREVIEW_CHARS - 1)
    cases = ["", " ", "a", " a", "a ", "a  b", "a\nb", word + " ", word + " y", word + "  y", word + " \n",
             word + "y ", word + "yy", " " + word + "yy", "\n" * 500 + "a b", "ab " * 60 + "   " + "c" * 200,
             ("w " * 70) + "\n", "a" * 500, " ".join(["word"] * 200)]
    for n in range(PREVIEW_CHARS - 3, PREVIEW_CHARS + 45):
        cases += ["a" * n, "a" * n + " ", "a" * n + "  b", " " * n + "tail words here", "a b" * (n // 3) + "\n"]
    for content in cases:
        assert _preview(content) == folded(content), repr(content)
