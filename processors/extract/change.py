"""The general change path: which one known fact a user's own statement of change updates.

The slot grammar (``slots``) and the frame match (``frames``) find the fact a change replaces when the statement
words its slot the way the fact does. This module is the last resort after them, for the wordings they do not
read ("started at Stripe on monday", "everything runs in GitHub Actions now", "I've been fully on Neovim for a
month"). It only answers a statement that carries a **change marker** (``marked``: a closed class of the
language: aspect and adverbs of change, verbs of moving, switching, joining and leaving; 现在/搬到/换成/不再 ...),
and finds its target in four steps, each of which must name exactly one fact (two candidates => no change,
never a guess):

1. an **old value** the statement names ("from X to Y", "left X", "no more X", "killed the X box"): the one
   fact holding it;
2. a tool named again with another **version** number ("Django 3.2" / "upgraded django to 4.2"): that tool's fact;
3. **shared frame words** (the same predicate: "live in", "work at", "use ... for", "call me"): the one fact
   sharing the most content words, once values, markers and light verbs are left out;
4. a **predicate family** (``families``: home, employer, role, name, version of a tool, tool for a purpose,
   schedule, preference, diet) that exactly one fact has;
5. an **own slot** (``own_slot``: home, occupation, surname), which a person fills with one value at a time: a
   first-person statement of it replaces the one fact filling it even when its value is no name ("I'm retired now").

``target`` returns the index of that fact or None; the caller (``offline``) emits the update through the ops
protocol as every correction does. It never picks a fact that the statement merely restates (same key), so
the same statement read twice changes nothing the second time.
"""

from __future__ import annotations

import re
from functools import lru_cache

from processors.extract import frames
from processors.extract import slots as sl
from processors.extract.text import STOPWORDS, content_tokens, fact_key, has_cjk

#: Signs that a statement reports a change of state: adverbs of the present against the past, aspect ("been ...
#: since", "ended up", "finally", "officially"), and verbs whose meaning is a change of place, membership or tool.
_MARKER_EN = re.compile(
    r"\b(?:now|nowadays|these\s+days|from\s+now\s+on|going\s+forward|no\s+longer|any\s*more|any\s+longer|instead|"
    r"as\s+of|ended\s+up|no\s+more|(?:from|starting)\s+(?:tomorrow|today|tonight|next\s+(?:week|month|year)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)|been\s+(?:[a-z]+\s+){1,4}?since|"
    r"(?:moved|relocated|switched|migrated|upgraded|downgraded|bumped|changed|replaced|left|quit|joined|promoted|"
    r"renamed|rewrote|rewritten|dropped|ditched|killed|retired|uninstalled|abandoned|gave\s+up|got\s+acquired|"
    r"shut\s+down|decommissioned)|(?:not|never)\s+going\s+back|"
    r"started\s+(?:at|using|on|with)|moved\s+(?:to|off|from|over)|switched\s+(?:to|over|from)|"
    # a time moved: "pushed to 10:15", "postponed", "brought forward to monday" (not "pushed to main")
    r"rescheduled|postponed|(?:pushed|moved|brought)\s+(?:back\s+|up\s+|forward\s+|out\s+)?to\s+(?=\d|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|noon|midday))\b",
    re.IGNORECASE)
#: Words that make a statement a thought, a wish or an attempt, not a report that something is now so.
_HEDGE = re.compile(r"\b(?:think|thinking|guess|wonder|wondering|trying|tried|meaning|hoping|hope|looking\s+for|"
                    r"looking\s+forward|not\s+sure|considering|I'll|I\s+will|would|could|maybe|probably|wish|I'd\s+(?:love|like))\b",
                    re.IGNORECASE)
#: A statement of change is short: chatty prose ("I've been trying to incorporate more walking ...") changes nothing.
MAX_WORDS = 22
_MARKER_ZH = re.compile(r"现在|如今|目前|最近|以后|今后|从此|不再|已经不|已经|不用了|不.{0,3}了|搬|换成|换到|换了|改成|改用|改为|"
                        r"改做|改回|换回|改到|换到|挪到|调到|推迟到|提前到|跳槽|离职|辞职|退休|入职|转岗|升到|升级|升为|迁移|迁到|重构成|其实")


#: Signs that a statement tells the past as the past ("back in 2019 it was still on Ruby 2.6", "at the time we used
#: Jenkins", 当年): without a change marker, it says what held then, not what holds now.
_HISTORY = re.compile(r"\b(?:back\s+(?:in|then|when)|at\s+the\s+time|in\s+those\s+days|before\s+that|(?:was|were)\s+still|"
                      r"used\s+to)\b|当年|那时候?|那会儿", re.IGNORECASE)


def told_as_past(s: str) -> bool:
    """Whether ``s`` tells a past state as the past, with no sign of change (see ``_HISTORY``): it replaces nothing."""
    return not marked(s) and bool(_HISTORY.search(s))


def marked(s: str) -> bool:
    """Whether ``s`` carries a sign that a state changed (see ``_MARKER_EN``)."""
    return bool(_MARKER_ZH.search(s) if has_cjk(s) else _MARKER_EN.search(s))


