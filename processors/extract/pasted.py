"""Who said it, inside a user's message: the words the user typed, not what they pasted or quoted.

A user message often carries other people's text: a README or wiki page pasted whole, a
colleague's Slack line, a blog bio, a forwarded email, a chat log. Only the user's own
words may become facts about the user or standing instructions (INVARIANT I27), so
``typed_part(text)`` keeps what the user typed and drops, by the form of the text (never
by its nouns):

* **block closers**: a closing tag of an injected block without its opening
  (``</evlog-memory>``, ``</system-reminder>``): everything from it on was not typed in
  the user's turn (text that tries to end the memory block early);
* **introduced pastes**: a line or sentence that introduces someone else's text and ends
  in ``:`` or `` - `` ("Here is the README:", "found this bio on Medium:", "From the
  wiki page:", "My colleague Bob wrote in Slack:", "Quoting Dana:", "Forwarding this
  email:", "This is what the site says -", "Her LinkedIn bio:", 这是我找到的文章：, 同事小王说：): the
  introduction and everything after it;
* **reported speech**: a sentence in which someone other than the user wrote, said,
  posted or claimed that ... ("Someone on Reddit wrote that they always ...");
* **speaker-labelled lines** of a pasted chat or email (``Bob: ...``, ``From: Carl``);
* **documents**: from a Markdown or wiki heading (``# Setup``, ``== Setup ==``), an email header
  line (``From: Carl``) or separator (``-----Original Message-----``) to the end of the message;
* **quotations** in double quotes that speak in the first person;
* **long pastes**: a message of at least ``LONG_CHARS`` characters over at least
  ``LONG_LINES`` lines keeps only its first paragraph, if that is short.

What is dropped can still be read by a person (it stays in the log and in recall); it is
only never a source of a fact about the user.
"""

from __future__ import annotations

import re

LONG_CHARS = 2000
LONG_LINES = 15

#: Words that introduce someone else's text, in the part of a line before its ":" or " - ".
_INTRO_WORDS = re.compile(
    r"\b(?:here(?:'s|\s+is|\s+are)|found|copied|pasted?|pasting|forwarding|forwarded|quoting|excerpt|snippet|"
    r"from\s+(?:the|a|an|this|that|his|her|their|its)\b|this\s+is\s+what|according\s+to|wrote|writes|said|says|"
    r"posted|commented|replied|tweeted|messaged|told\s+(?:me|us)|his|her|their|"
    r"(?-i:[A-Z][a-z]+'s))\b", re.IGNORECASE)  # "Bob's bio:", not "our team's conventions:"
#: The same in Chinese: found, copied, pasted, forwarded, quoted, "here is ... article", or a speaker before 说/写道.
_ZH_INTRO_WORDS = re.compile(r"找到|复制|粘贴|转发|引用|摘自|以下是|下面是|这是.{0,16}(?:文章|帖子|页面|内容|文档|说明|简介|回答)"
                             r"|(?<!^我)(?:说|写道|写了|提到|回复|发了?)\s*$")
_INTRO_END = re.compile(r":|：|\s[-–—]\s")
_SENTENCE_START = re.compile(r"(?:^|(?<=[.!?])\s+)")
#: Reported speech: someone other than the user wrote, said ... that.
_REPORTED = re.compile(r"(?<!\bI\s)(?<!\bwe\s)\b(?:wrote|writes|said|says|posted|claims?|claimed|mentioned|tweeted|"
                       r"told\s+(?:me|us))\s+that\b", re.IGNORECASE)
_SENTENCES = re.compile(r"(?:[^.!?\n]|[.!?](?=[^\s.!?]))+[.!?]*|[.!?\n]")
MAX_INTRO = 200
_LABEL = re.compile(r"^\s*(?:\[[^\]\n]{0,40}\]\s*)?(?!(?:Note|PS|P\.S|Edit|Update|Important|Also|Btw|FYI|Actually|"
                    r"Example|Context|Goal|Task|Question)\b)[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*){0,2}\s*:\s*\S")
#: Where a document starts: a Markdown or wiki heading, an email's header or separator line.
_HEADING = re.compile(r"(?m)^\s{0,3}#{1,6}\s+\S|^\s*={2,}[^=\n]+={2,}\s*$|^\s*-{3,}[^-\n]*-{3,}\s*$"
                      r"|^\s*(?:From|To|Subject|Sent|Date|Cc)\s*:\s*\S")
_QUOTE = re.compile(r"[\"“][^\"”\n]{1,400}[\"”]")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|we|our|me)\b")


def typed_part(text: str) -> str:
    """``text`` (injected blocks, code and quoted lines already removed: ``text.own_text``) without what the user
    pasted or quoted (see the module docstring; block closers are ``cut_at_orphan_close``). Linear in the text."""
    text = _cut_at_intro(text)
    heading = _HEADING.search(text)
    if heading:
        text = text[:heading.start()]
    lines = text.split("\n")
    if len(text) >= LONG_CHARS and len(lines) >= LONG_LINES:
        first = text.strip().split("\n\n", 1)[0]
        text = first if len(first) <= 300 else ""
    text = "\n".join(line for line in text.split("\n") if not _LABEL.match(line))
    text = "".join(" " if _REPORTED.search(m.group(0)) else m.group(0) for m in _SENTENCES.finditer(text))
    return _QUOTE.sub(lambda m: " " if _FIRST_PERSON.search(m.group(0)) else m.group(0), text)


def _cut_at_intro(text: str) -> str:
    """``text`` up to the first sentence that introduces someone else's text (and ends in ":" or " - ")."""
    pos = 0
    for line in text.split("\n"):
        for m in _SENTENCES.finditer(line[:2000]):
            sentence = m.group(0)
            end = _INTRO_END.search(sentence, 0, MAX_INTRO + 40)
            if end and (_INTRO_WORDS.search(sentence, 0, end.start())
                        or _ZH_INTRO_WORDS.search(sentence[:end.start()])):
                return text[:pos + m.start()]
        pos += len(line) + 1
    return text


_ANY_TAG = re.compile(r"<(/?)([a-z][a-z0-9]*[-_][a-z0-9_-]*|memory|memories|context|system|instructions?)\b[^<>]*>",
                      re.IGNORECASE)


def cut_at_orphan_close(text: str) -> str:
    """``text`` up to its first closing tag of an injected block that no opening tag before it opened (one pass)."""
    opened: dict[str, int] = {}
    for m in _ANY_TAG.finditer(text):
        name = m.group(2).casefold()
        if not m.group(1):
            opened[name] = opened.get(name, 0) + 1
        elif opened.get(name, 0) > 0:
            opened[name] -= 1
        else:
            return text[:m.start()]
    return text
