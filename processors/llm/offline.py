"""``OfflineExtractor``: deterministic rules in place of a model, no network, no key.

It reads ``Prompt.inputs`` (never the prompt text) and answers in the format the
processors expect, so evlog works out of the box and its outputs replay and test like
any model's. Same inputs, same output, byte for byte. Token counts are estimates
(``processors.llm.estimate_tokens``: ASCII characters / 4, rounded up, plus one per
other character) over ``system + user`` for input and over the answer for output.

**facts** (Dream; ``inputs = {"entries": [Entry...], "existing": [ExistingFact...]}``)
answers with the operations of ``processors.extract.offline.extract``, written as the JSON a model would answer
(``processors.extract.llm.format_ops``), so Dream validates and records both alike.

**consolidate** summarises messages; the facts it lists follow these rules. Every answer,
whatever the purpose, names one model: ``MODEL`` (``offline-rules-v1``), the name the
run's report, ``dream.started`` and ``dream.completed`` all show.

Rules, in order:

1. Blocks a harness injects into a message (``<system-reminder>...</system-reminder>``,
   ``<command-name>``, ``<local-command-caveat>``: any tag whose name holds ``-`` or
   ``_``) are removed with their content, other tags without it. Then each entry's text
   is read line by line. A line that a speaker label marks as the assistant's
   (``assistant:``, ``AI:``, ``Claude:``, ``bot:``, ``助手：``, ...; after an optional
   ``[timestamp]`` and list marker) is skipped: it says nothing about the user.
   A user label (``user:``, ``the user said:``, ``用户：``, ...) is removed.
2. A line is split into sentences after ``. ! ? ;`` followed by a space or the line's
   end (so ``3.11`` stays whole) and after ``。！？；`` anywhere.
3. Whitespace runs become one space; leading list markers, bullets, ``|`` and stray
   punctuation are removed, and so is trailing ``.,;。，；!！`` punctuation.
4. Questions are dropped: a sentence ending in ``?``/``？``; an English sentence opening
   with a question word (what, how, why, ...) or an auxiliary followed by a subject
   (``can you``, ``do you``, ``is this``, ...; ``do not`` is not a question); a Chinese
   one ending in the particles 吗 嘛 么 呢, or opening with 能不能, 可不可以, 是不是,
   要不要, 有没有, 为什么, 怎么, 什么, 哪. Requests for work are dropped too: a sentence
   opening with "please"/"pls"/"kindly" (unless followed by don't, do not, never, always
   or remember) or with 帮我/请帮我.
5. A sentence is kept only if it holds a trigger, a phrase that states a preference,
   habit, tool, decision, identity or convention.
   English (case-insensitive, whole words): I prefer, I like, I love, I always,
   I usually, I never, I use, I'd rather, I hate, I dislike, I work on/at/for/as/in/with,
   my name is, call me, remember that, always use; always / never at the sentence start
   or after I/we/please; don't / do not at the start or after I/we/please (but not
   before know, think, understand, see, get, remember, forget, worry, give up, quit,
   hesitate, mind, care); we use/always/never/prefer/don't; this project, in this repo,
   our codebase/repo/project/team; the/this project/repo/codebase uses/requires/
   prefers/targets/runs/needs.
   Chinese: 我习惯, 我喜欢, 我不喜欢, 我讨厌, 我偏好, 我一般, 我通常, 我平时, 我总是,
   我从不, 我用, 我在…工作/上班, 我叫, 我的名字, 叫我, 我是 (not 我是不是/我是说/我是想),
   不要 (not 要不要; so also 请不要, 千万不要), 别 (at a clause start or after 请/你/千万;
   not 别人/别的/别处), 记住 (at a clause end, or followed by punctuation, a space or 我
   but not 我们: "记住我们的对话" asks, states nothing), 我们用, 我们使用, 我们一般,
   我们习惯, 我们约定, 我们统一, 我们都, 这个项目, 本项目, 项目里, 项目中, 仓库里, 代码库.
   Third person, as a model's summary words it: (the) user prefers/likes/loves/always/
   usually/never/uses/hates/dislikes/wants/works/is named/is called/is a/does not, the
   user's name, the user asked (me) to always/never/not; 用户习惯/喜欢/不喜欢/讨厌/偏好/
   一般/通常/总是/从不/用/使用/叫/是/希望/要求. A sentence that mentions "the user" or
   用户 without a third-person trigger is an instruction about the user (a harness's
   "confirm with the user first"), not the user's own word, and is dropped.
6. A Chinese sentence is cut into facts at ``，``: every clause holding a trigger starts
   a fact, a clause without one joins the fact before it (clauses before the first
   trigger join the first fact). So "我习惯早上写代码，不要在晚上十点以后给我发提醒"
   gives two facts; a clause that is a question or a request (rule 4) is left out, and
   so is a fact that reads as one once cut. English sentences are never cut at commas
   (their clauses lean on one subject).
7. A leading "remember that" / "记住" / "请记住" (and a following comma or colon) is
   removed from the fact. What is left must be substantial: at least 4 characters when
   it holds Chinese, else at least 3 words, and not a short one (up to 4 words) ending
   in it / that / this / them / to / so / too / you ("I love it", "Yeah, I love to").
8. A fact longer than 200 characters is cut at the last space before the limit (at
   the limit when there is no space in the last 60 characters, as in Chinese) and
   ends in ``…``.
9. Duplicates are removed: facts compared case-folded, whitespace collapsed, trailing
   punctuation and list markers removed; a fact counts as present when it is a
   substring of an earlier one: the first wording is kept.

**consolidate** (``inputs = {"messages": [{"role", "content"}, ...]}``) answers a summary::

    Summary of N messages (U from the user, A from the assistant[, O other]).
    User: <first sentence of each user message>; <...>
    Assistant: <first sentence of each assistant message>; <...>
    Preferences and conventions stated by the user:
    - <fact>

"First sentence" follows rule 2 on the message's first non-empty line; each is cut as in
rule 8, and whole ones are joined with "; " while the user line stays within 600
characters and the assistant line within 300, the rest shown as "…". The facts are
rules 1-8 (and rule 9's duplicate test) applied to the user messages, listed whole (a
leading "remember that" / 记住 is kept); the section is left out when there are none.
Tool and system messages are counted, never quoted. Content that is a list of blocks
has its text blocks read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import msgspec

from processors.llm import LLM, Completion, LLMCallError, Prompt, estimate_tokens

MODEL = "offline-rules-v1"
FACT_LIMIT = 200
USER_LINE_LIMIT = 600
ASSISTANT_LINE_LIMIT = 300

# --- text helpers -------------------------------------------------------------------

_WS = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])(?=\s)|(?<=[。！？；])")
_LEAD = re.compile(r"^(?:[\s\-*•·|>:：;；,，.。]|\d{1,3}[.)]\s)+")
_TRAIL = re.compile(r"[\s.,;。，；!！、:：]+$")
_TIMESTAMP = re.compile(r"^\s*\[[^\]\n]{1,40}\]\s*")
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)])\s+")
_ASSISTANT_LABEL = re.compile(
    r"^(?:the\s+)?(?:assistant|ai|bot|claude|model|agent|助手|机器人)(?:\s+(?:said|replied|answered))?\s*[:：]",
    re.IGNORECASE,
)
_USER_LABEL = re.compile(
    r"^(?:the\s+)?(?:user|human|用户)(?:\s+(?:said|asked|wrote))?\s*[:：]\s*",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

_EN_QUESTION = re.compile(
    r"^(?:who|whom|whose|what|when|where|why|which|how)\b"
    r"|^(?:can|could|would|will|do|does|did|is|are|was|were|should|shall|may|might|have|has|am)\s+"
    r"(?:you|i|we|it|they|he|she|this|that|there|these|those|my|our|your)\b",
    re.IGNORECASE,
)
_ZH_QUESTION_END = re.compile(r"[吗嘛么呢][\s~～。！!…]*$")
_ZH_QUESTION_START = re.compile(r"^(?:请问|你|您)?(?:能不能|可不可以|是不是|要不要|有没有|为什么|怎么|什么|哪)")
#: Requests for a task ("Please analyze this codebase ...", "帮我 ..."): work to do, not a fact.
_REQUEST = re.compile(
    r"^(?:please|pls|kindly)\s+(?!don't|don’t|do\s+not|never|always|remember)|^请?帮我",
    re.IGNORECASE,
)

_EN_TRIGGER = re.compile(
    r"\bI\s+(?:prefer|like|love|always|usually|never|use|hate|dislike)\b"
    r"|\bI(?:'d|\s+would)\s+rather\b"
    r"|\bI\s+work\s+(?:on|at|for|as|in|with)\b"
    r"|\bmy\s+name\s+is\b|\bcall\s+me\b|\bremember\s+that\b"
    r"|\balways\s+use\b"
    r"|(?:^|\b(?:I|we|please)\s+)(?:always|never)\b"
    r"|(?:^|\b(?:I|we|please)\s+)(?:don't|don’t|do\s+not)\b(?!\s+(?:know|think|understand|see|get|remember|forget|worry|give\s+up|quit|hesitate|mind|care)\b)"
    r"|\bwe\s+(?:use|always|never|prefer|don't|don’t|do\s+not)\b"
    r"|\bthis\s+project\b|\bin\s+this\s+repo(?:sitory)?\b|\bour\s+(?:codebase|code\s+base|repo|repository|project|team)\b"
    r"|\b(?:the|this)\s+(?:project|repo|repository|codebase)\s+(?:uses|requires|prefers|targets|runs|needs)\b",
    re.IGNORECASE,
)
#: Third-person statements, as a model's summary writes them ("The user prefers ...").
_EN_THIRD_PERSON = re.compile(
    r"\b(?:the\s+)?user\s+(?:prefers|likes|loves|always|usually|never|uses|hates|dislikes|wants|works|"
    r"is\s+(?:named|called|a|an)|does\s+not|doesn't|doesn’t|asked\s+(?:me\s+)?(?:to\s+)?(?:always|never|not))\b"
    r"|\b(?:the\s+)?user's\s+name\b",
    re.IGNORECASE,
)
_THE_USER = re.compile(r"\bthe\s+user\b|用户", re.IGNORECASE)
_ZH_TRIGGER = re.compile(
    r"我(?:习惯|喜欢|不喜欢|讨厌|偏好|一般|通常|平时|总是|从不|用)"
    r"|我在.{1,20}?(?:工作|上班)"
    r"|我叫|我的名字|叫我|我是(?!不是|说|想)"
    r"|(?<!要)不要"
    r"|(?:^|[，,；;：:\s]|请|你|千万)别(?![人的处])"
    r"|记住(?=$|[：:，,\s]|我(?!们))"
    r"|我们(?:用|使用|一般|习惯|约定|统一|都)"
    r"|这个项目|本项目|项目里|项目中|仓库里|代码库"
)
_ZH_THIRD_PERSON = re.compile(r"用户(?:习惯|喜欢|不喜欢|讨厌|偏好|一般|通常|总是|从不|用|使用|叫|是|希望|要求)")
#: Harness-injected blocks (``<system-reminder>...</system-reminder>``, ``<command-name>``, ...):
#: tags whose name holds a hyphen or an underscore, unlike HTML's.
_INJECTED_BLOCK = re.compile(r"<([a-z][a-z0-9]*[-_][a-z0-9_-]*)\b[^>]*>.*?</\1>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"</?[a-z][a-z0-9_-]*\b[^>]*>", re.IGNORECASE)
_REMEMBER = re.compile(r"^(?:please\s+)?remember\s+that\s*[,:：，]?\s*|^请?记住\s*[,:：，]?\s*", re.IGNORECASE)


def _clean(text: str) -> str:
    """Rule 3: one space for every whitespace run, no leading markers or trailing punctuation."""
    text = _WS.sub(" ", text).strip()
    text = _LEAD.sub("", text)
    return _TRAIL.sub("", text).strip()


def _key(text: str) -> str:
    """The comparison form of rule 9."""
    return _clean(_BULLET.sub("", text)).casefold()


def _cut(text: str, limit: int) -> str:
    """Rule 8: at most ``limit`` characters, cut at a word boundary when there is one."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    if space >= limit - 60:
        head = head[:space]
    return head.rstrip(" ,;，；、") + "…"


