"""From scored turns to a ranking: priors, evidence per session, and diversity across sessions.

``search.py`` scores each candidate on its own (BM25F with its neighbours as context).
This module turns those scores into the order a reader needs:

1. **Echoes step back.** An assistant reply whose matched terms are mostly (by idf,
   ``Ranking.echo_share``) ones its user turn already matched (it repeats the user's
   words back) is kept just below that user turn (``Ranking.echo`` times its score):
   the evidence is what the user said. A question about the user in the first person
   ("I", "my", "me", and not "you") asks what the user said: other roles' turns are
   multiplied by ``Ranking.user_first``.
   **A reply to the same question.** A question that says what it asks for with an
   interrogative ("how long", "where", "which": ``asked_for``, a closed class; bare "what"
   and "how" say little) prefers the turns that reply to another speaker's question asking
   the same ("How long have you had them?" -> "I've had them for 3 years"): their scores
   are multiplied by ``1 + Ranking.same_ask``.
   **Context never outranks its source.** A turn scores partly through its neighbours'
   words (the context field); when a neighbour within the window matched more by its own
   text, the turn stays at most ``Ranking.context_cap`` times that neighbour
   (``cap_context``), unless the two together are shorter than
   ``Ranking.context_cap_chars`` (short chat lines need each other to be understood).
2. **Time priors.** A question that names a time ("two weeks ago", see ``when.py``)
   multiplies each turn's score by ``1 + Ranking.when * bump`` (1 at the window's
   centre, fading with distance), one that writes a date out ("on 25 May, 2022",
   "in July 2022") by ``1 + Ranking.dates * bump``; a current-state question ("currently", "still",
   "latest") by ``1 + Ranking.recency * r``, where ``r`` runs from 0 for the oldest
   scored turn to 1 for the newest. Both prefer; neither filters.
3. **Evidence per session.** A session's score is its best turn's plus
   ``Ranking.aggregate`` times the sum of its next best turns (up to
   ``Ranking.aggregate_turns``): a session that answers with several turns outranks one
   that matches once.
4. **Diversity.** ``groups`` orders sessions by that score, each with its turns best
   first: that is the session ranking (``recall_sessions``, ``evlog recall --group
   session``), in which a session's second turn never outranks another session's best.
   The message ranking (``order``) discounts a session's k-th best turn by
   ``Ranking.diversity ** (k-1)``, so one session's neighbouring turns do not fill the
   first places unless they score far above the rest (0: strictly round by round). A
   history entry or a fact is a group of its own.

Each message counts once (a message id appended twice is one hit: its best row).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from eventlog.timeutil import parse_time
from projections.recall.when import TimeCue, bump

MESSAGE = 0


class Doc(Protocol):
    """What ranking reads of a scored row (``search._Doc``)."""

    id: int
    kind: int
    sid: int
    pos: int
    mid: str
    role: str
    time: str
    nchars: int
    text: str
    speaker: str | None
    tf: dict[str, float]


class Params(Protocol):
    """The ``Ranking`` fields this module uses (read-only)."""

    @property
    def echo(self) -> float: ...
    @property
    def echo_share(self) -> float: ...
    @property
    def when(self) -> float: ...
    @property
    def dates(self) -> float: ...
    @property
    def recency(self) -> float: ...
    @property
    def aggregate(self) -> float: ...
    @property
    def aggregate_turns(self) -> int: ...
    @property
    def diversity(self) -> float: ...
    @property
    def user_first(self) -> float: ...
    @property
    def context_cap(self) -> float: ...
    @property
    def window(self) -> int: ...
    @property
    def context_cap_chars(self) -> int: ...
    @property
    def same_ask(self) -> float: ...


@dataclass
class Group:
    """A session (or a lone history entry or fact) and its turns, best first."""

    key: tuple[Any, ...]
    members: list[tuple[float, int]] = field(default_factory=list)  # (score, doc id), best first
    score: float = 0.0


def _epoch(value: str, cache: dict[str, float]) -> float:
    got = cache.get(value)
    if got is None:
        dt = parse_time(value)
        got = dt.timestamp() if dt is not None else 0.0
        cache[value] = got
    return got


def adjust(pool: Mapping[int, Doc], scores: dict[int, float], r: Params, *, cues: list[TimeCue],
           current: bool, echo: bool = True, idf: Mapping[str, float] | None = None,
           first_person: bool = False, wanted: str = "") -> dict[int, float]:
    """Scores after the echo rule (unless not ``echo``), the user's-words prior, the reply prior and the time priors
    (steps 1-2)."""
    out = dict(scores)
    if wanted and r.same_ask > 0:
        _prefer_replies(pool, out, wanted, 1 + r.same_ask)
    if first_person and r.user_first < 1.0:
        for i in out:
            d = pool[i]
            if d.kind == MESSAGE and d.role != "user":
                out[i] *= r.user_first
    if echo and r.echo < 1.0:
        _step_back_echoes(pool, scores, out, r, idf or {})
    cache: dict[str, float] = {}
    relative = [c for c in cues if not c.calendar]
    written = [c for c in cues if c.calendar]
    if (relative and r.when > 0) or (written and r.dates > 0):
        for i in out:
            t = parse_time(pool[i].time)
            if t is not None:
                out[i] *= (1 + r.when * bump(t, relative)) * (1 + r.dates * bump(t, written))
    if current and r.recency > 0 and out:
        times = {i: _epoch(pool[i].time, cache) for i in out}
        lo, hi = min(times.values()), max(times.values())
        if hi > lo:
            for i in out:
                out[i] *= 1 + r.recency * (times[i] - lo) / (hi - lo)
    return out


def _step_back_echoes(pool: Mapping[int, Doc], scores: Mapping[int, float], out: dict[int, float], r: Params,
                      idf: Mapping[str, float]) -> None:
    """Keep (in place) each assistant echo of its user turn at most ``Ranking.echo`` times that turn's score."""
    by_pos = {(d.sid, d.pos): d for d in pool.values() if d.kind == MESSAGE}
    for i, s in scores.items():
        d = pool[i]
        if d.kind != MESSAGE or d.role != "assistant":
            continue
        u = by_pos.get((d.sid, d.pos - 1))
        if u is None or u.role != "user" or u.id not in scores or not d.tf:
            continue
        if _echoes(d.tf, u.tf, idf, r.echo_share) and s > scores[u.id] * r.echo:
            out[i] = scores[u.id] * r.echo


