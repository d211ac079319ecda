"""Text helpers shared by the extractors: what is injected, sentences, tokens, similarity.

Nothing here knows about facts; these are the small, well-tested pieces the offline
rules and the LLM protocol are built from.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from eventlog.harness import COMMAND_ARGS as _COMMAND_ARGS
from eventlog.harness import HARNESS_PREFIXES as _HARNESS_PREFIXES
from eventlog.harness import META_FLAGS
from eventlog.harness import drop_blocks as _drop_blocks
from processors.extract.model import Entry

# --- who wrote a message ------------------------------------------------------------

#: Session keys of subagent transcripts (their "user" prompts are written by the main agent).
_SUBAGENT_KEY = re.compile(r"/(?:agent|sidechain)-[^/]*$")
_META_FLAGS = (*META_FLAGS, "isSidechain", "warmup")


def is_person(entry: Entry) -> bool:
    """Whether a human wrote ``entry``: the user, a note, or a named speaker of a conversation.

    An assistant message counts as a person's only when the source names its speaker
    (``meta["speaker"]``, as in a conversation between two people); an AI assistant's
    text is generated and never a source.
    """
    if entry.role in ("user", "note"):
        return True
    if entry.role == "assistant":
        named = entry.meta.get("speaker") if isinstance(entry.meta, dict) else None
        return isinstance(named, str) and bool(named.strip()) and named.strip().casefold() not in (
            "assistant", "ai", "bot", "claude", "model", "agent", "system")
    return False


def skip_reason(entry: Entry) -> str | None:
    """Why ``entry`` can never be a source (injected, generated or tool text), or None."""
    if not is_person(entry):
        return f"role {entry.role}" if entry.role != "assistant" else "assistant text is generated"
    meta = entry.meta if isinstance(entry.meta, dict) else {}
    for flag in _META_FLAGS:
        if meta.get(flag) is True:
            return f"{flag} message"
    if meta.get("subtype") == "local_command":
        return "local command"
    if _SUBAGENT_KEY.search(entry.session_key):
        return "subagent prompt (written by the main agent)"
    head = entry.text.lstrip().casefold()
    if head.startswith(_HARNESS_PREFIXES):
        return "harness text"
    if head.startswith("<") and _only_injected(entry.text):
        return "injected block"
    return None


# --- injected text inside a message ---------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_TAG = re.compile(r"</?[a-z][a-z0-9_-]*\b[^>]*>", re.IGNORECASE)
_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_MEMORY_HEADING = re.compile(
    r"^\s*#{1,4}\s*(?:user profile|project context|preferences|events|memory|long[- ]term memory|"
    r"[^\n]*memory\.md)\s*$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)])\s+")


def _only_injected(text: str) -> bool:
    return not own_text(text)



def own_text(text: str, known_keys: Iterable[str] = ()) -> str:
    """The part of a message its author wrote: injected blocks, code and pasted memory removed.

    Text after a closing tag of an injected block that was never opened (text that tries
    to end the memory block) is not the author's. ``<command-args>`` keep their content
    (the arguments the user typed after a slash command); every other harness block (``<system-reminder>``, ``<command-name>``,
    ``<local-command-stdout>``, ``<environment_context>``, ``<memory>``...) goes with its
    content, and so does an unclosed one to the end of the text; remaining tags,
    ANSI escapes, fenced code, quoted lines (``>``), a pasted MEMORY.md section (a
    memory heading and the bullets under it) and lines equal to a known fact
    (``known_keys``, compared with ``fact_key``) are removed; last, what the user pasted or
    quoted (``pasted.typed_part``: introduced pastes, reported speech, chat logs,
    documents, first-person quotations, long pastes).
    """
    from processors.extract.pasted import cut_at_orphan_close, typed_part

    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = cut_at_orphan_close(text)
    text = _COMMAND_ARGS.sub(lambda m: "\n" + m.group(1) + "\n", text)
    text = _drop_blocks(text)
    text = _TAG.sub(" ", text)
    text = _CODE_FENCE.sub("\n", text)
    known = set(known_keys)
    kept: list[str] = []
    in_memory = False
    for line in text.split("\n"):
        stripped = line.strip()
        if _MEMORY_HEADING.match(stripped):
            in_memory = True
            continue
        if in_memory and (not stripped or _BULLET.match(line)):
            continue
        in_memory = False
        if stripped.startswith(">") or (known and fact_key(stripped) in known):
            continue
        kept.append(line)
    return typed_part("\n".join(kept)).strip()


def without_injected(text: str, known_keys: Iterable[str] = ()) -> str:
    """``text`` without what a harness injected (its blocks, a pasted MEMORY.md section, lines equal to a known
    fact), everything else kept as written (tags, code): what a summary may quote without feeding memory back."""
    text = _drop_blocks(text.replace("\r\n", "\n").replace("\r", "\n"))
    known = set(known_keys)
    kept: list[str] = []
    in_memory = False
    for line in text.split("\n"):
        stripped = line.strip()
        if _MEMORY_HEADING.match(stripped):
            in_memory = True
            continue
        if in_memory and (not stripped or _BULLET.match(line)):
            continue
        in_memory = False
        if known and fact_key(stripped) in known:
            continue
        kept.append(line)
    return "\n".join(kept).strip()


# --- sentences ---------------------------------------------------------------------------

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_ABBREV = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|vs|etc|e\.g|i\.e|approx|No|Mt|Prof)\.$", re.IGNORECASE)
_SPLIT = re.compile(r"(?<=[.!?…][\"'”’)])\s+|(?<=[.!?…])\s+|(?<=[。！？；])|\n+|(?<=[!?])(?=[A-Z])")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds Chinese or Japanese characters."""
    return bool(_CJK.search(text))


