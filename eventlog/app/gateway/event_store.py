"""The gateway's event store on MySQL/MariaDB: ``MySQLEventStore``, the ``EventStore`` contract in SQL.

The contract and its definition are ``eventlog.replication.store`` (``MemoryEventStore``);
this module keeps it on the tables of migration m009 (``schema``):

* **Accounts are gateway users, named by e-mail** (``users.normalize_email``): ``push`` and
  ``share`` create a user row on first use (without a password, like ``resolve_user``); a read
  for an e-mail no user has sees nothing.
* **The gateway decides the author** (``MemoryEventStore``'s rule; ``gateway_event_devices``,
  m010, records each origin's owner: the account that pushed it first): an envelope of the
  pusher's own device gets the pusher's e-mail, one of another account's device keeps the author
  its owner's row records (and the account is noted in ``gateway_event_relays`` as holding
  copies of that device), and a new one of another account's device refuses the push.
* **Positions commit in order.** A position is not an AUTO_INCREMENT: with one, two concurrent
  pushes (or two Galera nodes, whose ``auto_increment_increment`` interleaves) can commit
  position 6 before position 5, a pull in between returns 6 and moves its cursor past 5, and
  5 is never pulled. Here every push first locks the one row of ``gateway_event_position``
  (``SELECT ... FOR UPDATE``), takes the next positions from it and writes it back in the same
  transaction, so a push that takes higher positions cannot commit before one that took lower
  ones: every snapshot holds a prefix of the positions, and a pull's cursor (the highest
  position of its snapshot) never passes one still in flight. On Galera the counter row is in
  every push's write set, so two nodes that took the same positions conflict at certification
  and one retries (``_retrying``): the cluster's commit order is the position order.
* **Idempotent push, one transaction.** Under the counter lock the push looks up which
  (origin, origin_seq) of the batch the account holds already (and drops repeats inside the
  batch; a run of consecutive seqs is looked up as one range of the unique index), inserts the
  rest with multi-row INSERTs (``insert_statements``) at consecutive positions: no gaps, no
  duplicates, all or nothing. A push whose COMMIT reached the server
  but whose answer was lost is retried and counts its envelopes as duplicates.
* **Pull by position with ``MemoryEventStore``'s visibility rule**: the account's own
  envelopes, and those of a shared project (non-empty ``project``) whose writer is the owner or
  a member that may write, when the account is the owner or a member. The page and the cursor
  come from one snapshot: with no more to read, the cursor is the highest position of the
  snapshot, so the next pull that brings nothing is one indexed read. A page stops at
  ``PAGE_BYTES`` of bodies (or at its first envelope, whatever its size), so a run of big bodies
  never makes an answer the gateway cannot hold. The server does the work of a page: it sums the
  body sizes to find where the page ends (one row back), and puts each envelope's JSON together
  and joins them into parts of about ``PART_BYTES`` (``GROUP_CONCAT``), so the gateway parses a
  few values per page instead of a row per envelope (the driver's row parsing in Python was most
  of a pull) and the HTTP API sends them as they are.
* **Erasure** (``erase_events``, run by ``evlog erase`` with its gateway rows in one
  transaction: ``gateway.erasure``): the erased envelopes keep their rows (identity, position,
  author) but lose their bodies (``ERASED``, empty: no stored envelope has an empty body), so
  no pull returns them, a device that sends one again makes a duplicate and a relayed copy of
  one is stored without its body. The account empties its own rows and every copy of the
  devices it owns.
* **Screened before the transaction** (``screen_envelopes``): a field the tables cannot hold,
  a body that is not one JSON value, or one bigger than a statement takes, refuses the whole push with ``ConfigError`` naming the
  envelope and the field; nothing is written.

Transient failures (deadlock victims, Galera certification conflicts, lock wait timeouts) are
retried with a short random back-off; a dropped connection a few times (``connection``).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import msgspec

from eventlog.app.gateway import read_model
from eventlog.app.gateway.connection import DROPPED, DSN, TRANSIENT, Connection, Timeouts
from eventlog.app.gateway.pool import Pool
from eventlog.app.gateway.users import User, normalize_email, resolve_user
from eventlog.errors import BackendError, ConfigError, NotFound
from eventlog.replication.envelope import Replicated
from eventlog.replication.store import ERASED, PullPage, PushResult, Share, refused

T = TypeVar("T")

MAX_PULL = 10_000  # envelopes one pull may ask for
MAX_PUSH = 20_000  # envelopes one push may carry
PAGE_BYTES = 16 * 1024 * 1024  # bodies one pull page carries at most (past its first envelope)
MAX_INT = 2**63 - 1
TEXT_LIMITS = {"origin": 191, "type": 191, "author": 255}  # characters (VARCHAR) of the m009 columns
MAX_PROJECT_BYTES = 65_535  # TEXT
ROW_FRAME = 4 * MAX_PROJECT_BYTES + 64 * 1024  # bytes of a row's statement besides its body, at most (escaped texts)
TRANSIENT_RETRIES = 40
DROPPED_RETRIES = 3

_ONE_VALUE = msgspec.json.Decoder(msgspec.Raw)
_INSERT_HEAD = ("INSERT INTO gateway_events (position, origin_seq, hlc, body, user_id, origin, type, project_hash, "
                "project, author) VALUES ")
STATEMENT_BYTES = 4 * 1024 * 1024  # the size a multi-row INSERT aims at (a single bigger row goes alone)
#: Each envelope as the JSON of ``Replicated``, put together by the server (``_page_parts`` joins them).
_ENVELOPE_JSON = ("CONCAT('{\"origin\":', JSON_QUOTE(origin), ',\"origin_seq\":', origin_seq, ',\"hlc\":', hlc, "
                  "',\"type\":', JSON_QUOTE(type), ',\"body\":', body, ',\"project\":', JSON_QUOTE(project), "
                  "',\"author\":', JSON_QUOTE(author), '}')")
PART_BYTES = 1024 * 1024  # JSON the server joins into one value of a page (an envelope bigger than that goes alone)
GROUP_CONCAT_MAX = 2**30  # no part is cut: each is below PART_BYTES twice, or one envelope (max_allowed_packet is at most 1 GiB)
_PAGE = msgspec.json.Decoder(list[Replicated])


def project_hash(project: str) -> bytes:
    """What the tables index a project by (SHA-256 of its UTF-8)."""
    return hashlib.sha256(project.encode()).digest()


# --------------------------------------------------------------------------- the screen


def _text_problem(name: str, value: str, *, empty_ok: bool) -> str | None:
    if not value and not empty_ok:
        return f"{name} is empty"
    if len(value) > TEXT_LIMITS[name]:
        return f"{name} is {len(value)} characters, over {TEXT_LIMITS[name]}"
    return None


def envelope_problem(ev: Replicated, max_body: int) -> str | None:
    """Why the event tables cannot hold ``ev`` (field named), or None."""
    try:
        for name in ("origin", "type", "author", "project"):
            getattr(ev, name).encode()
    except UnicodeEncodeError:
        return f"{name} is not valid Unicode text (a lone surrogate)"
    problem = (_text_problem("origin", ev.origin, empty_ok=False) or _text_problem("type", ev.type, empty_ok=False)
               or _text_problem("author", ev.author, empty_ok=True))
    if problem:
        return problem
    for name in ("origin_seq", "hlc"):
        value = getattr(ev, name)
        if not 0 <= value <= MAX_INT:
            return f"{name} {value} is outside 0..{MAX_INT}"
    if len(ev.project.encode()) > MAX_PROJECT_BYTES:
        return f"project is over {MAX_PROJECT_BYTES} bytes"
    if len(ev.body) > max_body:
        return f"body is {len(ev.body)} bytes, over the {max_body} one statement of this database takes"
    try:
        _ONE_VALUE.decode(ev.body)
    except msgspec.DecodeError as e:
        return f"body is not one JSON value ({e})"
    return None


def screen_envelopes(events: Sequence[Replicated], max_body: int) -> None:
    """``ConfigError`` naming the first envelope (index, origin, seq) and field the tables cannot hold."""
    if len(events) > MAX_PUSH:
        raise ConfigError(f"at most {MAX_PUSH} envelopes per push (got {len(events)})")
    for i, ev in enumerate(events):
        problem = envelope_problem(ev, max_body)
        if problem:
            raise ConfigError(f"envelope {i} (origin {ev.origin[:80]!r}, origin_seq {ev.origin_seq}): {problem}; "
                              "nothing of this push was stored")


def max_body_bytes(max_packet: int) -> int:
    """The biggest body an envelope may have on a server whose ``max_allowed_packet`` is ``max_packet``: it
    travels as hex (twice its size) in one statement, next to at most ``ROW_FRAME`` bytes of the other fields."""
    return max(0, (max_packet - ROW_FRAME) // 2)


def check_pull(after: int, limit: int) -> None:
    """``ConfigError`` unless ``after`` >= 0 and ``limit`` is in 1..MAX_PULL."""
    if after < 0 or not 1 <= limit <= MAX_PULL:
        raise ConfigError(f"a pull needs after >= 0 and limit in 1..{MAX_PULL} (got after={after}, limit={limit})")


# --------------------------------------------------------------------------- the operations (inside a transaction)


def _held(cur: Any, user_id: int, events: Sequence[Replicated]) -> set[tuple[str, int]]:
    """The (origin, origin_seq) of ``events`` the account holds already.

    A device pushes runs of consecutive seqs: an origin whose seqs fill most of their span is
    looked up as one range of the unique index (nothing to parse but two numbers, and only the
    rows held come back), a sparse one by lists of its seqs.
    """
    by_origin: dict[str, list[int]] = {}
    for ev in events:
        by_origin.setdefault(ev.origin, []).append(ev.origin_seq)
    held: set[tuple[str, int]] = set()
    for origin, seqs in by_origin.items():
        low, high = min(seqs), max(seqs)
        if high - low < 2 * len(seqs):
            cur.execute("SELECT origin_seq FROM gateway_events WHERE user_id = %s AND origin = %s "
                        "AND origin_seq BETWEEN %s AND %s", (user_id, origin, low, high))
            wanted = set(seqs)
            held.update((origin, q) for q in (int(r[0]) for r in cur.fetchall()) if q in wanted)
            continue
        for i in range(0, len(seqs), 1000):
            chunk = seqs[i:i + 1000]
            cur.execute(f"SELECT origin_seq FROM gateway_events WHERE user_id = %s AND origin = %s "
                        f"AND origin_seq IN ({', '.join(['%s'] * len(chunk))})", (user_id, origin, *chunk))
            held.update((origin, int(r[0])) for r in cur.fetchall())
    return held


def insert_statements(escape: Callable[[str], str], user: User, top: int, events: list[Replicated],
                      max_bytes: int = STATEMENT_BYTES) -> Iterator[str]:
    """Multi-row INSERTs of ``events`` at positions ``top + 1``... (each about ``max_bytes`` at most).

    Rendered here rather than by the driver's ``executemany``, whose per-value escaping in
    Python took half of a push: bodies go as hex literals, and the columns an origin's events
    share (user, origin, type, project and its hash, author) are rendered once per batch, so a
    row is four numbers and a body.
    """
    shared: dict[tuple[str, str, str, str], str] = {}
    parts: list[str] = []
    size = 0
    for i, ev in enumerate(events, top + 1):
        key = (ev.origin, ev.type, ev.project, ev.author or user.email)
        tail = shared.get(key)
        if tail is None:
            tail = shared[key] = (f"{user.id},{escape(key[0])},{escape(key[1])},X'{project_hash(key[2]).hex()}',"
                                  f"{escape(key[2])},{escape(key[3])})")
        row = f"({i},{ev.origin_seq},{ev.hlc},X'{memoryview(ev.body).hex()}',{tail}"
        if parts and size + len(row) > max_bytes:
            yield _INSERT_HEAD + ",".join(parts)
            parts, size = [], 0
        parts.append(row)
        size += len(row) + 1
    if parts:
        yield _INSERT_HEAD + ",".join(parts)


def _owners(cur: Any, user: User, origins: list[str]) -> dict[str, int]:
    """The owner (user id) of each origin, recording ``user`` as the owner of those nobody pushed yet."""
    owners: dict[str, int] = {}
    for i in range(0, len(origins), 1000):
        chunk = origins[i:i + 1000]
        cur.execute(f"SELECT origin, user_id FROM gateway_event_devices WHERE origin IN ({', '.join(['%s'] * len(chunk))})",
                    tuple(chunk))
        owners.update((str(o), int(u)) for o, u in cur.fetchall())
    new = [o for o in origins if o not in owners]
    if new:
        cur.executemany("INSERT INTO gateway_event_devices (origin, user_id) VALUES (%s, %s)", [(o, user.id) for o in new])
        owners.update((o, user.id) for o in new)
    return owners


def _recorded_authors(cur: Any, owner_id: int, origin: str, seqs: list[int]) -> dict[int, tuple[str, bool]]:
    """The author stored with each held (origin, seq) of ``origin``'s owner, and whether it was erased."""
    authors: dict[int, tuple[str, bool]] = {}
    for i in range(0, len(seqs), 1000):
        chunk = seqs[i:i + 1000]
        cur.execute(f"SELECT origin_seq, author, LENGTH(body) = 0 FROM gateway_events WHERE user_id = %s "
                    f"AND origin = %s AND origin_seq IN ({', '.join(['%s'] * len(chunk))})", (owner_id, origin, *chunk))
        authors.update((int(q), (str(a), bool(e))) for q, a, e in cur.fetchall())
    return authors