#: Predicate families: the words of the language that say which slot a statement is about. A family is shared by
#: a statement and a fact when both have one of its words; "version" is keyed by the tool it is a version of.
_FAMILIES: dict[str, re.Pattern[str]] = {
    "home": re.compile(r"\b(?:(?:live[sd]?|living)\s+(?:in|at|on|near|down|up|out)|based\s+(?:in|at|out)|home\s+(?:base|town|is)|"
                       r"moved\s+(?:[a-z]+\s+){1,4}?to\s+(?=(?-i:[A-Z]))|"
                       r"hometown|home\s+address|address\s+is\s+in|moved\s+to|relocated|settled\s+in)\b|住|搬|家在|老家",
                       re.IGNORECASE),
    "employer": re.compile(r"\b(?:works?\s+(?:at|for)|working\s+(?:at|for)|employed|employer|company|job|joined|"
                           r"started\s+at|contracting|freelanc\w*|self-employed|hired)\b|工作|公司|上班|跳槽|入职|离职|在.{2,6}做",
                           re.IGNORECASE),
    "role": re.compile(r"\b(?:promoted|title|role|position|engineer|developer|analyst|manager|designer|lead|"
                       r"senior|junior|intern|teacher|teaching|consultant|architect|scientist)\b|岗|经理|负责人|工程师|"
                       r"开发|设计师|分析师", re.IGNORECASE),
    "name": re.compile(r"\b(?:call(?:ing)?\s+me|called|(?<!last\s)(?<!family\s)(?<!maiden\s)name|go\s+by|goes\s+by|"
                       r"nickname|handle|address\s+me)\b|叫我|名字|英文名", re.IGNORECASE),
    # the one surname a person has at a time: not the name they are called by ("call me Maggie")
    "surname": re.compile(r"\b(?:surname|last\s+name|family\s+name|maiden\s+name)\b|姓", re.IGNORECASE),
    # what one does for a living, whatever the wording: working as / at, a job, freelancing, retiring, teaching at
    # a place, "doing platform work"; 工作, 上班, 退休, 当/做 a trade
    "occupation": re.compile(r"\b(?:works?|working|worked)\s+(?:as|at|for)\b|\b(?:job|profession|occupation|career|"
                             r"employed|employer|employment|unemployed|self-employed|freelanc\w*|retired|retirement)\b|"
                             r"\bteach(?:es|ing)?\s+(?:[a-z]+\s+){0,2}?(?:at|in)\s+(?-i:[A-Z])|"
                             r"\bdoing\s+(?:[a-z]+\s+){0,2}?work\b|"
                             r"工作|上班|退休|职业|辞职|离职|入职|跳槽|在.{1,8}[做当]|[当是做]一名",  # 在银行当柜员, 是一名老师
                             re.IGNORECASE),
    "schedule": re.compile(r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekly|biweekly|fortnightly|"
                           r"every\s+(?:other\s+)?(?:week|two\s+weeks|month)|\d{1,2}(?::\d\d)?\s*(?:am|pm)|cron|standup|"
                           r"cadence)\b|周[一二三四五六日天]|星期|每[周月]|[一二三四五六七八九十\d]点", re.IGNORECASE),
    "prefer": re.compile(r"\b(?:prefer\w*|rather|favou?rite|indent\w*|spelling|tabs|spaces|(?:a|an)\s+[a-z]+\s+person)\b|"
                         r"喜欢|偏好|主题|缩进", re.IGNORECASE),
    "diet": re.compile(r"\b(?:vegetarian|vegan|pescatarian|eat(?:s|ing)?\s+meat|gluten|dairy|coffee|tea)\b|吃素|素食",
                       re.IGNORECASE),
    # tools by purpose: the kinds of tool a project or a person picks one of at a time
    "editor": re.compile(r"\b(?:editor|IDE|codes?\s+in|coding\s+in)\b|编辑器|写代码", re.IGNORECASE),
    "ci": re.compile(r"\b(?:CI|pipelines?|builds?\s+run)\b|持续集成", re.IGNORECASE),
    "database": re.compile(r"\b(?:database|db|stores?\s+(?:everything|data)|storage)\b|数据库", re.IGNORECASE),
    "hosting": re.compile(r"\b(?:host(?:s|ed|ing)?|deploy(?:s|ed|ing)?|cloud|servers?|infra\w*)\b|部署|云", re.IGNORECASE),
    "packages": re.compile(r"\b(?:package\s+manager|lockfile|npm|pnpm|yarn)\b|包管理", re.IGNORECASE),
    "tests": re.compile(r"\b(?:tests?|testing|test\s+runner)\b|测试", re.IGNORECASE),
    "queue": re.compile(r"\b(?:queue|jobs?\s+go|background\s+jobs|message\s+broker)\b|队列", re.IGNORECASE),
    "tracker": re.compile(r"\b(?:tickets?|tracked|tracker|issues\s+in|tasks?)\b|任务|工单", re.IGNORECASE),
    "chat": re.compile(r"\b(?:chat\s+tool|messaging|slack)\b|沟通|聊天|办公软件", re.IGNORECASE),
    "phone": re.compile(r"\b(?:phone|android|iphone)\b|手机", re.IGNORECASE),
}
_TOOL_VERSION = re.compile(r"(?P<t>[A-Za-z][\w+-]*)\s*(?:(?:to|version)\s+)?v?(?P<v>\d+(?:\.\d+)*)\b"
                           r"(?!\s*(?:-|%|minutes?|hours?|days?|weeks?|months?|years?|times?|am|pm|pounds?|kg|km|miles?)\b)")