def _sentences(line: str) -> list[str]:
    """Rule 2."""
    return [s for s in _SENTENCE_END.split(line) if s.strip()]


def _is_question(sentence: str) -> bool:
    """Rule 4 (on a sentence before its trailing punctuation is removed)."""
    s = sentence.strip()
    if s.endswith(("?", "？")):
        return True
    s = _clean(s)
    if _EN_QUESTION.match(s) or _REQUEST.match(s):
        return True
    return bool(_CJK.search(s) and (_ZH_QUESTION_END.search(s) or _ZH_QUESTION_START.match(s)))


def _has_trigger(text: str) -> bool:
    """Rule 5 (third-person statements included)."""
    if _EN_THIRD_PERSON.search(text) or _ZH_THIRD_PERSON.search(text):
        return True
    if _THE_USER.search(text):  # an instruction about the user, not the user's own word
        return False
    return bool(_EN_TRIGGER.search(text) or _ZH_TRIGGER.search(text))


def _user_lines(text: str) -> Iterable[str]:
    """Rule 1: the lines of ``text`` not marked as the assistant's, user labels removed."""
    text = _TAG.sub(" ", _INJECTED_BLOCK.sub("\n", text))
    for raw in text.splitlines():
        line = _TIMESTAMP.sub("", raw)
        line = _BULLET.sub("", line).strip()
        if not line or _ASSISTANT_LABEL.match(line):
            continue
        yield _USER_LABEL.sub("", line)