def _authored(cur: Any, user: User, events: Sequence[Replicated], fresh: list[Replicated]) -> list[Replicated]:
    """``fresh`` with the authors the gateway decides (``MemoryEventStore``'s rule), or ``ConfigError``.

    A device ``user`` owns (or pushes first: it becomes ``user``'s): author = ``user``'s e-mail. A
    device of another account: the author its owner's row records (and no body if that row was
    erased: a relayed copy never brings an erased text back); refused if there is none.
    """
    owners = _owners(cur, user, sorted({ev.origin for ev in fresh}))
    foreign: dict[str, list[int]] = {}
    for ev in fresh:
        if owners[ev.origin] != user.id:
            foreign.setdefault(ev.origin, []).append(ev.origin_seq)
    recorded = {o: _recorded_authors(cur, owners[o], o, seqs) for o, seqs in foreign.items()}
    if foreign:  # where the owner's erasure finds this account's copies
        cur.executemany("INSERT IGNORE INTO gateway_event_relays (origin, user_id) VALUES (%s, %s)",
                        [(o, user.id) for o in sorted(foreign)])
    out: list[Replicated] = []
    for ev in fresh:
        if ev.origin not in recorded:  # its author is the pusher (an empty one is written as the pusher)
            out.append(ev if ev.author in ("", user.email) else msgspec.structs.replace(ev, author=user.email))
        elif ev.origin_seq in recorded[ev.origin]:
            author, erased = recorded[ev.origin][ev.origin_seq]
            out.append(msgspec.structs.replace(ev, author=author, body=msgspec.Raw(ERASED) if erased else ev.body))
        else:
            raise refused(events.index(ev), ev)
    return out