_NOT_TOOL = re.compile(r"^(?:january|february|march|april|may|june|july|august|september|october|november|december|"
                       r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|top|over|under|about|around|at|to|by|on|in|of|for)$",
                       re.IGNORECASE)


#: The subject right before a verb of living or moving that is no person: an organisation or a thing of software
#: ("the team", "our repo", "everything", "it"), whose "moved to X" is a change of tool, not of home.
_THING_SUBJECT = re.compile(r"(?:\b(?:the|our|my|their)\s+(?:[a-z]+\s+)?(?:team|project|company|org|organi[sz]ation|"
                            r"repo|app|service|codebase|code|site|stack)|\beverything|\bit|\bthey\s+all)"
                            r"\s+(?:has\s+|have\s+|just\s+|finally\s+|all\s+|now\s+)*$", re.IGNORECASE)


@lru_cache(maxsize=4096)
def families(text: str) -> frozenset[str]:
    """The predicate families ``text`` speaks of (see ``_FAMILIES``), plus ``version:<tool>`` for a tool's version.

    Cached: ``explain`` asks it of the statement and of every known fact at each of its steps."""
    out = {name for name, pat in _FAMILIES.items() if pat.search(text)}
    if "home" in out and not any(not _THING_SUBJECT.search(text[:m.start()]) for m in _FAMILIES["home"].finditer(text)):
        out.discard("home")  # "the team moved to Mattermost", "everything lives in Linear": no one's home
    for m in _TOOL_VERSION.finditer(text):
        tool, shaped = m.group("t"), "." in m.group("v") or m.group("t")[:1].isupper()  # "Django 3.2", "React 17"
        if shaped and not _NOT_TOOL.match(tool) and tool.casefold() not in STOPWORDS and len(tool) >= 2:
            out.add("version:" + tool.casefold())
    return frozenset(out)


_LIGHT = frozenset("use uses used using is are be been has have had go goes went run runs running do does get got "
                   "user team project now also just still really".split())


def _frame_words(text: str) -> set[str]:
    """Lower-case content words that are no value, marker or light verb: what a predicate is made of."""
    words = re.findall(r"\b[a-z][a-z'-]{2,}\b", text)  # capitalised words are values or sentence starts
    return {sl.stem(w) for w in words if w not in STOPWORDS and w not in _LIGHT and not _MARKER_EN.fullmatch(w)} \
        & {sl.stem(w) for w in content_tokens(text)}


def _named_old(s: str, facts: list[str]) -> list[int]:
    """Facts holding a value ``s`` names as gone, or (when ``s`` names one) a name of theirs ``s`` repeats."""
    gone = sl.gone_values(s)
    hits = [i for i, f in enumerate(facts) if any(sl.holds_value(f, g) for g in gone)]
    if hits:
        return hits
    return [i for i, f in enumerate(facts) if repeated_names(s, f)]


def repeated_names(s: str, fact: str) -> list[str]:
    """The names of ``fact`` that ``s`` repeats in any case ("we finally killed the jenkins box"), when ``s`` also
    names a value ``fact`` does not hold ("Firefox is slow these days" names the old value and no other)."""
    if not new_name(s, fact):
        return []
    if not (families(s) & families(fact) or (has_cjk(s) and marked(s))):
        return []  # a name said again in other talk ("I've been using Ibotta for a while now ...") changes nothing
    low = s.casefold()
    caps = _names(fact)
    versioned = {f.split(":", 1)[1] for f in families(s) & families(fact) if f.startswith("version:")}
    return sorted(c for c in caps if re.search(rf"(?<![\w]){re.escape(c.casefold())}(?![\w])", low)
                  and c.casefold() not in versioned  # "Django 3.2" / "django to 4.2": the tool stays
                  and not _in_new_value(s, c, fact))


def _in_new_value(s: str, name: str, fact: str) -> bool:
    """Whether ``name`` follows, in ``s``, a value ``fact`` does not hold ("to 4am UTC" of "runs at 2am UTC"): a unit or
    a word of the new value, not the old value named again."""
    m = re.search(rf"(?P<before>[\w.:+-]+)\s+{re.escape(name)}(?!\w)", s, re.IGNORECASE)
    before = m.group("before") if m else ""
    return bool(before) and (any(c.isdigit() for c in before) or before[:1].isupper()) \
        and not re.search(rf"(?<!\w){re.escape(before)}(?!\w)", fact, re.IGNORECASE)


def new_name(s: str, fact: str) -> bool:
    """Whether ``s`` names a value of a name's shape (a capitalised word, a number) that ``fact`` does not hold."""
    low = fact.casefold()
    for w in re.findall(r"(?<![\w.])(?:[A-Z][\w.+-]*|[a-z]+[A-Z][\w.+-]*|\d[\w.]*)", s):  # "Kafka", "iPhone", "4.2"
        w = w.rstrip(".")
        if w == "I" or w.casefold() in STOPWORDS or _MARKER_EN.fullmatch(w):
            continue
        if not re.search(rf"(?<!\w){re.escape(w.casefold())}(?!\w)", low):
            return True
    return False