def _facts_of_sentence(sentence: str, *, keep_remember: bool = False) -> list[str]:
    """Rules 5-8 for one sentence that is not a question."""
    if not _CJK.search(sentence):
        groups = [sentence] if _has_trigger(sentence) else []
    else:
        groups = []
        pending: list[str] = []  # clauses before the first trigger
        for clause in sentence.split("，"):
            if not clause.strip() or _is_question(clause):
                continue
            if _has_trigger(clause):
                groups.append("，".join([*pending, clause]))
                pending = []
            elif groups:
                groups[-1] = groups[-1] + "，" + clause
            else:
                pending.append(clause)
    facts = []
    for group in groups:
        whole = _clean(group)
        fact = _clean(_REMEMBER.sub("", whole))
        if _substantial(fact) and not _is_question(fact):
            facts.append(_cut(whole if keep_remember else fact, FACT_LIMIT))
    return facts


_VAGUE_END = frozenset({"it", "that", "this", "them", "to", "so", "too", "you"})


def _substantial(fact: str) -> bool:
    """Rule 7: enough words to be a fact ("I love it" is not one)."""
    if _CJK.search(fact):
        return len(fact) >= 4
    words = fact.split()
    return len(words) >= 3 and not (len(words) <= 4 and words[-1].casefold().strip("'\"") in _VAGUE_END)