def push_events(cur: Any, account: User | str, events: Sequence[Replicated]) -> PushResult:
    """Store the envelopes ``account`` does not hold yet, at the next positions (see the module docstring).

    Takes the counter lock first, so that this transaction's snapshot is read after every push
    that committed before it (``account`` as an e-mail is resolved, created if new, under it).
    """
    cur.execute("SELECT position FROM gateway_event_position WHERE id = 1 FOR UPDATE")
    row = cur.fetchone()
    if row is None:
        raise BackendError("the gateway's event position counter is missing (migration m009 not applied?)")
    top = int(row[0])
    user = account if isinstance(account, User) else resolve_user(cur, account)
    held = _held(cur, user.id, events)
    fresh: list[Replicated] = []
    for ev in events:
        if ev.key not in held:
            held.add(ev.key)
            fresh.append(ev)
    fresh = _authored(cur, user, events, fresh)
    if fresh:
        for stmt in insert_statements(cur.connection.escape, user, top, fresh):
            cur.execute(stmt)
        top += len(fresh)
        cur.execute("UPDATE gateway_event_position SET position = %s WHERE id = 1", (top,))
    return PushResult(len(fresh), len(events) - len(fresh), top)


def _shared_writers(cur: Any, user_id: int) -> list[tuple[bytes, int]]:
    """(project_hash, writer id) pairs whose envelopes ``user_id`` sees besides its own."""
    cur.execute("SELECT DISTINCT owner_id, project_hash FROM gateway_event_shares "
                "WHERE (member_id = %s OR owner_id = %s) AND project <> ''", (user_id, user_id))
    groups = [(int(o), bytes(h)) for o, h in cur.fetchall()]
    if not groups:
        return []
    cur.execute("SELECT project_hash, member_id, read_only FROM gateway_event_shares "
                f"WHERE (owner_id, project_hash) IN ({', '.join(['(%s, %s)'] * len(groups))})",
                tuple(v for g in groups for v in g))
    pairs = {(h, owner) for owner, h in groups}
    pairs.update((bytes(h), int(member)) for h, member, read_only in cur.fetchall() if not read_only)
    return sorted(p for p in pairs if p[1] != user_id)