def said_again(s: str, fact: str) -> bool:
    """Whether ``s`` states ``fact`` again (its words, or in Chinese its text past the subject, are all in ``s``):
    a fact the statement repeats still holds and is never the one it replaces."""
    if has_cjk(fact):
        body = re.sub(r"^(?:用户|团队)|[。.]$", "", fact.strip())
        return len(body) >= 2 and body in s
    own = {sl.stem(w) for w in content_tokens(fact)} - {"user", "team", "project"}
    if own and own == {sl.stem(w) for w in content_tokens(s)} - {"user", "team", "project"}:
        return True  # the whole statement is the fact, clauses joined ("moved to Madrid with my ex, Pablo, and ...")
    clauses = [c for c in re.split(r"[,;]\s*|\s[-–—]+\s|\s+but\s+", s) if c.strip()]  # one clause says it again
    return bool(own) and any(own <= {sl.stem(w) for w in content_tokens(c)} for c in clauses)


def _new_value(s: str, fact: str) -> bool:
    """Whether ``s`` names a value of a name's shape ``fact`` lacks while ``fact`` holds one of its own (in Chinese, any
    word of its own beside the fact's): what a change of value looks like, rather than more talk about a topic."""
    if has_cjk(s):
        return True
    for fam in families(s) & families(fact) & _VALUE_FAMILIES:  # "pescatarian" / "vegetarian", "pnpm" / "npm"
        mine, theirs = _family_words(s, fam), _family_words(fact, fam)
        if mine - theirs and theirs and (theirs - mine or _SWITCHED.search(s)):
            return True  # "switched the monorepo to pnpm, npm was too slow": the old value named beside the new
    own = _names(fact) or re.findall(r"\d", fact)
    return bool(own) and new_name(s, fact)


#: A verb of switching: a statement with it names a new value even when it names the old one too.
_SWITCHED = re.compile(r"\b(?:switched|moved|migrated|changed|replaced|swapped)\b", re.IGNORECASE)
#: Families whose own words are the values ("vegetarian", "tabs", "npm"), not only the frame ("lives in").
_VALUE_FAMILIES = frozenset({"diet", "prefer", "packages", "phone", "role"})  # "team lead" / "engineering manager"


#: Words of a value family that name the slot, not a value of it ("indentation" of "likes tabs for indentation").
_SLOT_WORD = re.compile(r"prefer\w*|rather|favou?rite|indent\w*|spelling|package\s+manager|lockfile|偏好|喜欢|主题|缩进", re.IGNORECASE)


def _family_words(text: str, fam: str) -> set[str]:
    return {m.group(0).casefold() for m in _FAMILIES[fam].finditer(text)} - {"prefer", "prefers", "preferred", "rather"}


_OWNERS = frozenset({"user's", "team's", "project's"})


def _modifiers_apart(s: str, fact: str) -> bool:
    """Whether a word both share carries its own modifier on each side ("unit tests" / "browser tests"): two slots
    of one kind, not one slot changed."""
    def before(text: str) -> dict[str, str]:
        out = {}
        for part in re.split(r"[,;:!?()]|\.(?!\w)", text.casefold()):  # "to pnpm, npm was slow": no modifier across a comma
            ws = re.findall(r"[A-Za-z][\w'-]*", part)
            out.update({sl.stem(b): a for a, b in zip(ws, ws[1:], strict=False) if a not in STOPWORDS
                        and b not in STOPWORDS and a not in _OWNERS})  # "the project's team": the subject, no modifier
        return out
    mine, theirs = before(s), before(fact)
    low_s, low_f = s.casefold(), fact.casefold()
    return any(mine[w] != theirs[w] and not _MARKER_EN.fullmatch(mine[w]) and not _MARKER_EN.fullmatch(theirs[w])
               and mine[w] not in low_f and theirs[w] not in low_s  # "Django 3.2 LTS" / "django to 4.2 (the newer LTS)"
               and not _value_modifiers(mine[w], theirs[w])
               for w in mine.keys() & theirs.keys())


def _value_modifiers(a: str, b: str) -> bool:
    """Whether two modifiers are both words of one value family ("senior" / "junior" designer): the value that
    changed, not two slots of one kind."""
    return any(_FAMILIES[fam].fullmatch(a) and _FAMILIES[fam].fullmatch(b) for fam in _VALUE_FAMILIES)


#: A word of a name's shape: a capital, then letters, digits, "+" or "-" (not ending on "-"): "Kafka", "C++", "Fly".
_NAME_SHAPE = re.compile(r"(?<![\w.])[A-Z][\w+-]*[\w+]")


def other_version(s: str, facts: list[str]) -> bool:
    """Whether ``s`` names a known fact's tool with another version number, and not the fact's own ("React 18
    everywhere" after "uses React 17"): a change said without a word of change."""
    mine = {f for f in families(s) if f.startswith("version:")}
    return any(mine & families(f) and not set(re.findall(r"\d+(?:\.\d+)*", f)) & set(re.findall(r"\d+(?:\.\d+)*", s))
               for f in facts)


_CLAUSES = re.compile(r"\s*(?:[,;，；。!！?？]|\s[-–—]+\s)\s*")


def clauses(s: str) -> list[str]:
    """The clauses of ``s``, cut at commas, semicolons, stops and dashes between words."""
    return [p for p in _CLAUSES.split(s) if p and p.strip()]


