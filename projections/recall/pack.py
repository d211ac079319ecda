"""Packing: recall's hits within a token budget, trimmed so that the evidence survives the cut.

A hook or an agent that gives recall a budget (``evlog recall --budget TOKENS``,
``pack(hits, tokens, query)``) should get as many of the best turns as fit, each cut down
to the part that holds what the question asked about, rather than the first turns whole
and nothing after them. ``pack`` works in two passes over the hits, best first:

1. every hit gets an **excerpt** of at most ``excerpt_chars`` characters: the window of
   its text that holds the most distinct question words (whole words, ``…`` where it was
   cut), taken in rank order while the budget lasts;
2. what is left of the budget grows the kept excerpts, best hit first, up to their whole
   text (a window grows around the evidence, on both sides).

Tokens are estimated as characters / 4 (``CHARS_PER_TOKEN``), plus ``OVERHEAD_TOKENS``
per hit for its source line; the estimate errs on the generous side for English. The
returned hits are the input ``Hit`` objects with ``text`` replaced by the excerpt; every
other field (source, score, snippet) is unchanged, and their order is the input order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from eventlog.errors import ConfigError
from projections.recall.query import split_question
from projections.recall.search import Hit

#: Characters per token assumed by the budget (English prose is about 4).
CHARS_PER_TOKEN = 4
#: Tokens a hit's source line (session, time, role) costs besides its text.
OVERHEAD_TOKENS = 16
#: First-pass excerpt size in characters.
EXCERPT_CHARS = 320

_WORD = re.compile(r"[^\W_]+")


def _evidence_spans(text: str, words: list[str]) -> list[tuple[int, int, str]]:
    """Where the question's words (or words starting with their first letters: a cheap stem) occur."""
    keys = {w: w[: max(4, len(w) - 2)] for w in words}
    out = []
    for m in _WORD.finditer(text):
        low = m.group().lower()
        for w, k in keys.items():
            if low == w or (len(k) >= 4 and low.startswith(k)):
                out.append((m.start(), m.end(), w))
                break
    return out


def _window(text: str, spans: list[tuple[int, int, str]], width: int) -> tuple[int, int]:
    """The ``width``-character window with the most distinct evidence words, centred on them."""
    if len(text) <= width:
        return 0, len(text)
    if not spans:
        return 0, width
    best, best_i = -1, 0
    for i, (s, _e, _w) in enumerate(spans):
        distinct = {w for s2, _e2, w in spans[i:] if s2 < s + width}
        if len(distinct) > best:
            best, best_i = len(distinct), i
    first = spans[best_i][0]
    last = max(e for s2, e, _w in spans[best_i:] if s2 < first + width)
    mid = (first + min(last, first + width)) // 2
    start = max(0, min(mid - width // 2, len(text) - width))
    return start, start + width


def _cut(text: str, start: int, end: int) -> str:
    """``text[start:end]`` at word boundaries, with ``…`` where text was cut."""
    if start > 0:
        sp = text.find(" ", start, min(end, start + 20))
        start = sp + 1 if sp >= 0 else start
    if end < len(text):
        sp = text.rfind(" ", max(start, end - 20), end)
        end = sp if sp > start else end
    return ("…" if start > 0 else "") + text[start:end].strip() + ("…" if end < len(text) else "")


def _cost(chars: int) -> int:
    return OVERHEAD_TOKENS + -(-chars // CHARS_PER_TOKEN)


def pack(hits: Sequence[Hit], tokens: int, query: str = "", *, excerpt_chars: int = EXCERPT_CHARS) -> list[Hit]:
    """The hits that fit in ``tokens``, best first, each trimmed around its evidence (see the module docstring)."""
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1:
        raise ConfigError(f"the budget must be a whole number of tokens from 1, not {tokens!r}")
    words = list(dict.fromkeys(split_question(query).words)) if query.strip() else []
    texts = [h.text or h.snippet for h in hits]
    spans = [_evidence_spans(t, words) for t in texts]
    widths: list[int] = []
    left = tokens
    for t in texts:  # pass 1: an excerpt of every hit, best first, while the budget lasts
        w = min(len(t), excerpt_chars)
        if _cost(w) > left:
            w = (left - OVERHEAD_TOKENS) * CHARS_PER_TOKEN
            if w < min(len(t), 80):
                break
        widths.append(w)
        left -= _cost(w)
    for i, t in enumerate(texts[: len(widths)]):  # pass 2: grow the kept excerpts, best first
        extra = min(len(t) - widths[i], left * CHARS_PER_TOKEN)
        if extra > 0:
            widths[i] += extra
            left -= -(-extra // CHARS_PER_TOKEN)
    out = []
    for h, t, sp, w in zip(hits, texts, spans, widths, strict=False):
        start, end = _window(t, sp, w)
        out.append(msgspec.structs.replace(h, text=t if (start, end) == (0, len(t)) else _cut(t, start, end)))
    return out


__all__ = ["CHARS_PER_TOKEN", "EXCERPT_CHARS", "OVERHEAD_TOKENS", "pack"]