def _visible_where(cur: Any, user_id: int) -> tuple[str, list[Any]]:
    """The SQL condition (and its parameters) of the envelopes ``user_id`` sees."""
    pairs = _shared_writers(cur, user_id)
    where = "user_id = %s"
    params: list[Any] = [user_id]
    if pairs:
        where += f" OR (project_hash, user_id) IN ({', '.join(['(%s, %s)'] * len(pairs))})"
        params += [v for p in pairs for v in p]
    return where, params


def _page_extent(cur: Any, where: str, params: list[Any], after: int, limit: int, budget: int) -> tuple[int, int, int, bool]:
    """(envelopes seen (at most ``limit + 1``), envelopes taken, the last one's position, whether one taken is
    erased) of a page: the first envelope, then those within ``limit`` and ``budget`` bytes of bodies. The
    server sums the sizes (a window over at most ``limit + 1`` rows) and answers one row."""
    cur.execute("SELECT COUNT(*), COALESCE(SUM(t), 0), COALESCE(MAX(IF(t, position, 0)), 0), COALESCE(MAX(t AND len = 0), 0) "
                "FROM (SELECT position, len, rn <= %s AND (rn = 1 OR cum <= %s) AS t FROM "
                "(SELECT position, len, ROW_NUMBER() OVER (ORDER BY position) AS rn, "
                "SUM(len) OVER (ORDER BY position ROWS UNBOUNDED PRECEDING) AS cum FROM "
                f"(SELECT position, LENGTH(body) AS len FROM gateway_events WHERE position > %s AND ({where}) "
                "ORDER BY position LIMIT %s) l) w) p", (limit, budget, after, *params, limit + 1))
    seen, take, last, erased = cur.fetchone()
    return int(seen), int(take), int(last), bool(erased)