def extract_facts(texts: Iterable[str], *, keep_remember: bool = False) -> list[str]:
    """Rules 1-8 over ``texts`` in order: the facts they state, duplicates removed.

    ``keep_remember`` skips the "remember that" / 记住 removal of rule 7, so that a
    summary keeps the trigger a later Dream needs to find the fact again.
    """
    facts: list[str] = []
    seen: list[str] = []
    for text in texts:
        for line in _user_lines(text):
            for sentence in _sentences(line):
                if _is_question(sentence):
                    continue
                for fact in _facts_of_sentence(_clean(sentence), keep_remember=keep_remember):
                    key = _key(fact.removesuffix("…"))
                    if key and not any(key in earlier for earlier in seen):
                        seen.append(key)
                        facts.append(fact)
    return facts


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return "" if content is None else str(content)


def _first_sentence(text: str) -> str:
    for raw in text.splitlines():
        line = _WS.sub(" ", raw).strip()
        if line:
            return _WS.sub(" ", _sentences(line)[0]).strip()
    return ""


def _joined(sentences: list[str], limit: int) -> str:
    """Whole sentences (each cut as in rule 8) joined with "; " while within ``limit``, then "; …"."""
    items = [_cut(s.rstrip(";；").strip(), FACT_LIMIT) for s in sentences if s.strip()]
    out: list[str] = []
    size = 0
    for item in items:
        if out and size + 2 + len(item) > limit - 3:
            out.append("…")
            break
        out.append(item)
        size += len(item) + (2 if len(out) > 1 else 0)
    return "; ".join(out)