def _adds(s: str) -> bool:
    """Whether ``s`` adds a fact rather than replacing one: the clauses that carry the change marker are additive
    ("上个月搬到杭州了，房子也退租了": the move is not what 也 adds to). A statement with no marked clause (a
    version said again) is read whole."""
    marked_parts = [p for p in _CLAUSES.split(s) if p and marked(p)]
    return any(frames.additive(p) for p in marked_parts) if marked_parts else frames.additive(s)


def _only(hits: list[int]) -> int | None:
    return hits[0] if len(set(hits)) == 1 else None


def target(s: str, facts: list[str]) -> int | None:
    """The index in ``facts`` (known facts of the same subject) of the one fact the marked statement ``s`` updates,
    or None (no marker, a hypothetical, an addition, another person, or no single fact)."""
    return explain(s, facts)[0]


def explain(s: str, facts: list[str]) -> tuple[int | None, str]:
    """``target`` with the step that found it ("old value", "version", "frame", "family") or why none did."""
    if told_as_past(s):
        return None, "history: a past state told as such, no change"  # "Back in 2019 it was still on Ruby 2.6"
    if not (marked(s) or other_version(s, facts)) or frames.irrealis(s) or frames.one_off(s) or (_adds(s) and not sl.gone_values(s)):
        return None, "no change marker, or a hypothetical or an addition"
    if not has_cjk(s) and (_HEDGE.search(s) or len(s.split()) > MAX_WORDS):
        return None, "a hedge or chatty prose"
    keyed = fact_key(s)
    theirs = [i for i, f in enumerate(facts) if not frames.other_people(s, f) and fact_key(f) != keyed and not said_again(s, f)]
    liked = preference_object(s)
    if liked:  # "i like light mode better now" after "prefers dark mode": one object, its modifier changed
        same = [i for i in theirs if (o := preference_object(facts[i])) and o[1] == liked[1] and o[0] != liked[0]]
        if same:
            return _only(same), "preference"
    turned = polarity(s)
    if turned:  # "I love cilantro now" after "hates cilantro": one object, the feeling turned over
        flipped = [i for i in theirs if (p := polarity(facts[i])) and p[0] == turned[0] and p[1] != turned[1]]
        if flipped:
            return _only(flipped), "preference"
    allowed = [i for i in theirs if not _modifiers_apart(s, facts[i])]
    named = [i for i in _named_old(s, facts) if i in allowed]
    if named:
        return _only(named), "old value"
    versioned = [i for i in allowed if any(f.startswith("version:") for f in families(s) & families(facts[i]))]
    if versioned:  # a tool's version named again with another number: that tool's fact
        return _only(versioned), "version"
    allowed = [i for i in allowed if _new_value(s, facts[i])]  # the steps below need a value that replaces one
    mine = _frame_words(s)
    if mine and not has_cjk(s):
        scored = sorted(((len(mine & _frame_words(facts[i])), i) for i in allowed), reverse=True)
        if scored and scored[0][0] >= 1 and (len(scored) == 1 or scored[1][0] < scored[0][0]) \
                and families(facts[scored[0][1]]) & families(s):
            return scored[0][1], "frame"
    fam = families(s)
    hit = _one_value([i for i in allowed if fam & families(facts[i])], facts) if fam else None
    if hit is None:
        own = own_slot(s, [i for i in theirs if not _modifiers_apart(s, facts[i])], facts)
        if own is not None:
            return own, "own slot"
    if hit is None and not fam & _PERSONAL:
        return _only_tool(s, [i for i in allowed if not (fam and fam & families(facts[i]))], facts), "tool"
    return hit, "family"


#: The slots a person fills with one value at a time: where they live, what they do for a living, their surname.
_SINGLE = frozenset({"home", "occupation", "surname"})
_SINGULAR = re.compile(r"\b(?:I|I'm|I've|my|me)\b|我(?!们)")
_TEAM_FACT = re.compile(r"^(?:the\s+(?:(?:team|project)'s\s+)?(?:team|project)\b|团队|项目)", re.IGNORECASE)
#: Words of an occupation that are a value in themselves ("retired", "freelancing as a web designer", "a new job"),
#: unlike "working at the library", which may say where one works today.
_OCCUPATION_STATE = re.compile(r"\b(?:as\s+an?|job|profession|occupation|career|unemployed|self-employed|freelanc\w*|"
                               r"retired|retirement|doing\s+(?:[a-z]+\s+){0,2}?work)\b|[\u3400-\u9fff]", re.IGNORECASE)


def own_slot(s: str, hits: list[int], facts: list[str]) -> int | None:
    """The one fact of ``hits`` filling the single-valued slot of the user (``_SINGLE``) that ``s``, a statement in
    the first person singular, fills anew ("As of this month I'm retired" after "teaches chemistry at Ridgemont
    High", "my surname is Adeyemi now" after "last name is Okonkwo"); None for a team's fact, two candidates, or a
    statement naming no value of its own (a name, or an occupation's own words: see ``_OCCUPATION_STATE``)."""
    mine = families(s) & _SINGLE
    if not mine or not _SINGULAR.search(s) or _adds(s):  # "I'm also retired, no more ...": an addition all the same
        return None
    cands = [i for i in hits if families(facts[i]) & mine and not _TEAM_FACT.match(facts[i])]
    if len(set(cands)) != 1:
        return None
    i = cands[0]
    shared = families(facts[i]) & mine
    if not (new_name(s, facts[i]) or has_cjk(s) or ("occupation" in shared and _OCCUPATION_STATE.search(s))):
        return None
    return i