def _prefer_replies(pool: Mapping[int, Doc], out: dict[int, float], wanted: str, factor: float) -> None:
    """Multiply (in place) the scores of the turns that reply to a question asking for ``wanted`` by ``factor``."""
    at = {(d.sid, d.pos): d for d in pool.values() if d.kind == MESSAGE}
    for i in out:
        d = pool[i]
        before = at.get((d.sid, d.pos - 1)) if d.kind == MESSAGE else None
        if before is not None and asks_the_same(d, before, wanted):
            out[i] *= factor


def cap_context(pool: Mapping[int, Doc], scores: dict[int, float], owns: Mapping[int, float],
                r: Params) -> dict[int, float]:
    """A turn found through its neighbours never outranks the neighbour it got the words from.

    A turn's score holds its neighbours' text (the context field); when a turn longer than
    ``Ranking.context_chars`` (one that speaks for itself) has a neighbour within the window
    that matched more by its own text (``owns``), the turn is kept at most
    ``Ranking.context_cap`` times that neighbour's score: the evidence is the turn that says it.
    Turns are visited best own text first, so a cap is measured against a final score.
    """
    if r.context_cap >= 1.0:
        return scores
    out = dict(scores)
    by_pos = {(d.sid, d.pos): i for i, d in pool.items() if d.kind == MESSAGE and i in out}
    for i in sorted(out, key=lambda i: -owns.get(i, 0.0)):
        d = pool[i]
        if d.kind != MESSAGE:
            continue
        mine = owns.get(i, 0.0)
        for off in range(-r.window, r.window + 1):
            j = by_pos.get((d.sid, d.pos + off))
            if off == 0 or j is None or owns.get(j, 0.0) <= mine or \
                    pool[j].nchars + d.nchars <= r.context_cap_chars:
                continue
            out[i] = min(out[i], out[j] * r.context_cap)
    return out


