"""LoCoMo, read in place, as evlog sees conversations: the one loader every evaluation uses.

LoCoMo (``../shared/data/real/locomo/locomo10.json``, CC BY-NC 4.0) is for evaluation
only: it is read where it lies and never copied into this repository.

Each of the 10 conversations between two people becomes evlog input:

* one project per conversation, ``locomo/<sample_id>`` (a label, not a directory);
* one session per LoCoMo session, key ``locomo:<sample_id>:session_<n>``, created at the
  session's date;
* one message per turn: ``message_id`` is the turn's ``dia_id`` (``D1:3``), the first
  speaker's turns have role ``user`` and the second's ``assistant``, ``extra.speaker``
  holds the speaker's name, the turn's image caption (if any) is kept in
  ``extra.blip_caption``; ``timestamp`` is the session's date and time (LoCoMo gives one
  per session), plus one second per turn so turns keep their order.

Questions keep their category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and evidence turn ids.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import real_data  # tools/real_data.py (tools/ is on the path of every script here)

HERE = os.path.dirname(os.path.abspath(__file__))
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def default_path() -> str:
    """``$EVLOG_LOCOMO`` if set, else ``shared/data/real/locomo/locomo10.json`` next to the repo or above it."""
    if os.environ.get("EVLOG_LOCOMO"):
        return os.environ["EVLOG_LOCOMO"]
    real = real_data.find()
    if real and os.path.exists(os.path.join(real, "locomo", "locomo10.json")):
        return os.path.join(real, "locomo", "locomo10.json")
    raise FileNotFoundError("LoCoMo not found: set EVLOG_LOCOMO to locomo10.json (see ../shared/data/real/README.md)")


@dataclass
class Turn:
    """One utterance."""

    dia_id: str
    speaker: str
    role: str  # user (first speaker) or assistant (second speaker)
    text: str
    session: int
    timestamp: str  # UTC ISO 8601
    caption: str = ""


@dataclass
class Question:
    """One question with its evidence turns."""

    question: str
    answer: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    """One LoCoMo sample."""

    sample_id: str
    speakers: tuple[str, str]
    session_dates: dict[int, str]  # session number -> UTC ISO 8601
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def project(self) -> str:
        """The project label its sessions carry."""
        return f"locomo/{self.sample_id}"

    def session_key(self, n: int) -> str:
        """The evlog session key of session ``n``."""
        return f"locomo:{self.sample_id}:session_{n}"


_DATE = re.compile(r"(\d{1,2}):(\d\d)\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.IGNORECASE)
_MONTHS = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"], 1)}


def parse_session_date(text: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` -> an aware UTC datetime."""
    m = _DATE.search(text)
    if not m:
        raise ValueError(f"unrecognised LoCoMo session date {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    return datetime(int(year), _MONTHS[month.lower()], int(day), h, int(minute), tzinfo=UTC)


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def load(path: str | None = None) -> list[Conversation]:
    """Every conversation of the file, turns in order."""
    with open(path or default_path(), encoding="utf-8") as f:
        raw = json.load(f)
    out = []
    for sample in raw:
        conv = sample["conversation"]
        a, b = conv["speaker_a"], conv["speaker_b"]
        c = Conversation(sample_id=sample["sample_id"], speakers=(a, b), session_dates={})
        numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
        for n in numbers:
            start = parse_session_date(conv[f"session_{n}_date_time"])
            c.session_dates[n] = _iso(start)
            for i, t in enumerate(conv[f"session_{n}"]):
                c.turns.append(Turn(dia_id=t["dia_id"], speaker=t["speaker"], role="user" if t["speaker"] == a else "assistant",
                                    text=t.get("text", ""), session=n, timestamp=_iso(start + timedelta(seconds=i)),
                                    caption=t.get("blip_caption", "") or ""))
        for q in sample["qa"]:
            answer = q.get("answer", q.get("adversarial_answer", ""))
            c.questions.append(Question(question=q["question"], answer=str(answer), category=int(q["category"]),
                                        evidence=[str(e) for e in q.get("evidence", [])]))
        out.append(c)
    return out


def events(c: Conversation) -> list:
    """The conversation as evlog events: one ``session.created`` per session, one ``message.appended`` per turn."""
    from eventlog.events import MessageAppended, SessionCreated

    evs: list = []
    for n, date in c.session_dates.items():
        evs.append(SessionCreated(session_key=c.session_key(n), title=f"{c.speakers[0]} & {c.speakers[1]}, session {n}",
                                  created_at=date, project=c.project, dedup=f"locomo:{c.sample_id}:{n}:created"))
        for t in (t for t in c.turns if t.session == n):
            extra = {"speaker": t.speaker}
            if t.caption:
                extra["blip_caption"] = t.caption
            evs.append(MessageAppended(session_key=c.session_key(n), message_id=t.dia_id, role=t.role, content=t.text,
                                       timestamp=t.timestamp, extra=extra, dedup=f"locomo:{c.sample_id}:{t.dia_id}"))
    return evs
