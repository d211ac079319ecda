"""A rename: a thing's name changed, so the one fact naming that thing now names it anew.

"we renamed the repo to harbor-api", "renamed pebble to Cobblestone", "the package was renamed to sqlwren",
"renamed my github account, it's @loudfox_dev now", "Pocketgrove is now Grovekit",
"项目改名了，现在叫银河计划", "仓库已经改名为 sunray-web 了". The statement says *that* a name changed (a verb of
renaming, a closed class of the language: rename, 改名, 更名) and gives the new name; it names the thing by its old
name or by its noun ("the repo", 项目). The fact it changes is the one naming fact ("X is called / named N", "X's name
is N", X叫N) that holds the old name, or whose thing is that noun; two of them, or none, change nothing.

``target`` returns (the index of that fact, the new fact's text) or None; the caller writes the ``update``.
"""

from __future__ import annotations

import re

from processors.extract.text import STOPWORDS, has_cjk

#: A name as written: a word with the letters, digits and marks names have ("harbor-api", "acme/payments-core", "@fox").
_NAME = r"@?[A-Za-z0-9][\w@./+-]*[\w+]|@?[A-Za-z0-9]"
_RENAME_EN = [
    # "renamed the repo to X", "renamed our package as X", "renamed pebble to X"
    re.compile(rf"\brenamed\s+(?:(?:the|our|my)\s+(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)|(?P<old>{_NAME}))\s+"
               rf"(?:to|as)\s+(?P<new>{_NAME})", re.IGNORECASE),
    # "the repo was / got / has been renamed (to) X", "pebble is now renamed X"
    re.compile(rf"\b(?:the|our|my)\s+(?P<thing>[a-z][\w-]*)\s+(?:was|got|has\s+been|is\s+now|is)\s+renamed\s+(?:to\s+|as\s+)?"
               rf"(?P<new>{_NAME})", re.IGNORECASE),
    # "I renamed my github account, it's @loudfox_dev now": the new name in the clause after the rename
    re.compile(rf"\brenamed\s+(?:the|our|my)\s+(?P<thing>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*[,;:-]+\s*(?:it's|it\s+is|"
               rf"the\s+new\s+(?:one|name)\s+is)\s+(?:now\s+)?(?P<new>{_NAME})", re.IGNORECASE),
    # "Pocketgrove is now Grovekit": an old name, "is now (called)", a new name; only a naming fact holding the old
    # name as written is changed (``target``), and the new one has a name's shape
    re.compile(r"^(?:(?:so|and|btw|fyi|update)\s*[,:]?\s+)?(?P<old>(?-i:[A-Z])[\w.+-]*[\w+])\s+is\s+now\s+(?:called\s+|named\s+)?"
               r"(?P<new>(?-i:[A-Z@])[\w@.+-]*[\w+])", re.IGNORECASE),
]
_RENAME_ZH = [
    # 项目改名了，现在叫银河计划 / 仓库已经改名为 sunray-web 了 / 把项目更名为 X
    re.compile(r"(?P<thing>[\u4e00-\u9fff]{1,4}?)(?:已经|也)?(?:改名|更名|改叫)(?:了)?(?:为|成|叫)?\s*"
               r"(?P<new>[A-Za-z0-9][\w./+-]*[\w+]|[\u4e00-\u9fff]{2,8}?)?\s*(?:了|[，,。]|$)"),
]
_ZH_NOW_CALLED = re.compile(r"(?:现在|以后|今后)(?:就)?叫\s*(?P<new>[A-Za-z0-9][\w./+-]*[\w+]|[\u4e00-\u9fff]{2,8}?)(?:了|[，,。！!]|$)")
#: A fact that names a thing: the name is what follows "called", "named", "name is", 叫 / 名为, to the fact's end.
_NAMING_EN = re.compile(rf"\b(?:is\s+called|is\s+named|named|called|name\s+is|is)\s+(?P<v>{_NAME})"
                        r"(?=\s*(?:\(as\s+of[^)]*\))?\s*[.]?\s*$)", re.IGNORECASE)
_NAMING_ZH = re.compile(r"(?:叫|名为|名字是|改名为)\s*(?P<v>[A-Za-z0-9][\w./+-]*[\w+]|[\u4e00-\u9fff]{1,8}?)\s*[。.]?$")
#: People: a rename of one's own name is a name change, the slot grammar's (``slots``), never this module's.
_PERSONAL = re.compile(r"\b(?:user's\s+(?:name|surname|last\s+name|first\s+name|nickname)|user\s+is\s+called|"
                       r"call(?:s|ed)?\s+the\s+user)\b|用户叫|叫我|我叫", re.IGNORECASE)


def renamed(s: str) -> tuple[str, str, str] | None:
    """(the thing's noun or "", its old name or "", its new name) of a rename ``s`` states, or None."""
    if has_cjk(s):
        for pat in _RENAME_ZH:
            m = pat.search(s)
            if m:
                new = m.group("new") or ""
                if not new:
                    later = _ZH_NOW_CALLED.search(s, m.end())
                    new = later.group("new") if later else ""
                thing = re.sub(r"^(?:我们的?|我的|团队的?|这个|那个|把)", "", m.group("thing") or "")
                if new:
                    return thing, "", new
        return None
    for pat in _RENAME_EN:
        m = pat.search(s)
        if m:
            new = m.group("new").rstrip(".")
            old = (m.groupdict().get("old") or "").rstrip(".")
            if new.casefold() in STOPWORDS or old.casefold() in ("it", "them", "this", "that"):
                return None
            return (m.groupdict().get("thing") or "").casefold(), old, new
    return None


def name_of(fact: str) -> str | None:
    """The name a naming fact gives its thing ("The project's repo is called tidepool-api." -> "tidepool-api")."""
    if _PERSONAL.search(fact):
        return None
    m = (_NAMING_ZH if has_cjk(fact) else _NAMING_EN).search(fact.strip())
    return m.group("v") if m else None


def _about(fact: str, thing: str) -> bool:
    """Whether ``fact`` is about the thing ``thing`` names (its noun as a word, or in Chinese as a substring)."""
    if not thing:
        return False
    if has_cjk(thing):
        return thing in fact
    head, *mods = reversed(thing.split())  # the noun, else a word of its own before it ("github" of "github account")
    return any(re.search(rf"\b{re.escape(w)}s?\b", fact, re.IGNORECASE) is not None
               for w in [head, *[m for m in mods if m not in STOPWORDS]])


def target(s: str, facts: list[str]) -> tuple[int, str] | None:
    """(the index in ``facts`` of the one naming fact the rename ``s`` changes, that fact with its new name)."""
    said = renamed(s)
    if said is None:
        return None
    thing, old, new = said
    named = [(i, v) for i, f in enumerate(facts) if (v := name_of(f)) and has_cjk(f) == has_cjk(s)]
    if any(v.casefold() == new.casefold() for _i, v in named):
        return None  # the new name is known already: the same rename read again
    hits = [(i, v) for i, v in named if old and v.casefold() == old.casefold()] or \
        [(i, v) for i, v in named if not old and _about(facts[i], thing)]
    if len(hits) != 1:
        return None
    i, v = hits[0]
    fact = facts[i]
    at = fact.rfind(v)
    renamed_fact = fact[:at] + new + fact[at + len(v):]
    return i, re.sub(r"\s*\((?:as\s+of|by)\s+[^)]*\)", "", renamed_fact)  # the old name's date is not the new one's