_ASKS = re.compile(r"\?[\W_]*\Z")
#: Interrogatives that say what kind of answer a question wants (a closed class; bare "what"/"how" say little).
_WH = re.compile(r"\b(how (?:long|many|much|often|old|far|soon)|what (?:kind|type|sort)s?|when|where|who(?:m|se)?|why|"
                 r"which)\b", re.IGNORECASE)
_LAST_QUESTION = re.compile(r"[^.!?]*\?[\W_]*\Z")


def asked_for(question: str) -> str:
    """The first interrogative of ``question`` that says what it asks for ("how long", "where"), lower-cased; ""."""
    m = _WH.search(question)
    return re.sub(r"\s+", " ", m.group(1).lower()).rstrip("s") if m else ""


def answers(reply: Doc, before: Doc) -> bool:
    """True when ``before`` (the turn just before ``reply``) ends in a question and another speaker replies."""
    if "?" not in before.text or not _ASKS.search(before.text):
        return False
    return (reply.role, reply.speaker or "") != (before.role, before.speaker or "")


def asks_the_same(reply: Doc, before: Doc, wanted: str) -> bool:
    """True when ``reply`` answers a question of ``before`` that asks for ``wanted`` (``asked_for``)."""
    if not wanted or wanted not in before.text.lower() or not answers(reply, before):
        return False  # (the substring test only skips turns that cannot hold the interrogative)
    last = _LAST_QUESTION.search(before.text)
    return last is not None and any(asked_for(m.group(0)) == wanted for m in _WH.finditer(last.group(0)))


def _echoes(reply: Mapping[str, float], turn: Mapping[str, float], idf: Mapping[str, float], share: float) -> bool:
    """True when at least ``share`` of the reply's matched weight (idf) is in terms the turn before it matched."""
    total = sum(idf.get(t, 1.0) for t in reply)
    said = sum(idf.get(t, 1.0) for t in reply if t in turn)
    return total > 0 and said >= share * total


def groups(pool: Mapping[int, Doc], scores: Mapping[int, float], r: Params) -> list[Group]:
    """Scored rows collapsed per message and grouped per session, best group first (step 3)."""
    best: dict[tuple[Any, ...], tuple[float, int]] = {}
    for i, s in scores.items():
        d = pool[i]
        key = ("m", d.sid, d.mid) if d.kind == MESSAGE else ("d", d.id)
        old = best.get(key)
        if old is None or (s, i) > old:
            best[key] = (s, i)
    by_group: dict[tuple[Any, ...], Group] = defaultdict(lambda: Group(()))
    for key, (s, i) in best.items():
        gkey = ("s", key[1]) if key[0] == "m" else key
        g = by_group[gkey]
        g.key = gkey
        g.members.append((s, i))
    out = list(by_group.values())
    for g in out:
        g.members.sort(key=lambda x: (-x[0], -x[1]))
        rest = sum(s for s, _i in g.members[1 : 1 + r.aggregate_turns])
        g.score = g.members[0][0] + r.aggregate * rest
    out.sort(key=lambda g: (-g.score, -g.members[0][1]))
    return out


def order(pool: Mapping[int, Doc], scores: Mapping[int, float], r: Params) -> list[tuple[float, int]]:
    """The message ranking: (score, doc id), best first (step 4).

    ``Ranking.diversity`` < 1 discounts a session's k-th best turn by ``diversity ** (k-1)``
    before sorting (1: plain score order); 0 gives out turns strictly round by round.
    """
    gs = groups(pool, scores, r)
    if r.diversity <= 0:
        out: list[tuple[float, int]] = []
        depth = 0
        while True:
            layer = [g.members[depth] for g in gs if len(g.members) > depth]
            if not layer:
                return out
            out += layer
            depth += 1
    keyed = [(s * r.diversity ** k, s, i) for g in gs for k, (s, i) in enumerate(g.members)]
    keyed.sort(key=lambda x: (-x[0], -x[2]))
    return [(s, i) for _key, s, i in keyed]


__all__ = ["Group", "adjust", "cap_context", "groups", "order"]