def sentences(text: str) -> list[str]:
    """``text`` split into sentences: after ``. ! ? …`` and a space, after ``。！？；``, at newlines.

    A period after a known abbreviation ("Dr.", "e.g.") or inside a number ("3.11") does
    not end a sentence. Every sentence is stripped; empty ones are dropped.
    """
    out: list[str] = []
    for piece in _SPLIT.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if out and _ABBREV.search(out[-1]) and out[-1][-1:] == ".":
            out[-1] = out[-1] + " " + piece
        else:
            out.append(piece)
    return out


# --- tokens and similarity -----------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)
STOPWORDS = frozenset("""
a an the and or but if of to in on at by for with from as is are was were be been being am do does did
have has had i me my mine myself we our us ours you your yours he him his she her it its they them their
this that these those there here so too very just also really not no nor than then now up out about into
over after before again all any both each few more most other some such only own same can will would should
could might must may shall s t d ll m re ve o user user's project
""".split())


_CJK_SPLIT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]|[^\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")


def words(text: str) -> list[str]:
    """Lower-case words of ``text``; every CJK character is a word of its own."""
    out: list[str] = []
    for w in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK.search(w):
            out.extend(_CJK_SPLIT.findall(w))
        else:
            out.append(w.replace("’", "'"))
    return out


@functools.lru_cache(maxsize=8192)
def tokens(text: str) -> frozenset[str]:
    """The token set of near-duplicate detection: ``words`` of ``text``."""
    return frozenset(words(text))


def content_tokens(text: str) -> set[str]:
    """``tokens`` without stop words (and without possessive ``'s``)."""
    return {w.removesuffix("'s") for w in words(text) if w not in STOPWORDS and w.removesuffix("'s") not in STOPWORDS}


def jaccard(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    """|a & b| / |a | b| (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


#: Two facts are near-duplicates when the Jaccard similarity of their token sets is at least this.
NEAR_DUPLICATE = 0.8


def near_duplicate(a: str, b: str) -> bool:
    """The definition the evaluation reports: token-set Jaccard >= ``NEAR_DUPLICATE``."""
    return jaccard(tokens(a), tokens(b)) >= NEAR_DUPLICATE


_DATE_WORD = re.compile(r"^(?:\d{1,4}|january|february|march|april|may|june|july|august|september|october|november|"
                        r"december|monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|weekend|before|after|"
                        r"around|about|night|morning|afternoon|evening|spring|summer|fall|autumn|winter)$")


@functools.lru_cache(maxsize=8192)
def _undated(text: str) -> frozenset[str]:
    return frozenset(w for w in content_tokens(text) if not _DATE_WORD.match(w))


def similar(a: str, b: str) -> bool:
    """The stricter test the offline extractor uses before adding a fact.

    True when ``near_duplicate``, or when the content words (stop words and the words of
    a resolved date left out) overlap with Jaccard >= 0.6, or when one side's content
    words (at least 3) are nearly all (90%) in the other's.
    """
    if near_duplicate(a, b):
        return True
    ca, cb = _undated(a), _undated(b)
    if not ca or not cb:
        return ca == cb
    if jaccard(ca, cb) >= 0.6:
        return True
    small, big = (ca, cb) if len(ca) <= len(cb) else (cb, ca)
    return len(small) >= 3 and len(small & big) >= 0.9 * len(small)


def capitalized(text: str) -> str:
    """``text`` with a capital first letter, when that letter has one of its own ("ß" has none: "SS")."""
    first = text[:1].upper()
    return first + text[1:] if len(first) == 1 else text


def fact_key(text: str) -> str:
    """How a fact line is compared: no bullet, case-folded, single spaces, no trailing punctuation."""
    text = _BULLET.sub("", text.strip())
    return " ".join(text.casefold().split()).rstrip(".。!！;；,，")


# --- word boundaries ---------------------------------------------------------------------------

_LAST_WORD = re.compile(r"([^\W_]+)\W*$")


def ends_mid_word(fact: str, sources: Iterable[str], extra_words: Iterable[str] = ()) -> bool:
    """Whether ``fact`` looks cut mid-word: it ends in an ellipsis, or its last word is
    not a whole word of any source text (nor one of ``extra_words``, nor a number).

    CJK text has no word boundaries: a fact ending in CJK characters counts as whole.
    """
    stripped = fact.rstrip()
    if stripped.endswith(("…", "...")) and not any(s.rstrip().endswith(("…", "...")) for s in sources):
        return True
    m = _LAST_WORD.search(stripped)
    if not m:
        return False
    last = m.group(1)
    if last.isdigit() or _CJK.search(last):
        return False
    if last.casefold() in {w.casefold() for w in extra_words}:
        return False
    forms = {last}
    low = last.casefold()
    if low.endswith("ies") and len(low) > 4:
        forms.add(last[:-3] + "y")
    if low.endswith("es") and len(low) > 3:
        forms.add(last[:-2])
    if low.endswith("s") and len(low) > 2:
        forms.add(last[:-1])
    if low.endswith("'s"):
        forms.add(last[:-2])
    pattern = re.compile(rf"(?<![^\W_])(?:{'|'.join(re.escape(f) for f in forms)})(?![^\W_])", re.IGNORECASE)
    return not any(pattern.search(s) for s in sources)


def cut_at_word(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at the last space before it (whole words only);
    CJK text without spaces is cut after the last punctuation mark, else kept whole up to the limit."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    if space > 0:
        return head[:space].rstrip(" ,;:-–—")
    for mark in "，。；、,;":
        i = head.rfind(mark)
        if i > 0:
            return head[:i]
    return head