# --- the extractor ------------------------------------------------------------------


class OfflineExtractor(LLM):
    """Rule-based answers for ``dream`` and ``consolidate`` prompts (see the module docstring)."""

    name: ClassVar[str] = "offline"

    def __init__(self) -> None:
        self.model = MODEL

    def complete(self, prompt: Prompt) -> Completion:
        """Answer from ``prompt.inputs``; malformed inputs raise ``LLMCallError`` (kind ``bad_request``)."""
        if prompt.purpose == "facts":
            text, stop = self._facts(prompt)
        else:
            text, stop = self._consolidate(prompt)
        return Completion(
            text=text,
            model=self.model,
            input_tokens=estimate_tokens(prompt.system) + estimate_tokens(prompt.user),
            output_tokens=estimate_tokens(text),
            stop_reason=stop,
        )

    # facts (Dream)

    def _facts(self, prompt: Prompt) -> tuple[str, str]:
        from processors.extract import offline as rules
        from processors.extract.llm import format_ops
        from processors.extract.model import Entry, ExistingFact

        try:
            entries = msgspec.convert(prompt.inputs.get("entries"), list[Entry])
            existing = msgspec.convert(prompt.inputs.get("existing", []), list[ExistingFact])
        except msgspec.ValidationError as e:
            msg = f'the offline extractor needs inputs {{"entries": [Entry...], "existing": [ExistingFact...]}}: {e}'
            raise LLMCallError(msg, kind="bad_request") from None
        return format_ops(rules.extract(entries, existing), entries), "end_turn"

    # consolidate

    def _consolidate(self, prompt: Prompt) -> tuple[str, str]:
        messages = prompt.inputs.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, Mapping) for m in messages):
            msg = 'the offline extractor needs inputs {"messages": [{"role", "content"}, ...]} for consolidate'
            raise LLMCallError(msg, kind="bad_request")
        user_said: list[str] = []
        assistant_said: list[str] = []
        user_texts: list[str] = []
        counts = {"user": 0, "assistant": 0, "other": 0}
        for m in messages:
            role = str(m.get("role", ""))
            content = _content_text(m.get("content"))
            if role == "user":
                counts["user"] += 1
                user_texts.append(content)
                if first := _first_sentence(content):
                    user_said.append(first)
            elif role == "assistant":
                counts["assistant"] += 1
                if first := _first_sentence(content):
                    assistant_said.append(first)
            else:
                counts["other"] += 1
        n = len(messages)
        tally = f"{counts['user']} from the user, {counts['assistant']} from the assistant"
        if counts["other"]:
            tally += f", {counts['other']} other"
        lines = [f"Summary of {n} message{'' if n == 1 else 's'} ({tally})."]
        if user_said:
            lines.append("User: " + _joined(user_said, USER_LINE_LIMIT))
        if assistant_said:
            lines.append("Assistant: " + _joined(assistant_said, ASSISTANT_LINE_LIMIT))
        facts = extract_facts(user_texts, keep_remember=True)
        if facts:
            lines.append("Preferences and conventions stated by the user:")
            lines.extend(f"- {f}" for f in facts)
        text = "\n".join(lines) + "\n"
        if estimate_tokens(text) <= prompt.max_tokens:
            return text, "end_turn"
        return _cut_to_tokens(text, prompt.max_tokens), "max_tokens"


def _cut_to_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of ``text`` whose estimate fits ``max_tokens`` (binary search)."""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = math.ceil((lo + hi) / 2)
        if estimate_tokens(text[:mid]) <= max_tokens:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]