def _page_parts(cur: Any, where: str, params: list[Any], after: int, last: int, erased: bool) -> list[bytes]:
    """The JSON of the envelopes above ``after`` up to ``last``, comma-joined by the server in parts of about
    ``PART_BYTES`` (an envelope bigger than that alone): a few values to parse instead of a row per envelope."""
    cur.execute(f"SET SESSION group_concat_max_len = {GROUP_CONCAT_MAX}")
    cur.execute("SELECT GROUP_CONCAT(j ORDER BY position SEPARATOR ',') FROM "
                f"(SELECT position, j, IF(LENGTH(j) > {PART_BYTES}, -rn, cum DIV {PART_BYTES}) AS g FROM "
                "(SELECT position, j, ROW_NUMBER() OVER (ORDER BY position) AS rn, "
                "SUM(LENGTH(j)) OVER (ORDER BY position ROWS UNBOUNDED PRECEDING) AS cum FROM "
                f"(SELECT position, {_ENVELOPE_JSON} AS j FROM gateway_events WHERE position > %s AND position <= %s "
                f"AND ({where}){' AND LENGTH(body) > 0' if erased else ''}) e) w) g GROUP BY g ORDER BY MIN(position)",
                (after, last, *params))
    return [bytes(r[0]) for r in cur.fetchall()]