#: A preference and its object: "(the user) prefers / likes / loves / hates <object>", the object ending where the
#: sentence says more than what is liked (a comparison, a reason, a time, a clause).
_LIKED = re.compile(
    r"\b(?:prefer|prefers|like|likes|love|loves|enjoy|enjoys|hate|hates|dislike|dislikes)\s+"
    r"(?P<o>(?:[a-z][\w-]*\s+){0,3}?[a-z][\w-]*)(?=\s*(?:$|[.,;:!?()]|\s(?:better|more|most|best|over|than|instead|now|"
    r"these|nowadays|anymore|again|for|because|since|when|while|but|and|so|as|in|on|at|from|to|with)\b))",
    re.IGNORECASE)
_NOT_OBJECT = frozenset("it them this that these those one ones the a an my our your his her their to".split())


def preference_clause(s: str) -> str:
    """The clause of ``s`` that states its preference ("weirdly i like light mode better now" of "..., easier on my
    eyes outdoors"), or ``s``."""
    return next((p for p in _CLAUSES.split(s) if p and (preference_object(p) or polarity(p))), s)


#: A feeling about a thing, by its sign: the verbs of liking (+) and of disliking (-), a closed class of the language.
_FEELING = re.compile(
    r"\b(?:(?P<pos>like|likes|love|loves|enjoy|enjoys|adore|adores)|(?P<neg>hate|hates|dislike|dislikes|detest|detests|"
    r"can't\s+stand|cannot\s+stand|can't\s+bear))\s+(?P<o>(?:[a-z][\w-]*\s+){0,2}?[a-z][\w-]*)"
    r"(?=\s*(?:$|[.,;:!?()]|\s(?:now|these|nowadays|anymore|again|actually|too|so|but|and|because)\b))", re.IGNORECASE)


def polarity(text: str) -> tuple[str, int] | None:
    """(the object's last word, stemmed; +1 or -1) of the one feeling ``text`` states about a thing ("hates
    cilantro" -> ("cilantro", -1)), or None: none, two, a negated one ("don't like"), or an object that is a pronoun
    or a verb's complement ("love to run")."""
    found = list(_FEELING.finditer(text))
    if len(found) != 1:
        return None
    m = found[0]
    words = m.group("o").casefold().split()
    if words[0] in _NOT_OBJECT or words[-1] in STOPWORDS or any(w in _NOT_OBJECT for w in words) \
            or re.search(r"(?:n't|\bnot|\bnever|\bno\s+longer)\s+(?:\w+\s+)?$", text[:m.start()], re.IGNORECASE):
        return None
    return sl.stem(words[-1]), 1 if m.group("pos") else -1


def preference_object(text: str) -> tuple[str, str] | None:
    """(the object, its head word) of the one preference ``text`` states ("prefers dark mode" -> ("dark mode",
    "mode")), or None: no preference, two of them, or an object that is a pronoun, a verb's complement ("like to
    run") or a single word (no modifier that could change)."""
    found = [m.group("o").casefold() for m in _LIKED.finditer(text)]
    if len(found) != 1:
        return None
    words = found[0].split()
    if len(words) < 2 or words[0] in _NOT_OBJECT or words[-1] in STOPWORDS or any(w in _NOT_OBJECT for w in words):
        return None
    return found[0], sl.stem(words[-1])


#: The families of who the user is: a statement naming a new tool never replaces one of these.
_PERSONAL = frozenset({"home", "employer", "role", "name", "surname", "occupation"})
#: Tool-by-purpose families (see ``_FAMILIES``): a fact of one of them holds a tool.
_TOOL_FAMILIES = frozenset({"editor", "ci", "database", "hosting", "packages", "tests", "queue", "tracker", "chat", "phone"})
#: A statement that names only the tool it is on now, with no word of what the tool is for ("these days it's
#: WezTerm for me", "we're on CockroachDB now", "been using Zed full time", "最近换成 Neovim 了").
_TOOL_NOW = re.compile(r"\b(?:using|on|switched\s+(?:over\s+)?to|moved\s+(?:over\s+)?to|it's|it\s+is)\s+"
                       r"(?P<v>(?-i:[A-Z][\w.+-]*[\w+]|[a-z]+[A-Z][\w.+-]*))", re.IGNORECASE)
_ZH_TOOL_NOW = re.compile(r"(?:换成|换到|改用|切换到|换了|用上了?)\s*(?P<v>[A-Za-z][\w.+-]*|[\u4e00-\u9fff]{2,6}?(?=了|[，。,！!]|$))")


def _tool_fact(fact: str) -> bool:
    """Whether ``fact`` says which tool the user or a project uses (a use slot, a tool family, or "my X is <Name>")."""
    if families(fact) & _TOOL_FAMILIES:
        return True
    if _TEAM_FACT.match(fact) and _TOOL_OBJECT.search(fact) and len(_names(fact)) == 1:
        return True  # "The project's team chats on Slack.": a team's doing, through the one thing it names
    return any(x.kind == "use" or (x.kind == "has" and re.fullmatch(r"[A-Z][\w.+-]*|[a-z]+[A-Z][\w.+-]*", x.value.split()[0] if x.value else ""))
               for x in sl.slots(fact))


