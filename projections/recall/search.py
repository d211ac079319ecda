"""``recall``: ranked search over messages, history entries and facts, with sources.

How a question is answered
--------------------------
1. **Terms.** Relative times ("two weeks ago") are resolved against ``now`` into soft
   windows and taken out (``when.py``); the question is cut into words and CJK runs
   (``query.py``); stop words and question scaffolding go; words that name a speaker the index knows (``extra.speaker``) are taken out of the
   terms and become a speaker preference instead (a message by Caroline rarely says
   "Caroline", while every message *to* her does). Words are stemmed by the index's own
   FTS5 tokenizer.
2. **Candidates.** FTS5 finds, term by term, the rows that hold each term (filters for
   scope, project, session, role and fact state are tag tokens AND-ed onto each term; a
   time filter is a join), and SQLite keeps the ``candidates`` rows with the highest sum
   of idf over the terms they hold. FTS5's own bm25() is not used: it reads a stored
   length for every matching row, which made one query over a million messages cost
   hundreds of milliseconds. On a large index the most common terms are left out of
   this step when rarer ones already reach ``generation_budget`` rows, and a term is read
   from its newest row for at most that many rows (they all still count in step 3):
   that bounds the work per query.
3. **Scores.** Each candidate message is scored with its neighbours in the session (the
   turns before and after it) as a second, lighter field: BM25F over ``text + w * context``
   with one term-frequency saturation, lengths in characters; the two turns on each side
   count, those after a turn somewhat less than those before it (an answer follows its
   question). A reply ("Yesterday, at the LGBTQ support group") is found by the question
   it answers, and vice versa; a turn just before a reply that asks the replier a question
   (it ends in "?", another speaker) counts ``Ranking.answer`` times more in the reply's context. Neighbours of candidates are scored too, so a turn that
   shares no word with the question can still be found through its context (a short one:
   the context weight shrinks as the turns grow past ``context_chars``, which itself
   shrinks in an index whose turns are long on average, ``context_ref``). History
   entries and facts are scored alone. Term frequencies come from the stored texts (a
   regex pass; each candidate word's stem is checked with the index's own tokenizer).
   Adjacent question words found adjacent in a text add a phrase bonus; messages by the
   one speaker the question names get a bonus.
4. **Ranking** (``rank.py``): assistant echoes step back behind the user's turn, a
   first-person question prefers the user's turns, time windows and (for current-state
   questions) recency multiply scores; results are collapsed per message (a message id
   appended twice is one hit) and ordered by score (newest first on ties), or grouped
   per session by their evidence (``recall_sessions``).
5. **Hits** carry source (kind, seq, session, message id, role, time, project) and a
   snippet with the matches in ``[`` ``]``.

Searching never writes anything and never marks a hit as used: a caller that uses a
hit records that itself.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from eventlog.errors import ConfigError
from projections.recall import overlap, rank
from projections.recall.index import FACT, MESSAGE, RecallIndex
from projections.recall.query import (
    MAX_TERMS,
    SCOPE_KINDS,
    SCOPES,
    Question,
    cjk_terms,
    query_time,
    quote,
    split_question,
    time_bound,
)
from projections.recall.text import (
    CJK_RUN,
    DEFAULT_FACT_STATES,
    FACT_STATES,
    KINDS,
    NOT_TERMS,
    STATE_CODES,
    fold,
    kind_tag,
    project_tag,
    role_tag,
    session_tag,
    state_tag,
    unpack,
)
from projections.recall.when import is_current_state, time_cues


class Hit(msgspec.Struct, frozen=True, kw_only=True):
    """One search result and where it comes from."""

    score: float
    kind: str  # "message", "history" or "fact"
    seq: int  # the log seq of the event that created the item (message.appended, history.appended, memory.appended)
    session_key: str = ""
    message_id: str = ""
    role: str = ""
    time: str = ""  # UTC ISO 8601: the message's timestamp, else when the event was logged
    project: str = ""
    snippet: str = ""  # part of the text around the matches, matches in [ ]
    text: str = ""
    fact_id: str = ""
    speaker: str = ""
    source: str = ""  # history entries: what wrote them (consolidator, digest, ...)
    section: str = ""  # facts: their MEMORY.md section
    state: str = ""  # facts: active, superseded, forgotten or archived


class SessionHit(msgspec.Struct, frozen=True, kw_only=True):
    """One session (or a lone history entry or fact) and its best turns: a result of ``recall_sessions``."""

    score: float  # the best turn's score plus Ranking.aggregate times the next best ones'
    kind: str  # "session", or "history" / "fact" for an item that is a group of its own
    session_key: str = ""
    project: str = ""
    time: str = ""  # the latest time among its hits
    matched: int = 0  # how many of its turns matched
    hits: list[Hit] = msgspec.field(default_factory=list)  # best first


@dataclass(frozen=True)
class Ranking:
    """Ranking parameters (the defaults were tuned on LoCoMo, see tools/eval_locomo.py)."""

    candidates: int = 100  # rows step 2 returns for re-scoring
    context: float = 0.5  # weight of the neighbouring turns' text
    window: int = 2  # neighbours on each side
    context_only: float = 1.0  # factor for a turn that matches nothing itself (found through its context)
    context_chars: int = 250  # a turn longer than this gets context * context_chars / its length (0: no scaling)
    context_ref: float = 500.0  # context_chars shrinks by context_ref / the index's mean item length when above (0: off)
    decay: float = 1.0  # context weight multiplier per step further away
    after: float = 0.6  # context weight multiplier for the turns that follow (vs those before)
    aux: float = 0.5  # weight of speaker, caption and tool names
    k1: float = 0.9
    b: float = 0.4
    phrase: float = 0.25  # bonus per adjacent question-word pair found adjacent (times the pair's mean idf)
    speaker: float = 1.5  # factor for messages by the one speaker the question names
    drop_names: bool = True  # take speaker names out of the terms
    generation_budget: int = 20_000  # rows step 2 may read: rarer terms first, the newest rows of a term first
    common: float = 0.2  # terms in more than this share of all items (and 1000) are ignored, unless alone
    echo: float = 0.9  # an assistant reply matching nothing its user turn did not: at most this times that turn
    echo_share: float = 0.5  # ... counted as an echo when this share of its matched idf is in the user turn's terms
    when: float = 1.0  # time window prior: score times 1 + when * bump (see when.py)
    dates: float = 1.0  # the same for a date the question writes out ("on 25 May, 2022", "in July 2022")
    recency: float = 0.5  # current-state prior: score times 1 + recency * (0 oldest .. 1 newest)
    aggregate: float = 0.3  # a session's score: its best turn + aggregate * its next best turns
    aggregate_turns: int = 2  # how many next best turns count for the session
    diversity: float = 1.0  # a session's k-th best turn counts diversity ** (k-1) in the message ranking (rank.py)
    user_first: float = 0.7  # first-person questions: other roles' turns count this much
    context_cap: float = 0.8  # a turn is kept at most this times a neighbour that matched more by its own text (rank.py)
    context_cap_chars: int = 500  # ... when the two turns together are longer than this (short chat lines need context)
    answer: float = 2.0  # context weight multiplier for the turn just before when it asks another speaker a question
    same_ask: float = 0.5  # a reply to a question that asks what the query asks ("how long") counts 1 + this (rank.py)


DEFAULT_RANKING = Ranking()


def ranking_from(spec: str) -> Ranking:
    """``DEFAULT_RANKING`` with fields overridden by ``"name=value,..."`` (the evaluations' ``--ranking``)."""
    if not spec:
        return DEFAULT_RANKING
    fields: dict[str, Any] = {}
    for part in spec.split(","):
        name, _, value = (x.strip() for x in part.partition("="))
        if not hasattr(DEFAULT_RANKING, name):
            raise ValueError(f"no ranking field {name!r}")
        default = getattr(DEFAULT_RANKING, name)
        fields[name] = value.lower() in ("1", "true", "yes") if isinstance(default, bool) else type(default)(value)
    return dataclasses.replace(DEFAULT_RANKING, **fields)

_HL_OPEN, _HL_CLOSE = "[", "]"
_SNIPPET_CHARS = 200
_NONWORD = re.compile(r"[\W_]*")
_WORD_TAIL = re.compile(r"[^\W_]*")
_TAG_LIKE = re.compile(r"x[kpsrf]\d+")  # filter tokens are not searchable words
_SPACE = re.compile(r"\s+")
_NOT_TERMS_SORTED = sorted(NOT_TERMS)
#: A non-ASCII letter or digit (the words holding one are found from it: ``_non_ascii_words``).
_NON_ASCII_LETTER = re.compile(r"[^\x00-\x7f\W_]")
_CJK_ONLY = CJK_RUN.fullmatch


def recall(
    index_or_path: RecallIndex | str | os.PathLike[str],
    query: str,
    *,
    scope: str = "all",
    project: str | None = None,
    session: str | None = None,
    role: str | None = None,
    since: Any = None,
    until: Any = None,
    limit: int = 10,
    states: Iterable[str] | None = None,
    semantic: Any = None,
    ranking: Ranking | None = None,
    now: Any = None,
) -> list[Hit]:
    """Search the recall index for ``query`` (a question in plain words); the best ``limit`` hits.

    ``scope``: ``all``, ``messages``, ``history`` or ``facts``. ``project``, ``session``
    (a session key) and ``role`` restrict to exact values (a role filter keeps messages
    only). ``since``/``until``: ISO 8601, a date, epoch seconds or an age like ``7d``.
    ``states``: fact states to include (default active and archived). ``semantic``: an
    ``embeddings.Semantic`` to re-rank with a sentence-embedding model (optional extra).
    Invalid arguments and queries with nothing to search for raise ``ConfigError``.
    """
    if isinstance(index_or_path, RecallIndex):
        return _Search(index_or_path, ranking or DEFAULT_RANKING).run(
            query, scope, project, session, role, since, until, limit, states, semantic, now)
    with RecallIndex(index_or_path, readonly=True) as ix:
        return _Search(ix, ranking or DEFAULT_RANKING).run(
            query, scope, project, session, role, since, until, limit, states, semantic, now)


def recall_sessions(
    index_or_path: RecallIndex | str | os.PathLike[str],
    query: str,
    *,
    limit: int = 10,
    turns: int = 3,
    **options: Any,
) -> list[SessionHit]:
    """The best ``limit`` sessions for ``query``, each with its best ``turns`` turns (``evlog recall --group session``).

    Takes every option of ``recall``. Sessions are ranked by their evidence (``rank.py``):
    a session's second turn never outranks another session's best. A history entry or a
    fact that matches is a group of its own.
    """
    if isinstance(turns, bool) or not isinstance(turns, int) or not 1 <= turns <= 100:
        raise ConfigError(f"turns must be a whole number from 1 to 100, not {turns!r}")
    limit = _validate_limit(limit)
    args = {k: options.pop(k, None) for k in ("scope", "project", "session", "role", "since", "until", "states",
                                              "semantic", "ranking", "now")}
    if options:
        raise ConfigError(f"unknown option {sorted(options)[0]!r}")
    scope = args["scope"] or "all"

    def run(ix: RecallIndex) -> list[SessionHit]:
        s = _Search(ix, args["ranking"] or DEFAULT_RANKING)
        s.run(query, scope, args["project"], args["session"], args["role"], args["since"], args["until"], limit,
              args["states"], args["semantic"], args["now"])
        return s.sessions(limit, turns)

    if isinstance(index_or_path, RecallIndex):
        return run(index_or_path)
    with RecallIndex(index_or_path, readonly=True) as ix:
        return run(ix)


# -- the search ------------------------------------------------------------------------------


class _Doc:
    """A row of ``docs`` as the scorer needs it."""

    __slots__ = ("id", "kind", "time", "text", "nchars", "sid", "pos", "mid", "role", "speaker", "caption", "tools",
                 "skey", "project", "source", "fact_id", "scope", "section", "state", "matches", "tf", "tf_aux",
                 "phrases", "eligible", "own")

    def __init__(self, row: tuple[Any, ...]) -> None:
        (self.id, self.kind, self.time, body, self.nchars, self.sid, self.pos, self.mid, self.role, self.speaker,
         self.caption, self.tools, self.skey, self.project, self.source, self.fact_id, self.scope, self.section,
         self.state) = row
        self.text = body if body.__class__ is str else unpack(body)
        self.matches: list[tuple[int, int, str]] = []
        self.tf: dict[str, float] = {}
        self.tf_aux: dict[str, float] = {}
        self.phrases = 0.0
        self.eligible = False
        self.own = 0.0


_DOC_COLUMNS = ("id, kind, time, body, nchars, sid, pos, mid, role, speaker, caption, tools, skey, project, source, "
                "fact_id, scope, section, state")
_DOC_SELECT = f"SELECT {_DOC_COLUMNS} FROM docs"
_NEIGHBOUR_COLUMNS = ", ".join(f"d.{c}" for c in _DOC_COLUMNS.split(", "))


def _validate_limit(limit: Any) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise ConfigError(f"limit must be a whole number from 1 to 10000, not {limit!r}")
    return limit


def _validate_text(value: Any, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ConfigError(f"{name} must be text, not {type(value).__name__}")


@dataclass(frozen=True)
class _Terms:
    """The terms of a question as the index knows them (step 1)."""

    word_stem: dict[str, str]  # a word of the question -> its stem (the term)
    singles: list[str]  # single CJK characters, looked up as prefixes
    dfs: dict[str, int]  # each term's document frequency
    live: list[str]  # the terms scored, rarest first
    idf: dict[str, float]  # the idf of each live term
    name_tokens: frozenset[str]  # words of the question that name a speaker
    boost: frozenset[str]  # the speakers they name


def _generation_terms(live: list[str], dfs: dict[str, int], budget: float) -> list[str]:
    """The rarest of ``live`` whose rows together stay within ``budget`` (always at least the first)."""
    gen: list[str] = []
    total = 0
    for t in live:
        if gen and total + dfs[t] > budget:
            break
        gen.append(t)
        total += dfs[t]
    return gen


@dataclass
class _Texts:
    """The texts (and aux texts) of docs that may hold a word term, joined by NULs for one pass."""

    joined: str
    owners: list[tuple[_Doc, bool]]  # per text: its doc, and whether it is the aux text
    starts: list[int]  # per text: its offset in ``joined``
    found: list[tuple[int, int, str]]  # words with non-ASCII letters: (start, end, lower-cased word)
    lowered: str = ""  # ``joined`` lower-cased, text by text (as long as ``joined`` unless a letter grows)

    @classmethod
    def of(cls, docs: list[_Doc], prefixes: tuple[str, ...]) -> _Texts:
        """An ASCII text is kept only when it holds one of ``prefixes``. Words with non-ASCII letters are
        taken one by one: case folding and diacritics (µ, ß, café) are the tokenizer's business, so
        only its stem of each such word decides."""
        parts: list[str] = []
        lows: list[str] = []
        owners: list[tuple[_Doc, bool]] = []
        starts: list[int] = []
        found: list[tuple[int, int, str]] = []
        at = 0
        for d in docs:
            for text, in_aux in ((d.text, False), (_aux(d), True)):
                if not text:
                    continue
                low = text.lower()
                if text.isascii():
                    if not any(map(low.__contains__, prefixes)):
                        continue
                else:
                    found += [(at + a, at + b, w) for a, b, w in _non_ascii_words(text)]  # folded by the stems
                parts.append(text)
                lows.append(low)
                owners.append((d, in_aux))
                starts.append(at)
                at += len(text) + 1
        return cls("\x00".join(parts), owners, starts, found, "\x00".join(lows))

    def prefixed_words(self, pattern: re.Pattern[str], prefixes: tuple[str, ...]) -> list[tuple[int, int, str]]:
        """The all-ASCII whole words of ``joined`` that start with one of ``prefixes`` (any case), in order:
        (start, end, lower-cased word), what ``pattern`` (``_prefix_pattern``) finds.

        ``str.find`` on the lower-cased text instead of the case-blind regex (a quarter of the time:
        the regex tries every position). A match is kept only if its original text is ASCII too, so
        the letters that lower-case to ASCII (the Kelvin sign) or match an ASCII letter case-blind
        (long s) count in neither. A lower case longer than its letter (İ) would shift the offsets:
        then the regex."""
        joined, low = self.joined, self.lowered
        if len(low) != len(joined):
            return [(m.start(), m.end(), m.group().lower()) for m in pattern.finditer(joined) if m.group().isascii()]
        starts: set[int] = set()
        for p in prefixes:
            s = low.find(p)
            while s >= 0:
                if not (s and joined[s - 1].isalnum()):  # a word starts here: [^\W_] is isalnum
                    starts.add(s)
                s = low.find(p, s + 1)
        out = []
        ascii_only = joined.isascii()
        for s in sorted(starts):
            e = _word_end(joined, s)
            if ascii_only or joined[s:e].isascii():
                out.append((s, e, low[s:e]))
        return out


def _word_end(text: str, i: int) -> int:
    """Where the run of letters and digits (``[^\\W_]``) at ``i`` of ``text`` ends."""
    m = _WORD_TAIL.match(text, i)
    return m.end() if m else i


def _non_ascii_words(text: str) -> list[tuple[int, int, str]]:
    """The whole words of ``text`` with a non-ASCII letter or digit that are not CJK runs: (start, end, word).

    A word is a maximal run of ``[^\\W_]`` (``str.isalnum``) characters. Found from each such letter
    outwards: a regex for the words themselves tries every position of the text (5x the time)."""
    out: list[tuple[int, int, str]] = []
    end = -1
    for m in _NON_ASCII_LETTER.finditer(text):
        i = m.start()
        if i < end:
            continue  # inside the word just taken
        start = i
        while start and text[start - 1].isalnum():  # [^\W_] is isalnum
            start -= 1
        end = _word_end(text, i)
        word = text[start:end]
        if not _CJK_ONLY(word):
            out.append((start, end, word))
    return out


def _count_cjk(docs: list[_Doc], cjk: list[str]) -> None:
    """Count the CJK gram terms ``cjk`` in ``docs`` (substring occurrences, overlapping ones too)."""
    for d in docs:
        for t in cjk:
            start = d.text.find(t)
            while start >= 0:
                d.tf[t] = d.tf.get(t, 0.0) + 1
                d.matches.append((start, start + len(t), t))
                start = d.text.find(t, start + 1)
            aux = _aux(d)
            if aux and t in aux:
                d.tf_aux[t] = d.tf_aux.get(t, 0.0) + aux.count(t)


class _Search:
    def __init__(self, ix: RecallIndex, ranking: Ranking) -> None:
        self.ix = ix
        self.db = ix.db
        self.r = ranking
        self.session_info: dict[int, tuple[str, str]] = {}

    # -- entry ------------------------------------------------------------------------------

    def run(self, query: Any, scope: str, project: str | None, session: str | None, role: str | None, since: Any,
            until: Any, limit: Any, states: Iterable[str] | None, semantic: Any, now: Any = None) -> list[Hit]:
        """The best ``limit`` hits; every scored row stays in ``pool``/``scores`` for ``sessions``."""
        self.pool: dict[int, _Doc] = {}
        self.scores: dict[int, float] = {}
        if scope not in SCOPES:
            raise ConfigError(f"unknown scope {scope!r} (one of {', '.join(SCOPES)})")
        limit = _validate_limit(limit)
        project = _validate_text(project, "project")
        session = _validate_text(session, "session")
        role = _validate_text(role, "role")
        lo = time_bound(since, name="since")
        hi = time_bound(until, name="until", end=True)
        if states is None:
            state_set = {STATE_CODES[s] for s in DEFAULT_FACT_STATES}
        else:
            if isinstance(states, str):
                states = [states]
            bad = [s for s in states if s not in STATE_CODES]
            if bad:
                raise ConfigError(f"unknown fact state {bad[0]!r} (one of {', '.join(FACT_STATES)})")
            state_set = {STATE_CODES[s] for s in states}
        moment = query_time(now)
        q = split_question(query)
        if q.empty:
            raise ConfigError("the query has no words to search for")
        self.cues, rest = time_cues(q.text, moment)
        self.current = is_current_state(q.text)
        self.wanted = rank.asked_for(q.text)
        if rest != q.text:
            framed = split_question(rest)
            if framed.words or framed.cjk:
                q = framed
        kinds = SCOPE_KINDS[scope]
        if role is not None:
            kinds = tuple(k for k in kinds if k == MESSAGE)
        if session is not None:
            kinds = tuple(k for k in kinds if k != FACT)
        if not kinds or (lo is not None and hi is not None and lo > hi):
            return []
        self.filters = _Filters(kinds, project, session, role, lo, hi, state_set)
        hits = self.search(q, limit, semantic)
        return hits

    # -- terms ------------------------------------------------------------------------------

    def speaker_names(self, q: Question, project: str | None) -> tuple[frozenset[str], frozenset[str]]:
        """(name tokens to take out of the terms, speakers to prefer) for the words of ``q``."""
        words = set(q.words)
        if not words:
            return frozenset(), frozenset()
        sql = "SELECT DISTINCT name FROM speakers" + (" WHERE project = ?" if project is not None else "")
        tokens: set[str] = set()
        names: set[str] = set()
        for (name,) in self.db.execute(sql, () if project is None else (project,)):
            parts = {p.lower() for p in re.findall(r"[^\W_]+", name)}
            found = parts & words
            if found:
                tokens |= found
                names.add(name)
        return frozenset(tokens), frozenset(names)

    # -- the pipeline -----------------------------------------------------------------------

    def search(self, q: Question, limit: int, semantic: Any) -> list[Hit]:
        """Steps 1 to 4 for ``q``: terms, candidates and their neighbours, scores, ranking."""
        r = self.r
        _seq, n_docs, n_chars = self.ix.snapshot()
        if n_docs <= 0:
            return []
        terms = self.terms(q, n_docs)
        if terms is None:
            return self.meaning_only(q, limit, semantic)
        pool = self.gather(terms, n_docs)
        if not pool:
            return self.meaning_only(q, limit, semantic)
        # step 3: term frequencies, then BM25F with context
        self.count(pool.values(), terms.live)
        scores, owns = self.score(q, pool, terms, max(1.0, n_chars / n_docs))
        boost = terms.boost
        # a question that names its speaker has said whose words it wants: no echo rule then
        adjusted = rank.adjust(pool, scores, r, cues=self.cues, current=self.current,
                               echo=not (boost and len(boost) == 1), idf=terms.idf, first_person=_first_person(q),
                               wanted=self.wanted)
        owns = {i: owns[i] * adjusted[i] / scores[i] for i in adjusted if scores[i] > 0}
        scores = rank.cap_context(pool, adjusted, owns, r)
        if semantic is not None and scores:
            scores = semantic.apply(self, q, pool, scores)
        self.pool, self.scores = pool, scores
        return self.hits(pool, rank.order(pool, scores, r)[:limit])

    def meaning_only(self, q: Question, limit: int, semantic: Any) -> list[Hit]:
        """No word of the question finds anything: hybrid recall's neighbours alone, otherwise no hit."""
        if semantic is None or getattr(semantic, "mode", "") != "hybrid":
            return []
        self.session_info = {}
        pool: dict[int, _Doc] = {}
        scores = semantic.apply(self, q, pool, {})
        self.pool, self.scores = pool, scores
        return self.hits(pool, rank.order(pool, scores, self.r)[:limit])

    def terms(self, q: Question, n_docs: int) -> _Terms | None:
        """Step 1: the stemmed terms of ``q`` the index holds, rarest first, with their idf (None: none)."""
        r, ix = self.r, self.ix
        name_tokens, boost = self.speaker_names(q, self.filters.project)
        words = [w for w in q.content_words(name_tokens if r.drop_names else frozenset()) if not _TAG_LIKE.fullmatch(w)]
        stems = ix.stems(words)
        word_stem = {w: s for w, s in zip(words, stems, strict=True) if s}
        # both sides: a word whose stem is a stop word's ("one" -> "on") is no term, and a stop
        # word in a text ("does") never counts for a term that shares its stem ("doe")
        self.not_terms: frozenset[str] = frozenset()
        if any(fold(w) not in NOT_TERMS for w in word_stem):
            stop_stems = set(ix.stems(_NOT_TERMS_SORTED))
            word_stem = {w: t for w, t in word_stem.items() if t not in stop_stems} or word_stem
            self.not_terms = NOT_TERMS
        terms = list(dict.fromkeys(word_stem.values()))
        grams, singles = cjk_terms(q.cjk)
        terms += [g for g in grams if g not in terms]
        dfs = {t: ix.df(t) for t in terms}
        dfs.update({s: ix.df(s, prefix=True) for s in singles})
        live = sorted((t for t in dfs if dfs[t] > 0), key=lambda t: (dfs[t], t))[:MAX_TERMS]
        if not live:
            return None
        # words in a large share of all items say little and cost most: scored only when alone
        live = [t for t in live if dfs[t] <= max(r.common * n_docs, 1000)] or live[:1]
        idf = {t: math.log(1 + (n_docs - dfs[t] + 0.5) / (dfs[t] + 0.5)) for t in live}
        return _Terms(word_stem=word_stem, singles=singles, dfs=dfs, live=live, idf=idf, name_tokens=name_tokens,
                      boost=boost)

    def gather(self, terms: _Terms, n_docs: int) -> dict[int, _Doc]:
        """Step 2: the candidates of ``terms`` and (with context on) their neighbours, eligibility marked."""
        r, f, ix = self.r, self.filters, self.ix
        selectivity = 1.0
        tagged = n_docs  # no filter tag is held by more rows than this
        for tag in f.selective_tags():
            tagged = min(tagged, ix.df(tag))
            selectivity = min(selectivity, ix.df(tag) / n_docs)
        gen = _generation_terms(terms.live, terms.dfs, r.generation_budget / max(selectivity, 1e-9))
        # FTS5 stems what MATCH is given: hand it a word of the question, never its stem again
        surface = {s: w for w, s in reversed(list(terms.word_stem.items()))}
        cand = self.candidates([(surface.get(t, t), t in terms.singles, terms.idf[t]) for t in gen], r.candidates,
                               longest=max(min(terms.dfs[t], tagged) for t in gen))
        if not cand:
            return {}
        docs = self.fetch(cand)
        for d in docs.values():
            d.eligible = f.accepts(d, self.session_info)
        pool = dict(docs)
        if r.context > 0 and r.window > 0:
            for d in self.neighbours([d for d in docs.values() if d.kind == MESSAGE], r.window):
                if d.id not in pool:
                    d.eligible = MESSAGE in f.kinds and f.accepts(d, self.session_info)
                    pool[d.id] = d
        return pool

    def score(self, q: Question, pool: dict[int, _Doc], terms: _Terms,
              avg_chars: float) -> tuple[dict[int, float], dict[int, float]]:
        """BM25F with context of each eligible doc of ``pool``, and the BM25 of its own text alone (by id)."""
        r, word_stem, boost = self.r, terms.word_stem, terms.boost
        pairs = {(word_stem[a], word_stem[b]) for a, b in q.pairs(terms.name_tokens if r.drop_names else frozenset())
                 if a in word_stem and b in word_stem}
        runs = [run for run in q.cjk if len(run) >= 3]
        by_pos = {(d.sid, d.pos): d for d in pool.values() if d.kind == MESSAGE}
        scores: dict[int, float] = {}
        owns: dict[int, float] = {}  # the BM25 of each turn's own text (no context): which turn of a session to show
        weights = {off: r.context * r.decay ** (off - 1) for off in range(1, r.window + 1)}
        # in an index of long turns (agent transcripts) a turn speaks for itself sooner than among chat lines
        scale = min(1.0, r.context_ref / avg_chars) if r.context_ref > 0 else 1.0
        self.context_chars = int(r.context_chars * scale)
        ctx_avg = avg_chars * (1 + (1 + r.after) * sum(weights.values()))
        for d in pool.values():
            if not d.eligible or not (d.tf or d.tf_aux or self.shown_by_context(d)):
                continue
            scored = self.bm25f(d, self.context(d, by_pos, weights), terms, avg_chars, ctx_avg)
            if scored is None:
                continue
            s, own = scored
            # no pair can be adjacent in a text with fewer than two matches: its bonus is 0.0, s + 0.0 == s
            if r.phrase and (runs or (pairs and len(d.matches) > 1)):
                s += r.phrase * self.phrase_bonus(d, pairs, runs, terms.idf)
            if boost and len(boost) == 1 and d.speaker in boost:
                s *= r.speaker
            scores[d.id] = s
            owns[d.id] = own
        return scores, owns

    def context(self, d: _Doc, by_pos: dict[tuple[int, int], _Doc],
                weights: dict[int, float]) -> list[tuple[float, _Doc]]:
        """The weighted neighbours of message ``d`` in ``by_pos`` (none for other kinds or without context)."""
        r = self.r
        ctx: list[tuple[float, _Doc]] = []
        if d.kind != MESSAGE or r.context <= 0:
            return ctx
        # a short turn needs its neighbours to be understood, a long one speaks for itself
        cc = self.context_chars
        sid, pos, nchars = d.sid, d.pos, d.nchars
        get = by_pos.get
        answer, after = r.answer, r.after
        # (``weights`` holds the offsets 1..window in order; ``max``/``min`` written out: the same values)
        for off, weight in weights.items():
            n = get((sid, pos - off))
            if n is not None:
                if cc:
                    m = n.nchars if n.nchars > nchars else nchars
                    x = cc / (m if m > 1 else 1)
                    w = weight * (x if x < 1.0 else 1.0)
                else:
                    w = weight * 1.0
                # (``rank.answers`` is False for a turn without a "?": the call is skipped then)
                if off == 1 and answer != 1.0 and "?" in n.text and rank.answers(d, n):
                    w *= answer
                ctx.append((w, n))
            n = get((sid, pos + off))
            if n is not None:
                if cc:
                    m = n.nchars if n.nchars > nchars else nchars
                    x = cc / (m if m > 1 else 1)
                    ctx.append((weight * after * (x if x < 1.0 else 1.0), n))
                else:
                    ctx.append((weight * after * 1.0, n))
        return ctx

    def shown_by_context(self, d: _Doc) -> bool:
        """Whether a doc that matches nothing itself may be shown through its context (``bm25f``'s rule, asked
        before its context is gathered: most neighbours of the candidates are long turns without a term)."""
        long = bool(self.r.context_chars) and d.nchars > self.r.context_chars
        return not long and bool(d.text.strip())

    def bm25f(self, d: _Doc, ctx: list[tuple[float, _Doc]], terms: _Terms, avg_chars: float,
              ctx_avg: float) -> tuple[float, float] | None:
        """(BM25F of ``d`` with its context ``ctx``, BM25 of its own text); None when it is not to be shown."""
        r, idf = self.r, terms.idf
        k1, b = r.k1, r.b
        own_norm = k1 * (1 - b + b * d.nchars / avg_chars)
        tfs, tfs_aux = d.tf, d.tf_aux
        # a neighbour without a term adds w * 0.0 == 0.0 to every term frequency: left out, nothing changes
        ctx_tfs = [(w, n.tf) for w, n in ctx if n.tf]
        if ctx:  # (``sum``: Python's float sum, compensated since 3.12, not a loop of +=)
            norm = k1 * (1 - b + b * (d.nchars + sum([w * n.nchars for w, n in ctx])) / ctx_avg)
        else:
            norm = own_norm
        if not (tfs or tfs_aux or ctx_tfs):
            return None  # no term anywhere: s would stay 0
        s = own = 0.0
        aux, kp1 = r.aux, k1 + 1
        for t in terms.live:
            mine = tfs.get(t, 0.0) + aux * tfs_aux.get(t, 0.0)
            tf = mine
            for w, ntf in ctx_tfs:
                if t in ntf:  # (one without it adds w * 0.0: nothing)
                    tf += w * ntf[t]
            if tf:
                s += idf[t] * tf * kp1 / (tf + norm)
            if mine:
                own += idf[t] * mine * kp1 / (mine + own_norm)
        if s <= 0:
            return None  # (a turn that matches nothing itself and is not ``shown_by_context`` never gets here)
        if not (tfs or tfs_aux):
            s *= r.context_only  # found through its neighbours only: below turns with evidence of their own
        return s, own

    def phrase_bonus(self, d: _Doc, pairs: set[tuple[str, str]], runs: list[str], idf: dict[str, float]) -> float:
        """The idf of the question's adjacent word pairs found adjacent in ``d``, and of its CJK runs in it."""
        bonus = 0.0
        if pairs:
            found = self.adjacent_pairs(d, pairs)
            bonus += sum((idf.get(a, 0) + idf.get(b, 0)) / 2 for a, b in found)
        for run in runs:
            if run in d.text:
                bonus += sum(idf.get(g, 0) for g in cjk_terms([run])[0]) / 2
        return bonus

    # -- data -------------------------------------------------------------------------------

    def candidates(self, terms: list[tuple[str, bool, float]], k: int, *,
                   longest: int | None = None) -> list[tuple[int, float]]:
        """The ``k`` rows with the highest sum of idf over the ``terms`` they hold (newest first on ties).

        Each term is a word as the question wrote it (FTS5 stems it; a stem stemmed again
        is often another token: ``convers`` -> ``conver``), or a CJK gram.

        One FTS5 lookup per term (a doclist walk, no ranking function: that would read a
        length per row), summed by SQLite; filters are AND-ed onto every term. A term is
        read back from its newest row for at most ``generation_budget`` rows, which bounds
        the work of a question made of common words only. ``longest``: no term's row list
        (filters applied) is longer than this (None: unknown).
        """
        f = self.filters
        suffix = f.match_suffix()
        cap = self.r.generation_budget
        if f.since is None and f.until is None:
            return self.untimed_candidates(terms, k, suffix, cap, longest=longest)
        subs, args = [], []
        for term, prefix, weight in terms:
            subs.append("SELECT * FROM (SELECT rowid AS r, ? AS w FROM fts WHERE fts MATCH ? "
                        "ORDER BY rowid DESC LIMIT ?)")
            args += [weight, self.match_term(term, prefix) + suffix, cap]
        grouped = f"SELECT r, sum(w) AS s FROM ({' UNION ALL '.join(subs)}) GROUP BY r"
        sql = f"SELECT g.r, g.s FROM ({grouped}) g JOIN docs d ON d.id = g.r WHERE 1"
        if f.since is not None:
            sql += " AND d.time >= ?"
            args.append(f.since)
        if f.until is not None:
            sql += " AND d.time <= ?"
            args.append(f.until)
        return self.db.execute(sql + " ORDER BY g.s DESC, g.r DESC LIMIT ?", (*args, k)).fetchall()

    def untimed_candidates(self, terms: list[tuple[str, bool, float]], k: int, suffix: str,
                           cap: int, *, longest: int | None = None) -> list[tuple[int, float]]:
        """``candidates`` without a time filter, the last term's (the commonest's) long row list read in SQLite only.

        A row that holds the last term alone weighs that term's idf, the same for all, so of
        those rows only the ``k`` newest can be candidates: the sum and its sort run over the
        rows of the other terms (and their rows in the last term's list) only, instead of up to
        ``generation_budget`` rows. SQLite's sum adds a group's rows in the union's order
        (checked in tests/projections/test_recall_candidates.py), so the last term's weight is
        added last, as before: the same sums, rows and order as one sum over every term's rows.
        When no list is longer than ``cap`` (``longest``), a few terms go by their lists'
        overlaps instead (``overlap.py``: the same answer, reading a fraction of the rows).
        """
        if longest is not None and longest <= cap and 2 <= len(terms) <= overlap.MAX_TERMS:
            return overlap.candidates(self.db, [self.match_term(term, prefix) for term, prefix, _w in terms],
                                      [w for _t, _p, w in terms], suffix, k)
        lists = [("SELECT rowid AS r FROM fts WHERE fts MATCH ? ORDER BY rowid DESC LIMIT ?",
                  [self.match_term(term, prefix) + suffix, cap], weight) for term, prefix, weight in terms]
        last, last_args, last_weight = lists.pop()
        if not lists:
            return self.db.execute(f"SELECT r, ? FROM ({last}) LIMIT ?", (last_weight, *last_args, k)).fetchall()
        weighted = " UNION ALL ".join(f"SELECT r, ? AS w FROM ({sql})" for sql, _a, _w in lists)
        weighted_args = [x for _sql, a, w in lists for x in (w, *a)]
        rows = " UNION ALL ".join(f"SELECT r FROM ({sql})" for sql, _a, _w in lists)
        rows_args = [x for _sql, a, _w in lists for x in a]
        summed = self.db.execute(
            f"SELECT r, sum(w) AS s FROM ({weighted} UNION ALL SELECT r, ? AS w FROM ({last}) WHERE r IN ({rows})) "
            "GROUP BY r ORDER BY s DESC, r DESC LIMIT ?",
            (*weighted_args, last_weight, *last_args, *rows_args, k)).fetchall()
        alone = self.db.execute(f"SELECT r, ? FROM ({last}) WHERE r NOT IN ({rows}) ORDER BY r DESC LIMIT ?",
                                (last_weight, *last_args, *rows_args, k)).fetchall()
        return sorted(summed + alone, key=lambda row: (-row[1], -row[0]))[:k]

    def match_term(self, term: str, prefix: bool) -> str:
        """``term`` for MATCH: quoted; a word the tokenizer splits into several tokens (its Unicode tables
        are older than Python's) is those tokens AND-ed, since a quoted one would be a phrase query,
        which an index without positions refuses."""
        pieces = self.ix.tokens([term])[0] if not prefix else ()
        if len(pieces) > 1:
            return "(" + " AND ".join(quote(p) for p in pieces) + ")"
        return quote(term) + ("*" if prefix else "")

    def fetch(self, cand: list[tuple[int, float]]) -> dict[int, _Doc]:
        docs = self.rows([c[0] for c in cand])
        sids = {d.sid for d in docs.values() if d.kind == MESSAGE}
        self.session_info = {}
        self.load_sessions(sids)
        return docs

    def more_docs(self, ids: list[int]) -> dict[int, _Doc]:
        """Docs by id for the semantic hook (its own candidates), each marked with whether the filters pass it."""
        docs = self.rows(ids)
        self.load_sessions({d.sid for d in docs.values() if d.kind == MESSAGE})
        for d in docs.values():
            d.eligible = self.filters.accepts(d, self.session_info)
        return docs

    def load_sessions(self, sids: Iterable[int]) -> None:
        missing = [s for s in sids if s not in self.session_info]
        for i in range(0, len(missing), 500):
            chunk = missing[i : i + 500]
            for sid, key, project in self.db.execute(
                    f"SELECT sid, skey, project FROM sessions WHERE sid IN ({','.join('?' * len(chunk))})", chunk):
                self.session_info[sid] = (key, project)

    def neighbours(self, docs: list[_Doc], window: int) -> list[_Doc]:
        """Messages within ``window`` turns of ``docs`` in their sessions, in session and turn order.

        The ranges are merged first (overlapping or touching ones of a session are one), so one
        indexed join per chunk reads each row once, whole; the rows of ``docs`` themselves are
        skipped. Their order is what the join over the unmerged sorted ranges gives, each row where
        it first appears: a range's new turns always follow every turn of the ranges before it."""
        have = {d.id for d in docs}
        merged: list[tuple[int, int, int]] = []
        for sid, lo, hi in sorted({(d.sid, d.pos - window, d.pos + window) for d in docs}):
            if merged and merged[-1][0] == sid and lo <= merged[-1][2] + 1:
                if hi > merged[-1][2]:
                    merged[-1] = (sid, merged[-1][1], hi)
            else:
                merged.append((sid, lo, hi))
        out: list[_Doc] = []
        for i in range(0, len(merged), 300):
            chunk = merged[i : i + 300]
            values = ",".join("(?, ?, ?)" for _ in chunk)
            sql = (f"WITH n(s, lo, hi) AS (VALUES {values}) SELECT {_NEIGHBOUR_COLUMNS} FROM n JOIN docs d "
                   "INDEXED BY docs_position ON d.kind = 0 AND d.sid = n.s AND d.pos BETWEEN n.lo AND n.hi")
            out += [_Doc(row) for row in self.db.execute(sql, [x for r in chunk for x in r]) if row[0] not in have]
        return out

    def rows(self, ids: list[int]) -> dict[int, _Doc]:
        """The docs of ``ids`` (missing ones absent)."""
        docs: dict[int, _Doc] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            for row in self.db.execute(f"{_DOC_SELECT} WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                docs[row[0]] = _Doc(row)
        return docs

    def count(self, docs: Iterable[_Doc], terms: list[str]) -> None:
        """Fill each doc's term frequencies (text and aux) and match spans.

        A cheap substring test on the lower-cased text skips docs that cannot hold a term
        (most neighbours); the others are scanned for words that may stem to a term, and
        each such word's stem is checked with the index's own tokenizer (cached).
        """
        docs = list(docs)
        words = [t for t in terms if not _is_cjk_term(t)]
        cjk = [t for t in terms if _is_cjk_term(t)]
        if words:
            self.count_words(docs, words)
        if cjk:
            _count_cjk(docs, cjk)
        for d in docs:
            d.matches.sort()

    def count_words(self, docs: list[_Doc], words: list[str]) -> None:
        """Count the word terms ``words`` (stems) in ``docs``: those whose stem by the index is one."""
        pattern, prefixes = _prefix_pattern(words)
        texts = _Texts.of(docs, prefixes)
        # the pattern matches whole words; words with non-ASCII letters were taken by _Texts.of
        found = texts.found + texts.prefixed_words(pattern, prefixes)
        uniq = list(dict.fromkeys(w for _s, _e, w in found))
        stems = dict(zip(uniq, self.ix.stems(uniq), strict=True))
        wanted = set(words)
        for start, end, w in found:
            t = stems.get(w)
            if t is None or t not in wanted or w in self.not_terms:
                continue
            k = bisect_right(texts.starts, start) - 1
            d, in_aux = texts.owners[k]
            if in_aux:
                d.tf_aux[t] = d.tf_aux.get(t, 0.0) + 1
            else:
                d.tf[t] = d.tf.get(t, 0.0) + 1
                d.matches.append((start - texts.starts[k], end - texts.starts[k], t))

    @staticmethod
    def adjacent_pairs(d: _Doc, pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
        found = set()
        ms = d.matches
        for (_s1, e1, t1), (s2, _e2, t2) in zip(ms, ms[1:], strict=False):
            if (t1, t2) in pairs and s2 >= e1 and _NONWORD.fullmatch(d.text, e1, s2):
                found.add((t1, t2))
        return found

    # -- results ----------------------------------------------------------------------------

    def sessions(self, limit: int, turns: int) -> list[SessionHit]:
        """The best ``limit`` groups of what ``run`` scored: sessions with their best ``turns`` turns."""
        out = []
        for g in rank.groups(self.pool, self.scores, self.r)[:limit]:
            hits = self.hits(self.pool, g.members[:turns])
            first = hits[0]
            kind = "session" if first.kind == "message" else first.kind
            out.append(SessionHit(score=round(g.score, 6), kind=kind, session_key=first.session_key,
                                  project=first.project, time=max(h.time for h in hits), matched=len(g.members),
                                  hits=hits))
        return out

    def hits(self, pool: dict[int, _Doc], ranked: list[tuple[float, int]]) -> list[Hit]:
        self.load_sessions({pool[i].sid for _s, i in ranked if pool[i].kind == MESSAGE})
        out = []
        for s, i in ranked:
            d = pool[i]
            skey, project = "", ""
            if d.kind == MESSAGE:
                skey, project = self.session_info.get(d.sid, ("", ""))
            else:
                skey, project = d.skey or "", d.project or ""
            out.append(Hit(
                score=round(s, 6), kind=KINDS[d.kind], seq=d.id, session_key=skey, message_id=d.mid or "",
                role=d.role or "", time=d.time, project=project, snippet=snippet(d.text, d.matches), text=d.text,
                fact_id=d.fact_id or "", speaker=d.speaker or "", source=d.source or "", section=d.section or "",
                state=FACT_STATES[d.state] if d.kind == FACT and d.state is not None else "",
            ))
        return out


@dataclass(frozen=True)
class _Filters:
    kinds: tuple[int, ...]
    project: str | None
    session: str | None
    role: str | None
    since: str | None
    until: str | None
    states: set[int]

    def selective_tags(self) -> list[str]:
        tags = []
        if self.project is not None:
            tags.append(project_tag(self.project))
        if self.session is not None:
            tags.append(session_tag(self.session))
        if self.role is not None:
            tags.append(role_tag(self.role))
        return tags

    def match_suffix(self) -> str:
        out = ""
        if len(self.kinds) < 3:
            out += " AND (" + " OR ".join(kind_tag(k) for k in self.kinds) + ")"
        for tag in self.selective_tags():
            out += f" AND {tag}"
        if FACT in self.kinds:
            excluded = [state_tag(s) for s in range(len(FACT_STATES)) if s not in self.states]
            if excluded:
                out += " NOT (" + " OR ".join(excluded) + ")"
        return out

    def accepts(self, d: _Doc, sessions: dict[int, tuple[str, str]]) -> bool:
        """Exact check of every filter (tags are hashes; this also covers neighbours)."""
        if d.kind not in self.kinds:
            return False
        if d.kind == MESSAGE:
            skey, project = sessions.get(d.sid, (None, None))
            if skey is None:
                return False
        else:
            skey, project = d.skey or "", d.project or ""
        if self.project is not None and project != self.project:
            return False
        if self.session is not None and skey != self.session:
            return False
        if self.role is not None and d.role != self.role:
            return False
        if self.since is not None and d.time < self.since:
            return False
        if self.until is not None and d.time > self.until:
            return False
        return not (d.kind == FACT and d.state not in self.states)


_FIRST_PERSON = frozenset(("i", "me", "my", "mine", "myself"))
_SECOND_PERSON = frozenset(("you", "your", "yours", "yourself"))


def _first_person(q: Question) -> bool:
    """True when the question asks about the user in the first person and not about "you"."""
    words = set(q.all_words)
    return bool(words & _FIRST_PERSON) and not words & _SECOND_PERSON


def _aux(d: _Doc) -> str:
    if d.kind == MESSAGE:
        if not (d.speaker or d.caption or d.tools):
            return ""  # most messages: no generator and join
        return " ".join(p for p in (d.speaker, d.caption, d.tools) if p)
    if d.kind == FACT:
        return d.section or ""
    return ""


def _is_cjk_term(t: str) -> bool:
    return CJK_RUN.fullmatch(t) is not None


def _prefix_pattern(stems: list[str]) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """Words that may stem to one of ``stems``, and their lower-case prefixes (``_word_prefix``); the caller
    checks each candidate's real stem."""
    key = tuple(sorted(stems))
    got = _PATTERNS.get(key)
    if got is None:
        prefixes = sorted({_word_prefix(s) for s in stems}, key=lambda p: (-len(p), p))
        alt = "|".join(re.escape(p) for p in prefixes)
        got = (re.compile(rf"(?<![^\W_])(?:{alt})[^\W_]*", re.IGNORECASE), tuple(prefixes))
        if len(_PATTERNS) > 256:
            _PATTERNS.clear()
        _PATTERNS[key] = got
    return got


_PATTERNS: dict[tuple[str, ...], tuple[re.Pattern[str], tuple[str, ...]]] = {}


def _word_prefix(stem: str) -> str:
    """What every word that Porter-stems to ``stem`` starts with.

    A stem is a prefix of its word except where the stemmer rewrites the end: a final ``e`` it
    adds (filing -> file) or a ``y`` it turns into ``i`` (happy -> happi, and in short words too:
    toy -> toi, day -> dai, key -> kei), and ``-bility`` -> ``-bl`` (possibility -> possibl,
    nobility -> noble)."""
    p = stem[:-1] if len(stem) > 1 and stem[-1] in "ei" else stem
    return p[:-1] if p.endswith("bl") else p


def snippet(text: str, matches: list[tuple[int, int, str]], width: int = _SNIPPET_CHARS) -> str:
    """The part of ``text`` (about ``width`` characters) with the most distinct matched terms, matches in [ ]."""
    if not text:
        return ""
    spans: list[tuple[int, int, str]] = []
    for s, e, t in sorted(matches):
        if spans and s < spans[-1][1]:
            ps, pe, pt = spans[-1]
            spans[-1] = (ps, max(pe, e), pt)
        else:
            spans.append((s, e, t))
    if not spans:
        start, end = 0, min(len(text), width)
    else:
        best, best_i = -1, 0
        for i, (s, _e, _t) in enumerate(spans):
            distinct = {t for s2, _e2, t in spans[i:] if s2 < s + width}
            if len(distinct) > best:
                best, best_i = len(distinct), i
        first = spans[best_i][0]
        start = max(0, first - width // 5)
        end = min(len(text), start + width)
        start = max(0, min(start, end - width))
        if start > 0:
            ws = text.rfind(" ", max(0, start - 15), start)
            start = ws + 1 if ws >= 0 else start
        if end < len(text):
            we = text.find(" ", end, end + 15)
            end = we if we >= 0 else end
    out = []
    pos = start
    for s, e, _t in spans:
        if e <= start or s >= end:
            continue
        s, e = max(s, start), min(e, end)
        out.append(text[pos:s])
        out.append(_HL_OPEN + text[s:e] + _HL_CLOSE)
        pos = e
    out.append(text[pos:end])
    body = _SPACE.sub(" ", "".join(out)).strip()
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")


__all__ = ["DEFAULT_RANKING", "Hit", "Ranking", "SessionHit", "recall", "recall_sessions", "snippet"]
