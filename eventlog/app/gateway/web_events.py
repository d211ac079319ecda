"""Events the gateway itself writes into an account's log: what the web view adds (a message typed in it).

The web view is a device of the account: its origin is ``web-<user id>`` (``web_origin``), its
origin seqs follow that origin's high water mark, and its clock is later than every event the
account holds (``local_hlc`` over their highest clock), so a device that pulls the message
orders it after what the person saw when they typed it. The envelope goes through
``event_store.push_events`` like a device's push (same transaction rules, same author rule:
the account owns its web origin), under the position counter's lock taken first, so two
gateway processes adding messages at once take consecutive seqs, never the same one. Each event
passes the log writer's redaction door first (``eventlog.redact.redact_event``, INVARIANTS I24):
a secret typed into the web view never reaches the tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from eventlog.app.gateway.users import User
from eventlog.events import Event
from eventlog.redact import redact_event
from eventlog.replication.clock import local_hlc
from eventlog.replication.envelope import Replicated
from eventlog.timeutil import now_iso

_encoder = msgspec.json.Encoder()


def web_origin(user: User) -> str:
    """The device id of the account's web view."""
    return f"web-{user.id}"


def append(cur: Any, user: User, events: Sequence[tuple[Event, str]]) -> list[Replicated]:
    """Store ``events`` (each with its project, "" for none) in the account's log as its web view's; the envelopes.

    Runs inside the caller's transaction (``cur``), all or nothing, which must read nothing before it: its
    snapshot has to start at the position lock taken here, or a message another process committed meanwhile is
    missed and its seq taken again.
    """
    from eventlog.app.gateway.event_store import high_water_of, push_events

    cur.execute("SELECT position FROM gateway_event_position WHERE id = 1 FOR UPDATE")
    origin = web_origin(user)
    seq = high_water_of(cur, user.id, origin)
    cur.execute("SELECT COALESCE(MAX(hlc), 0) FROM gateway_events WHERE user_id = %s", (user.id,))
    floor = int(cur.fetchone()[0])
    out: list[Replicated] = []
    for ev, project in events:
        seq += 1
        written = msgspec.structs.replace(redact_event(ev), seq=seq, ts=now_iso())  # the writer's door (I24)
        floor = local_hlc(written.ts, floor)
        out.append(Replicated(origin=origin, origin_seq=seq, hlc=floor, type=ev.type,
                              body=msgspec.Raw(_encoder.encode(written)), project=project, author=user.email))
    push_events(cur, user, out)
    return out
