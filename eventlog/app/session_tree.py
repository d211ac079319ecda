"""Sessions as a person sees them: subagent sessions nested under their parent, probes folded, short keys.

* **Nesting.** A session whose ``metadata.parent_session`` names another listed session
  (Claude Code's subagent and inline sidechain sessions, ``eventlog.ingest.claude_code``)
  is a child of it; children are listed under their parent oldest first, and the
  top level keeps the store's order (newest ``updated_at`` first). A child whose parent
  is not listed stays at the top level.
* **Probes.** A child session of at most ``PROBE_MESSAGES`` (2) messages, one prompt and
  at most one reply, did no work the parent does not already show (Claude Code's
  ``Warmup`` agents are the common case, but the rule is the shape, not a word): it is
  folded away, counted in its parent's ``probes`` (a probe whose parent is not listed is
  left out, uncounted), unless probes are asked for.
* **Short keys.** ``short_keys`` gives each key the shortest form that no other listed
  key shares, segment by segment (``/`` separates a parent's key from its child's part):
  each segment keeps at least its source prefix (up to ``:``, else ``-``) and
  ``MIN_ID_CHARS`` characters, and more when a sibling starts the same way.
  ``resolve_key`` maps a whole key or such a short form back to the key.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from eventlog.errors import NotFound
from projections.sessions import SessionInfo

PROBE_MESSAGES = 2
MIN_ID_CHARS = 8


class SessionNode(msgspec.Struct, kw_only=True):
    """One listed session, its short key, its nested children and how many probes were folded."""

    info: SessionInfo
    short_key: str
    children: list[SessionNode] = []
    probes: int = 0


def parent_key(info: SessionInfo) -> str:
    """The key of the session ``info`` was spawned from ("" for a top-level session)."""
    parent = info.metadata.get("parent_session")
    return parent if isinstance(parent, str) and parent != info.key else ""


def is_probe(info: SessionInfo) -> bool:
    """Whether ``info`` is a child session that did no work of its own (see the module docstring)."""
    return bool(parent_key(info)) and info.message_count <= PROBE_MESSAGES


def session_tree(sessions: list[SessionInfo], *, probes: bool = False) -> list[SessionNode]:
    """``sessions`` (in the store's order) as top-level nodes with their children nested."""
    shorts = short_keys(s.key for s in sessions)
    nodes = {s.key: SessionNode(info=s, short_key=shorts[s.key]) for s in sessions}
    top: list[SessionNode] = []
    for s in sessions:
        parent = nodes.get(parent_key(s))
        if parent is not None and _is_ancestor(nodes, s.key, parent.info):
            parent = None  # a parent cycle: keep the session at the top
        if is_probe(s) and not probes:
            if parent is not None:
                parent.probes += 1
        elif parent is None:
            top.append(nodes[s.key])
        else:
            parent.children.append(nodes[s.key])
    for node in nodes.values():
        node.children.sort(key=lambda n: (n.info.created_at, n.info.key))
    return top


def _is_ancestor(nodes: dict[str, SessionNode], key: str, start: SessionInfo) -> bool:
    """Whether ``key`` is ``start`` or one of its ancestors (a parent cycle: keep ``key`` at the top)."""
    seen: set[str] = set()
    cur: SessionInfo | None = start
    while cur is not None and cur.key not in seen:
        if cur.key == key:
            return True
        seen.add(cur.key)
        node = nodes.get(parent_key(cur))
        cur = node.info if node is not None else None
    return False


def walk(nodes: list[SessionNode], depth: int = 0) -> Iterable[tuple[int, SessionNode]]:
    """(depth, node) for every node, parents before their children."""
    for node in nodes:
        yield depth, node
        yield from walk(node.children, depth + 1)


def _floor(segment: str) -> int:
    """How many characters of a key segment a short form keeps at least."""
    cut = segment.find(":")
    if cut < 0:
        cut = segment.find("-")
    return min(len(segment), cut + 1 + MIN_ID_CHARS)


def _common(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _shortest_of(siblings: set[str]) -> dict[str, str]:
    """Each sibling's shortest prefix (at least its floor) that starts no other sibling.

    In sorted order the sibling sharing the longest prefix with a value is a neighbour,
    so one pass over the sorted values does it (n log n, not n squared).
    """
    ordered = sorted(siblings)
    out = {}
    for i, value in enumerate(ordered):
        shared = max(_common(value, ordered[i - 1]) if i else 0,
                     _common(value, ordered[i + 1]) if i + 1 < len(ordered) else 0)
        out[value] = value[:max(_floor(value), shared + 1)]
    return out


def short_keys(keys: Iterable[str]) -> dict[str, str]:
    """Each key's unique short form (see the module docstring)."""
    split = {k: k.split("/") for k in keys}
    groups: dict[tuple[str, ...], set[str]] = {}
    for parts in split.values():
        for i, part in enumerate(parts):
            groups.setdefault(tuple(parts[:i]), set()).add(part)
    shortest = {parent: _shortest_of(values) for parent, values in groups.items()}
    return {k: "/".join(shortest[tuple(parts[:i])][p] for i, p in enumerate(parts)) for k, parts in split.items()}


def resolve_key(wanted: str, keys: Iterable[str]) -> str:
    """The key ``wanted`` names: itself, or the one key it is a segment-by-segment short form of.

    Raises ``NotFound`` naming the candidates when none or several match.
    """
    keys = list(keys)
    if wanted in keys:
        return wanted
    by_short = {short: key for key, short in short_keys(keys).items()}
    if wanted in by_short:  # the form 'evlog sessions' shows (also when one sibling's id starts another's)
        return by_short[wanted]
    parts = wanted.split("/")
    found = [k for k in keys if len(k.split("/")) == len(parts)
             and all(seg.startswith(p) for seg, p in zip(k.split("/"), parts, strict=True))]
    if len(found) == 1:
        return found[0]
    if not found:
        raise NotFound(f"no session {wanted!r} (see 'evlog sessions')")
    shown = ", ".join(sorted(found)[:5]) + (" ..." if len(found) > 5 else "")
    raise NotFound(f"{wanted!r} names {len(found)} sessions ({shown}); give more of the key")