def pull_json(cur: Any, user_id: int, after: int, limit: int,
              max_bytes: int | None = None, *, snapshot: bool = True) -> tuple[list[bytes], int, bool]:
    """``pull_events`` as JSON: parts of the page (each the comma-joined JSON of consecutive envelopes, one
    ``Replicated`` object each), the cursor and whether more wait.

    A page holds at most ``limit`` envelopes and, past its first, at most ``max_bytes`` of bodies: its
    extent is read first (``_page_extent``), then the JSON of the envelopes in it (one snapshot). A last
    page's cursor is the highest position of the snapshot (past other accounts' envelopes too). Without
    ``snapshot`` (a READ COMMITTED transaction, whose statements may each see later commits) it is the
    last envelope read: a later statement could see positions the page never held.
    """
    budget = PAGE_BYTES if max_bytes is None else max_bytes
    where, params = _visible_where(cur, user_id)
    seen, take, last, erased = _page_extent(cur, where, params, after, limit, budget)
    parts = _page_parts(cur, where, params, after, last, erased or not snapshot) if take else []
    if take < seen:
        return parts, last, True
    if not snapshot:
        return parts, max(after, last), False
    cur.execute("SELECT COALESCE(MAX(position), 0) FROM gateway_events")
    return parts, max(after, int(cur.fetchone()[0])), False


def pull_events(cur: Any, user_id: int, after: int, limit: int, *, snapshot: bool = True) -> PullPage:
    """The envelopes visible to ``user_id`` above position ``after`` (one snapshot; see the module docstring)."""
    parts, cursor, more = pull_json(cur, user_id, after, limit, snapshot=snapshot)
    return PullPage(_PAGE.decode(b"[" + b",".join(parts) + b"]"), cursor, more)


def page_json(parts: list[bytes], cursor: int, more: bool) -> bytes:
    """The JSON of a ``PullPage`` of these envelopes (``pull_json``'s parts; what the HTTP API answers), without
    decoding them."""
    return b'{"events":[' + b",".join(parts) + b'],"cursor":%d,"more":%s}' % (cursor, b"true" if more else b"false")


def high_water_of(cur: Any, user_id: int, origin: str) -> int:
    """The highest origin_seq of ``origin`` the account holds (0 if none)."""
    cur.execute("SELECT COALESCE(MAX(origin_seq), 0) FROM gateway_events WHERE user_id = %s AND origin = %s",
                (user_id, origin))
    return int(cur.fetchone()[0])


def erase_events(cur: Any, user_id: int, keys: Sequence[tuple[str, int]], *, dry_run: bool = False) -> int:
    """Empty the bodies of the envelopes ``keys`` (origin, origin_seq); how many rows it emptied (``dry_run``: would).

    The rows of ``user_id``'s account, and every account's copies (relays, ``gateway_event_relays``)
    of an origin it owns.
    A row stays, without its body (``ERASED``): its identity and position remain, so a copy
    sent again is a duplicate and ``high_water`` does not move back; pulls skip it.
    """
    by_origin: dict[str, list[int]] = {}
    for origin, seq in keys:
        by_origin.setdefault(origin, []).append(seq)
    owned = set(_owners_of(cur, sorted(by_origin), user_id))
    n = 0
    emptied: set[int] = set()
    for origin, seqs in sorted(by_origin.items()):
        holders = [user_id]
        if origin in owned:
            cur.execute("SELECT user_id FROM gateway_event_relays WHERE origin = %s", (origin,))
            holders += sorted(int(r[0]) for r in cur.fetchall())
        emptied.update(holders)
        for i in range(0, len(seqs), 1000):
            chunk = sorted(set(seqs))[i:i + 1000]
            where = (f"WHERE user_id IN ({', '.join(['%s'] * len(holders))}) AND origin = %s "
                     f"AND origin_seq IN ({', '.join(['%s'] * len(chunk))}) AND LENGTH(body) > 0")
            args = (*holders, origin, *chunk)
            if dry_run:
                cur.execute(f"SELECT COUNT(*) FROM gateway_events {where}", args)
                n += int(cur.fetchone()[0])
            else:
                n += int(cur.execute(f"UPDATE gateway_events SET body = '' {where}", args))
    if n and not dry_run:  # the views that may show an erased body: dropped now, folded again on their next read
        read_model.invalidate(cur, _seeing(cur, emptied), drop=True)
    return n