#: A team's fact naming its one thing after a preposition of means ("chats on Slack", "tracks bugs in Jira").
_TOOL_OBJECT = re.compile(r"\b(?:on|in|via|through|with|using|to)\s+(?-i:[A-Z])", re.IGNORECASE)


def _only_tool(s: str, hits: list[int], facts: list[str]) -> int | None:
    """The one tool fact of ``hits`` that a statement naming only its new tool (``_TOOL_NOW``) replaces: the tool it
    names must be held by no known fact, and exactly one candidate may be a tool fact (two => no change)."""
    m = (_ZH_TOOL_NOW if has_cjk(s) else _TOOL_NOW).search(s)
    if not m or m.group("v").casefold() in STOPWORDS or any(sl.holds_value(f, m.group("v")) for f in facts):
        return None
    owned = [w.group("k").casefold() for w in re.finditer(r"\b(?:my|our|the)\s+(?P<k>[a-z]+)", s, re.IGNORECASE)]
    hits = [i for i in hits if all(re.search(rf"\b{re.escape(k)}", facts[i], re.IGNORECASE) for k in owned)]
    return _only([i for i in hits if _tool_fact(facts[i]) and not families(facts[i]) & _PERSONAL])


def _one_value(hits: list[int], facts: list[str]) -> int | None:
    """The one fact of ``hits``, or the first when they are all wordings of one value (a name every one holds)."""
    if len(set(hits)) <= 1:
        return _only(hits)
    common = None
    for i in hits:
        mine = {w.casefold() for w in _NAME_SHAPE.findall(facts[i])
                if len(w) >= 3 and w.casefold() not in STOPWORDS}
        common = mine if common is None else common & mine
    return hits[0] if common else None


_DATE_WORDS = re.compile(r"^(?:\d{1,4}|as|of|on|in|since|(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|"
                         r"march|april|may|june|july|august|september|october|november|december)$", re.IGNORECASE)


def adds_value(new: str, old: str) -> bool:
    """Whether ``new`` states something ``old`` does not: a content word (a Chinese character) beyond markers and
    dates, so an update is never a fact replaced by itself."""
    if fact_key(new) == fact_key(old):
        return False
    if has_cjk(new):  # a character of its own, or a Latin name of its own (用的是 TiDB after 用的是 MongoDB), not a
        # lower-case word or a number beside the same Chinese ("(said in gamma at 50)" after "(said in beta at 20)")
        return bool(set(re.findall(r"[\u3400-\u9fff]", new)) - set(re.findall(r"[\u3400-\u9fff]", old)) - set("用户团队的了是在现")
                    or {w.casefold() for w in re.findall(r"[A-Za-z][A-Za-z0-9.+-]*", new) if not w.islower()}
                    - {w.casefold() for w in re.findall(r"[A-Za-z][A-Za-z0-9.+-]*", old)})
    if set(re.findall(r"\d+(?:\.\d+)+", new)) - set(re.findall(r"\d+(?:\.\d+)+", old)):
        return True  # a version number of its own ("4.2" after "3.2")
    have = {sl.stem(w) for w in content_tokens(old)}
    slot_words = [_FAMILIES[f] for f in families(new) & _SINGLE]  # "retired": a marker and the value itself (not "promoted")
    fresh = [w for w in content_tokens(new) if sl.stem(w) not in have and not _DATE_WORDS.match(w)
             and (not _MARKER_EN.fullmatch(w) or any(p.fullmatch(w) for p in slot_words)) and w not in _LIGHT]
    return bool(fresh)


def rewords(other: str, old: str, new: str, s: str) -> bool:
    """Whether ``other`` is a second wording of the replaced fact ``old``: it holds a name of ``old`` that the new fact
    ``new`` drops ("Work on the project is tracked as Jira tickets." beside 团队用 Jira 管理任务), and is about the
    same family the statement ``s`` changes; never a fact about another person."""
    if frames.other_people(s, other):
        return False
    if families(other) & families(old) and any(sl.holds_value(other, g) and sl.holds_value(old, g)
                                               and not sl.holds_value(new, g) for g in sl.gone_values(s)):
        return True  # "We dropped Jira ..." names the value gone, which both wordings hold
    gone = [n for n in _names(old) if n.casefold() in other.casefold() and n.casefold() not in new.casefold()]
    return bool(gone) and bool(families(other) & families(s) & families(old))


def _names(text: str) -> set[str]:
    """Words of a name's shape in ``text`` past its first word (a capital inside the sentence, letters and digits)."""
    words = _NAME_SHAPE.findall(text)
    if text[:1].isupper() and text[:1].isascii():
        words = words[1:]  # the sentence's first word is capitalised whatever it is
    return {w for w in words if len(w) >= 3 and w.casefold() not in STOPWORDS and not _NOT_TOOL.match(w)}


#: A run of words of a name's shape ("NATS JetStream", "GitLab CI", "Java 21", "@loudkestrel", "3.12").
_NAME_RUN = re.compile(r"(?<![A-Za-z0-9_.@/])(?:@[A-Za-z0-9_.-]*[A-Za-z0-9_]|[A-Z][A-Za-z0-9_.+-]*[A-Za-z0-9_+]|"
                       r"[a-z]+[A-Z][A-Za-z0-9_.+-]*|\d+(?:\.\d+)*(?![A-Za-z0-9]))"
                       r"(?:\s+(?:[A-Z][A-Za-z0-9_.+-]*[A-Za-z0-9_+]|\d+(?:\.\d+)*(?![A-Za-z0-9])))*")
_STARTS = re.compile(r"(?:^|[.!?;:,，。；！？]\s*|\s[-–—]+\s)$")


def _new_runs(s: str, fact: str) -> list[str]:
    """The runs of name-shaped words of ``s`` (``_NAME_RUN``) that ``fact`` does not hold: the new values a statement
    names past a sentence's or clause's first word (any first word is capitalised: "Team reshuffle last sprint, ...")."""
    low = fact.casefold()
    inner = []
    for m in _NAME_RUN.finditer(s):
        words = [w for w in m.group().rstrip(".").split() if w != "I" and w.casefold() not in STOPWORDS
                 and not _MARKER_EN.fullmatch(w) and not _NOT_TOOL.match(w)]
        run = " ".join(words)
        if not run or re.search(rf"(?<![\w@]){re.escape(run.casefold())}(?!\w)", low):
            continue
        if not (_STARTS.search(s[:m.start()]) and " " not in m.group()):
            inner.append(run)
    return inner


def _last_value(fact: str) -> str:
    """The value a fact's main clause states last: its last run of name-shaped words past its first word, dates and
    subordinate clauses left out ("Auth0" of
    "Login goes through Auth0.", "GitLab CI" of 团队的 CI 用的是 GitLab CI。), or ""."""
    body = re.sub(r"\s*\((?:as\s+of|by)\s+[^)]*\)", "", fact)
    body = re.split(r"(?<=\w)\s*(?:[,;，；]|\s(?:because|since|so|while|when|but|though|although|until|after|before)\b)",
                    body, maxsplit=1)[0]  # the main clause: not "... ThinkPad because the user's MacBook is in for repair"
    runs = [m for m in _NAME_RUN.finditer(body) if m.start() > 0 or has_cjk(body)]
    return runs[-1].group().rstrip(".") if runs else ""


def value_swap(s: str, fact: str) -> tuple[str, str, str] | None:
    """(old value, new value, ``fact`` with the one swapped for the other) when the change statement ``s`` names, as
    written, the value ``fact`` states (``_last_value``: "auth0 got too pricey so we're on Keycloak now" of "Login goes
    through Auth0.") and exactly one new value of a name's shape: the fact's own frame, which says what the value is
    for, with the new value. For a family whose words are the values ("tabs" / "spaces"), its words. None when either
    side is not one value, or the new value holds the old one ("Jennifer Ortiz" of "Jennifer Walsh")."""
    if has_cjk(fact) != has_cjk(s):
        return None
    old = _last_value(fact)
    olds = [old] if old and re.search(rf"(?<![A-Za-z0-9_@]){re.escape(old)}(?![A-Za-z0-9_])", s) else []
    news = [r for r in _new_runs(s, fact) if not any(w.casefold() in fact.casefold().split() for w in r.split())]
    if not olds and not has_cjk(s):  # "spaces from now on" of "likes tabs for indentation": a value family's own words
        for fam in families(s) & families(fact) & _VALUE_FAMILIES:
            if _family_words(s, fam) & _family_words(fact, fam) - {"prefer"}:
                continue  # "from npm to pnpm" names the old value itself: the statement's own wording holds it
            a, b = _family_words(s, fam), _family_words(fact, fam)
            mine, theirs = {w for w in a - b if not _SLOT_WORD.fullmatch(w)}, {w for w in b - a if not _SLOT_WORD.fullmatch(w)}
            if len(mine) == 1 and len(theirs) == 1:
                olds, news = sorted(theirs), sorted(mine)
    if len(olds) != 1 or len(set(news)) != 1:
        return None
    old, new = olds[0], news[0]
    at = re.search(rf"(?<![A-Za-z0-9_@]){re.escape(old)}(?![A-Za-z0-9_])", fact, re.IGNORECASE)
    if at is None:
        return None
    return old, new, fact[:at.start()] + new + fact[at.end():]


def tool_swap(s: str, fact: str) -> str | None:
    """``fact`` with its tool replaced by the one a statement naming only its new tool (``_TOOL_NOW``) names ("The
    team's main database is MySQL." + "we're on CockroachDB now" -> "... is CockroachDB."), or None."""
    m = (_ZH_TOOL_NOW if has_cjk(s) else _TOOL_NOW).search(s)
    values = sorted({x.value for x in sl.slots(fact) if x.kind in ("use", "has") and x.value and x.value in fact},
                    key=len, reverse=True)
    if not values:  # "The project's team chats on Slack.": no use slot, but one name, the tool
        values = sorted(_names(fact)) if len(_names(fact)) == 1 else []
    if not values and has_cjk(fact):  # 团队沟通用钉钉。: what it uses, at the fact's end
        used = re.search(r"(?:用的是|使用|用)\s*(?P<v>[A-Za-z][\w.+-]*|[\u4e00-\u9fff]{2,6})\s*[。.]?$", fact)
        values = [used.group("v")] if used else []
    if not m or not values:
        return None
    return fact.replace(values[0], m.group("v"), 1)