def _seeing(cur: Any, holders: set[int]) -> set[int]:
    """The accounts whose views may show envelopes of ``holders``: theirs, and those of their shares' members and
    owners."""
    ids = sorted(holders)
    marks = ", ".join(["%s"] * len(ids))
    cur.execute(f"SELECT owner_id, member_id FROM gateway_event_shares WHERE owner_id IN ({marks}) "
                f"OR member_id IN ({marks})", (*ids, *ids))
    return set(ids) | {int(v) for row in cur.fetchall() for v in row}


def _owners_of(cur: Any, origins: list[str], user_id: int) -> list[str]:
    """The origins of ``origins`` that ``user_id`` owns."""
    out: list[str] = []
    for i in range(0, len(origins), 1000):
        chunk = origins[i:i + 1000]
        cur.execute(f"SELECT origin FROM gateway_event_devices WHERE user_id = %s "
                    f"AND origin IN ({', '.join(['%s'] * len(chunk))})", (user_id, *chunk))
        out += [str(r[0]) for r in cur.fetchall()]
    return out


def share_project(cur: Any, owner: User, project: str, member: str, read_only: bool) -> None:
    """Show ``owner``'s ``project`` to ``member`` (an e-mail; the user is created if new)."""
    if len(project.encode()) > MAX_PROJECT_BYTES:
        raise ConfigError(f"project is over {MAX_PROJECT_BYTES} bytes")
    m = resolve_user(cur, member)
    cur.execute("INSERT INTO gateway_event_shares (owner_id, project_hash, member_id, project, read_only) "
                "VALUES (%s, %s, %s, %s, %s) ON DUPLICATE KEY UPDATE read_only = VALUES(read_only)",
                (owner.id, project_hash(project), m.id, project, int(read_only)))
    read_model.invalidate(cur, [owner.id, m.id])  # what both see changed: their views fold again


def unshare_project(cur: Any, owner: User, project: str, member: str) -> bool:
    """Stop showing ``owner``'s ``project`` to ``member``; True if it was shown."""
    m = _find_user(cur, member)
    if m is None:
        return False
    removed = bool(cur.execute("DELETE FROM gateway_event_shares WHERE owner_id = %s AND project_hash = %s "
                               "AND member_id = %s", (owner.id, project_hash(project), m.id)))
    if removed:
        read_model.invalidate(cur, [owner.id, m.id], drop=True)  # the member no longer sees it: gone now
    return removed


def shares_of(cur: Any, user_id: int) -> list[Share]:
    """Every share ``user_id`` owns or is a member of (by owner, project, member)."""
    cur.execute("SELECT o.email, s.project, m.email, s.read_only FROM gateway_event_shares s "
                "JOIN gateway_users o ON o.id = s.owner_id JOIN gateway_users m ON m.id = s.member_id "
                "WHERE s.owner_id = %s OR s.member_id = %s ORDER BY o.email, s.project, m.email", (user_id, user_id))
    return [Share(o, p, m, bool(ro)) for o, p, m, ro in cur.fetchall()]


def _find_user(cur: Any, account: str) -> User | None:
    try:
        return resolve_user(cur, normalize_email(account), create=False)
    except NotFound:
        return None


# --------------------------------------------------------------------------- transactions


def _code(e: BaseException | None) -> int:
    args: tuple[Any, ...] = getattr(e, "args", ())
    return args[0] if args and isinstance(args[0], int) else 0


def retrying(conn: Connection, fn: Callable[[Any], T], *, doing: str, isolation: str = "") -> T:
    """``conn.transaction(fn)``, run again after a deadlock, certification conflict or lock timeout (many times,
    with a random back-off) or a dropped connection (a few times)."""
    transient = dropped = 0
    while True:
        try:
            return conn.transaction(fn, doing=doing, isolation=isolation)
        except BackendError as e:
            code = _code(e.__cause__)
            if code in TRANSIENT and transient < TRANSIENT_RETRIES:
                transient += 1
            elif code in DROPPED and dropped < DROPPED_RETRIES:
                dropped += 1
            else:
                raise
            time.sleep(random.uniform(0, min(0.2, 0.002 * 2 ** min(transient + dropped, 10))))


class MySQLEventStore:
    """``EventStore`` on a MySQL/MariaDB gateway database (see the module docstring). Thread-safe.

    ``before_commit`` (fault injection for tests) runs inside each push's transaction, after
    its envelopes are inserted and before it commits.
    """

    def __init__(self, dsn: str | DSN | Pool | None = None, *, pool_size: int = 8, timeouts: Timeouts | None = None,
                 before_commit: Callable[[], None] | None = None) -> None:
        self.pool = dsn if isinstance(dsn, Pool) else Pool(dsn, size=pool_size, timeouts=timeouts)
        self.pool.migrate()
        self.before_commit = before_commit
        self._max_body: int | None = None

    def max_body(self) -> int:
        """The biggest envelope body one statement of this database takes (``max_body_bytes``)."""
        if self._max_body is None:
            self._max_body = max_body_bytes(self.pool.max_packet)
        return self._max_body

    def push(self, account: str, events: Sequence[Replicated]) -> PushResult:
        screen_envelopes(events, self.max_body())
        email = normalize_email(account)

        def run(cur: Any) -> PushResult:
            result = push_events(cur, email, events)
            if self.before_commit is not None:
                self.before_commit()
            return result

        with self.pool.connection() as conn:
            return retrying(conn, run, doing="pushing events")

    def _read(self, account: str, fn: Callable[[Any, int], T], doing: str) -> T:
        email = normalize_email(account)

        def run(cur: Any) -> T:
            user = _find_user(cur, email)
            return fn(cur, user.id if user else 0)  # no user has id 0: an unknown account sees nothing

        with self.pool.connection() as conn:
            return retrying(conn, run, doing=doing)

    def pull(self, account: str, after: int, limit: int = 1000) -> PullPage:
        check_pull(after, limit)
        return self._read(account, lambda cur, uid: pull_events(cur, uid, after, limit), "pulling events")

    def high_water(self, account: str, origin: str) -> int:
        return self._read(account, lambda cur, uid: high_water_of(cur, uid, origin), "reading a high water mark")

    def shares(self, account: str) -> list[Share]:
        return self._read(account, shares_of, "listing shares")

    def erase(self, account: str, keys: Sequence[tuple[str, int]]) -> int:
        """Empty the stored bodies of ``keys`` (``erase_events``; ``evlog erase`` does it with its gateway rows)."""
        return self._read(account, lambda cur, uid: erase_events(cur, uid, keys) if uid else 0, "erasing events")

    def share(self, owner: str, project: str, member: str, *, read_only: bool = False) -> None:
        o, m = normalize_email(owner), normalize_email(member)
        with self.pool.connection() as conn:
            retrying(conn, lambda cur: share_project(cur, resolve_user(cur, o), project, m, read_only),
                     doing="sharing a project")

    def unshare(self, owner: str, project: str, member: str) -> bool:
        o, m = normalize_email(owner), normalize_email(member)

        def run(cur: Any) -> bool:
            user = _find_user(cur, o)
            return user is not None and unshare_project(cur, user, project, m)

        with self.pool.connection() as conn:
            return retrying(conn, run, doing="unsharing a project")

    def close(self) -> None:
        self.pool.close()
