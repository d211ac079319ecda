"""Incremental ingest of a growing transcript: read only the bytes added since the last read.

``ingest_file(log, path, state_dir=...)`` ingests what a transcript file gained since the
last call for that file and gives the same events, once appended, as ingesting the whole
file again with ``eventlog.ingest.ingest_paths`` would (dedup keys, message ids, merged
Claude responses, tool names, subagent and sidechain sessions, titles): the result equals
a full ingest of the final file whatever chunks the file grew in, including chunks that
end inside a line or inside a multi-byte character (``tests/ingest/test_incremental.py`` checks
it on the real transcripts with Hypothesis). The one difference: a session's
``created_at`` is the earliest message time seen when the session was first ingested
(``session.created`` is written once); later metadata keys (Claude Code's ``slug``, Codex's
``model``) are added with ``session.updated``.

**Position and fingerprint.** Each source file has a small state file,
``<state_dir>/sources/<xxh3 of its real path>.json``, like a processor's offset: the byte
position read up to (always the end of a complete line), the line count, the file's device
and inode, and the xxh3 of the first and of the last 4 KiB before the position. A file
whose inode changed, that shrank below the position, or whose fingerprints no longer
match (rewritten, rotated, replaced by a shorter one) is read again from the start: safe,
because every event carries a dedup key derived from the source, so what the log already
has is not written again. The state is disposable (deleting it costs one full re-read).
Its name and the quick "may it hold new lines?" check (``needs_ingest``) are in
``eventlog.source_state``, which a capture hook can ask without importing this module.

**Partial lines.** Only complete lines (ending in ``\\n``) are read; a line still being
written is left for the next call, so a chunk may end anywhere. ``final=True`` (the writer
is done, e.g. at a Claude Code ``SessionEnd``) also takes an unterminated last line if it
is valid JSON.

**Long lines.** Lines are read with ``eventlog.ingest.lines`` (bounded chunks): a line over
``max_line`` (8 MiB) is never held whole; it is read with its long strings cut, or skipped,
with a warning in ``result.file.warnings`` naming file and line, and the position moves past
it. A call stopped by ``max_bytes`` is marked in the state (``capped``), so ``needs_ingest``
says the next hook should read on even if the file did not change.

**What each format needs from the bytes already read** (kept in the state, so a call costs
what the new bytes cost, not the file):

* Claude Code: the lines of each session's response that is still open (one API
  response is written as several lines, possibly across calls: its lines are parsed
  again with the new ones, and a grown response becomes ``message.updated``, as on a
  re-ingest), tool names by ``tool_use`` id (a ``tool_result`` names its tool), each
  subagent's first ``sessionId``, the root of each inline sidechain line (older
  versions), each session's first ``cwd`` (an inline sidechain's project), the metadata
  keys already recorded, and ``summary`` lines whose leaf has not been seen yet. A
  ``summary`` whose leaf was read in an earlier call makes the call parse the whole file
  (rare: Claude Code writes summaries before their leaves, or in other files).
* Codex: the ``session_meta`` line, the latest ``turn_context`` line, and how often each
  message hash occurred (ids of repeated items are ``<hash>#n``, see
  ``eventlog.ingest.model.StableIds``).
* nanobot: the metadata line and the hash counts. nanobot rewrites its file on every save
  (line 1 changes), so in practice its small files are read whole each time.
* catbuddy / evlog session files are snapshots rewritten by their harness: always read
  whole (when they changed).

Concurrent callers for one file take turns on ``<state_dir>/sources/<key>.lock``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec
import xxhash

from eventlog.errors import ConfigError, IngestError
from eventlog.events import Event, SessionUpdated
from eventlog.fsio import OS_FS
from eventlog.ingest import (
    FORMAT_CHOICES,
    FileResult,
    _append,
    _redact,
    _resolve_titles,
    catbuddy,
    claude_code,
    codex,
    nanobot,
)
from eventlog.ingest.detect import BOM, bad_line_reason, describe, detect
from eventlog.ingest.lines import Line, iter_lines, long_line_warning
from eventlog.ingest.model import ParsedFile, Summary
from eventlog.ingest.source import open_source, refuse_workspace_files
from eventlog.lock import FileLock
from eventlog.source_state import STATE_VERSION, needs_ingest, source_key, state_path

__all__ = ["SourceResult", "SourceState", "ingest_file", "load_state", "needs_ingest", "source_key", "state_path"]

FINGERPRINT_BYTES = 4096
#: Metadata keys a parser derives from a session's structure (known when it is created):
#: never "added later" as metadata updates.
STRUCTURAL_KEYS = frozenset({"source_format", "sessionId", "session_id", "agentId", "parent_session",
                             "sidechain_root", "warmup"})
_SYNTHETIC = "progress"  # the record type context lines are given: the Claude parser skips it (no message)


class OpenResponse(msgspec.Struct):
    """A Claude response whose lines may continue in the next chunk."""

    api_id: str
    lines: list[tuple[int, str]]  # (line number, raw line)


class SourceState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What is known about one source file between calls (see the module docstring)."""

    version: int = STATE_VERSION
    path: str = ""
    format: str = ""
    dev: int = 0
    ino: int = 0
    position: int = 0  # bytes read: always the end of a complete line (or of a final unterminated one)
    line: int = 0  # lines read
    partial_taken: bool = False  # the last line read had no newline yet (final=True): skip its newline later
    head: str = ""  # xxh3-64 of bytes [0, min(position, 4096))
    tail: str = ""  # xxh3-64 of bytes [max(0, position - 4096), position)
    size: int = 0  # the file's size and mtime when last read (a cheap "did it change" for watchers)
    mtime_ns: int = 0
    error: str = ""  # the last error at this size/mtime ("" when the last call went well)
    capped: bool = False  # the last call stopped at max_bytes: complete lines are waiting (read at the next call)
    # what later lines need from the lines already read
    context: list[tuple[int, str]] = []  # codex: session_meta (+ latest turn_context); nanobot: metadata line
    counts: dict[str, int] = {}  # StableIds hash -> occurrences read
    tools: dict[str, str] = {}  # claude: tool_use id -> tool name
    agents: dict[str, str] = {}  # claude: agentId -> sessionId of its first line
    roots: dict[str, str] = {}  # claude: inline sidechain line uuid -> root uuid
    open: dict[str, OpenResponse] = {}  # claude: session key -> its open response
    cwds: dict[str, str] = {}  # claude: session key -> first cwd
    meta: dict[str, list[str]] = {}  # session key -> metadata keys the log has for it
    summaries: list[tuple[str, str, int]] = []  # claude: (leaf uuid, title, line) of every summary read
    leaves: dict[str, tuple[str, str]] = {}  # claude: leaf uuid -> (session key, timestamp), for summaries


@dataclass
class SourceResult:
    """What one ``ingest_file`` call did.

    ``mode``: ``unchanged`` (nothing new), ``waiting`` (only part of a line is new),
    ``incremental`` (new lines read with the kept context), ``full`` (the file was read
    from its start: first read, or ``reset`` says why). ``file`` is the usual per-file
    result (sessions, new messages, duplicates, events, error, notes).
    """

    path: str
    mode: str = "unchanged"
    reset: str = ""
    bytes_read: int = 0
    position: int = 0
    size: int = 0
    pending_bytes: int = 0  # bytes after the position (a line still being written, or what max_bytes left)
    capped: bool = False  # max_bytes stopped the read: more complete lines are waiting
    file: FileResult = field(default_factory=lambda: FileResult(""))

    @property
    def ok(self) -> bool:
        return self.file.error is None

    @property
    def error(self) -> str | None:
        return self.file.error


_state_decoder = msgspec.json.Decoder(SourceState)
_state_encoder = msgspec.json.Encoder()


def load_state(state_dir: str, path: str) -> SourceState | None:
    """The saved state of ``path`` (None if there is none, or it cannot be read: it is disposable)."""
    try:
        with open(state_path(state_dir, path), "rb") as f:
            st = _state_decoder.decode(f.read())
    except (OSError, msgspec.MsgspecError):
        return None
    if st.version != STATE_VERSION or st.path != os.path.realpath(path):
        return None
    return st


def _save_state(state_dir: str, path: str, st: SourceState) -> None:
    target = state_path(state_dir, path)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    OS_FS.atomic_write(target, _state_encoder.encode(_as_saved(st)), sync=False)


def _as_saved(st: SourceState) -> SourceState:
    """``st`` without secrets (INVARIANTS I24: no file under the workspace holds one).

    The kept raw lines (Codex and nanobot context, open Claude responses) are decoded,
    redacted and encoded again (still JSON for the next read: a text-level redaction could
    cut an escape); summary titles and the error are redacted. A state without secrets is
    saved as it is.
    """
    from eventlog.secrets import redact

    changes: dict[str, Any] = {}
    context = [(n, _redacted_line(raw)) for n, raw in st.context]
    if context != st.context:
        changes["context"] = context
    opened = {k: OpenResponse(o.api_id, [(n, _redacted_line(raw)) for n, raw in o.lines]) for k, o in st.open.items()}
    if opened != st.open:
        changes["open"] = opened
    summaries = [(leaf, redact(title)[0], n) for leaf, title, n in st.summaries]
    if summaries != st.summaries:
        changes["summaries"] = summaries
    if st.error and redact(st.error)[1]:
        changes["error"] = redact(st.error)[0]
    return msgspec.structs.replace(st, **changes) if changes else st


def _redacted_line(raw: str) -> str:
    from eventlog.secrets import redact, redact_value

    try:
        value, kinds = redact_value(msgspec.json.decode(raw.encode("utf-8", "surrogatepass")))
        return msgspec.json.encode(value).decode() if kinds else raw
    except (msgspec.MsgspecError, UnicodeError):
        return redact(raw)[0]  # not JSON (never written so): redact the text


# --- reading lines ------------------------------------------------------------------------------


class _Rec:
    """One decoded line: its number, value and raw bytes."""

    __slots__ = ("line", "raw", "value")

    def __init__(self, line: int, value: Any, raw: bytes) -> None:
        self.line, self.value, self.raw = line, value, raw


def _decode_lines(lines: Iterable[Line], first_line: int, *, at_start: bool, final: bool, skip_newline: bool,
                  cap: int | None, path: str, warnings: list[str], max_line: int | None
                  ) -> tuple[list[_Rec], int, int, bool]:
    """Complete lines as records, as ``detect.read_records`` reads them, up to ``cap`` bytes (at least one line).

    Returns (records, bytes consumed, lines consumed, whether an unterminated last line was taken).
    Raises ``IngestError`` (with the line number) at the first line that is not JSON. An
    unterminated last line is taken only with ``final`` (and if it is JSON); lines over the
    line limit come cut or skipped (``eventlog.ingest.lines``), with a line in ``warnings``.
    """
    records: list[_Rec] = []
    consumed = 0
    lineno = first_line
    took_partial = False
    decode = msgspec.json.decode
    for i, ln in enumerate(lines):
        if i == 0 and skip_newline and ln.terminated and ln.size == 1:
            consumed = 1  # the newline ending a line already taken unterminated
            continue
        if cap is not None and consumed + ln.size > cap and lineno > first_line:
            break  # the rest is read by the next call
        if not ln.terminated and not final:
            break  # still being written: leave it (a long one is not even shortened)
        raw = ln.raw[3:] if at_start and lineno == first_line and ln.raw.startswith(BOM) else ln.raw
        line = raw.rstrip(b"\r\n")
        if not ln.terminated:
            if not (line.strip() and not ln.skipped and _is_json(line)):
                break  # still being written: leave it
            took_partial = True
        lineno += 1
        consumed += ln.size
        if ln.oversized:
            warnings.append(long_line_warning(path, lineno, ln, max_line))
        if not line.strip():
            continue
        try:
            value = decode(line)
        except msgspec.MsgspecError as e:
            raise IngestError(bad_line_reason(line, e, last=took_partial), line=lineno) from None
        records.append(_Rec(lineno, value, line))
    return records, consumed, lineno - first_line, took_partial


def _is_json(line: bytes) -> bool:
    try:
        msgspec.json.decode(line)
    except msgspec.MsgspecError:
        return False
    return True


# --- the formats ----------------------------------------------------------------------------------


def _parse(fmt: str, records: list[_Rec], path: str) -> ParsedFile:
    from eventlog.ingest import FORMATS

    try:
        return FORMATS[fmt](((r.line, r.value) for r in records), path)
    except RecursionError:
        raise IngestError("nested too deeply to read") from None


def _ctx(line: int, raw: str) -> _Rec:
    data = raw.encode("utf-8", "surrogatepass")
    return _Rec(line, msgspec.json.decode(data), data)


class _Chunk:
    """The outcome of parsing new lines: the parsed model and the titles its summaries give."""

    def __init__(self, pf: ParsedFile, titles: list[tuple[str, str, str]] | None = None) -> None:
        self.pf = pf
        self.titles = titles or []


def _renumber(pf: ParsedFile, st: SourceState) -> None:
    """Make chunk-local StableIds ids (``h``, ``h#2``...) global with the counts read before."""
    counts = st.counts
    for s in pf.sessions:
        for m in s.messages:
            base, _, n = m.message_id.partition("#")
            k = counts.get(base, 0) + (int(n) if n.isdigit() else 1)
            m.message_id = base if k == 1 else f"{base}#{k}"
    for s in pf.sessions:
        for m in s.messages:
            base, _, n = m.message_id.partition("#")
            k = int(n) if n.isdigit() else 1
            if k > counts.get(base, 0):
                counts[base] = k


def _parse_headed(fmt: str, st: SourceState, new: list[_Rec], path: str) -> _Chunk:
    """nanobot / codex: the kept head (and codex's latest turn_context) before the new lines."""
    ctx = [_ctx(line, raw) for line, raw in st.context]
    pf = _parse(fmt, ctx + new, path)
    _renumber(pf, st)
    if not st.context and new:
        st.context = [(new[0].line, new[0].raw.decode("utf-8", "surrogatepass"))]
    if fmt == codex.FORMAT:
        last = next((r for r in reversed(new) if isinstance(r.value, dict) and r.value.get("type") == "turn_context"), None)
        if last is not None:
            st.context = st.context[:1] + [(last.line, last.raw.decode("utf-8", "surrogatepass"))]
    return _Chunk(pf)


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _claude_context(st: SourceState, new: list[_Rec]) -> list[_Rec]:
    """Synthetic and kept lines the Claude parser needs before the new lines (see the module docstring)."""
    ctx: list[_Rec] = []
    for agent, sid in st.agents.items():  # the parser takes an agent's session from its first line
        ctx.append(_Rec(0, {"type": _SYNTHETIC, "uuid": f"evlog-context:agent:{agent}", "isSidechain": True,
                            "agentId": agent, "sessionId": sid}, b""))
    kept = [_ctx(line, raw) for resp in st.open.values() for line, raw in resp.lines]
    if st.roots:
        chained: set[str] = set()
        for r in kept + new:
            v = r.value
            if not isinstance(v, dict) or v.get("isSidechain") is not True or v.get("agentId"):
                continue
            parent = _str(v.get("parentUuid"))
            if parent not in st.roots:
                continue
            root = st.roots[parent]  # an inline sidechain continues: its parent and root stand in for its lines
            sid = _str(v.get("sessionId"))
            for uuid, up in ((root, None), (parent, root)):
                if uuid not in chained:
                    chained.add(uuid)
                    ctx.append(_Rec(0, {"type": _SYNTHETIC, "uuid": uuid, "parentUuid": up, "isSidechain": True,
                                        "sessionId": sid}, b""))
    return ctx + kept


def _claude_summaries_need_full(st: SourceState, new: list[_Rec]) -> bool:
    """True when a new summary line points at a line read in an earlier call (its session is not kept)."""
    known_new = {_str(r.value.get("uuid")) for r in new if isinstance(r.value, dict)}
    for r in new:
        v = r.value
        if isinstance(v, dict) and v.get("type") == "summary":
            leaf = v.get("leafUuid")
            if isinstance(leaf, str) and leaf and leaf not in known_new and leaf not in st.leaves:
                return True
    return False


def _parse_claude(st: SourceState, new: list[_Rec], path: str) -> _Chunk:
    stem = os.path.basename(path)
    stem = stem[: -len(".jsonl")] if stem.endswith(".jsonl") else stem
    ctx = _claude_context(st, new)
    records = ctx + new
    pf = claude_code.parse(((r.line, r.value) for r in records), path)
    first_new = new[0].line if new else 0
    _name_earlier_tool_results(st, pf, first_new)
    _inherit_parent_project(st, pf)
    # --- the state for the next call
    _remember_tools_and_cwds(st, pf)
    _remember_sidechains(st, new, stem)
    _track_open(st, ctx, new, pf)
    return _Chunk(pf, _resolve_summaries(st, pf, path))


def _name_earlier_tool_results(st: SourceState, pf: ParsedFile, first_new: int) -> None:
    """Tool results whose tool_use was read in an earlier call: name them as a full parse would."""
    if not st.tools:
        return
    for s in pf.sessions:
        for m in s.messages:
            if m.role == "tool" and "name" not in m.extra and m.line >= first_new:
                tid = m.extra.get("tool_use_id")
                if isinstance(tid, str) and tid in st.tools:
                    m.extra = _with_name(m.extra, st.tools[tid])


def _inherit_parent_project(st: SourceState, pf: ParsedFile) -> None:
    """An inline sidechain's or subagent's project is its parent session's first cwd."""
    for s in pf.sessions:
        parent = s.metadata.get("parent_session")
        if isinstance(parent, str) and parent in st.cwds:
            s.project = st.cwds[parent]


def _remember_tools_and_cwds(st: SourceState, pf: ParsedFile) -> None:
    """Keep each tool call's name by its id, and each session's first cwd, for the next call."""
    for s in pf.sessions:
        for m in s.messages:
            for call in m.tool_calls or ():
                if isinstance(call, dict) and isinstance(call.get("function"), dict):
                    st.tools[str(call.get("id", ""))] = str(call["function"].get("name", ""))
        cwd = s.metadata.get("cwd")
        cwd = cwd if isinstance(cwd, str) else ""
        if not st.cwds.get(s.key):
            st.cwds[s.key] = cwd


def _remember_sidechains(st: SourceState, new: list[_Rec], stem: str) -> None:
    """Keep each subagent's session, and the root of each inline sidechain record, for the next call."""
    info: dict[str, tuple[str, bool, str]] = {}
    for r in new:
        v = r.value
        if not isinstance(v, dict):
            continue
        uuid = _str(v.get("uuid"))
        if not uuid:
            continue
        side = v.get("isSidechain") is True
        agent = _str(v.get("agentId"))
        info[uuid] = (_str(v.get("parentUuid")), side, agent)
        if side and agent and agent not in st.agents:
            st.agents[agent] = _str(v.get("sessionId")) or stem
    for uuid, (_parent, side, agent) in info.items():
        if side and not agent:
            st.roots[uuid] = _root(uuid, info, st.roots)


def _resolve_summaries(st: SourceState, pf: ParsedFile, path: str) -> list[tuple[str, str, str]]:
    """Summaries: resolve those whose leaf is known now (titles are written once per leaf and title)."""
    st.summaries.extend((s.leaf_uuid, s.title, s.line) for s in pf.summaries)
    wanted = {leaf for leaf, _t, _l in st.summaries if leaf not in st.leaves}
    for uuid in wanted & pf.uuids.keys():
        st.leaves[uuid] = pf.uuids[uuid]
    titles: list[tuple[str, str, str]] = []
    if st.summaries:
        known = [(0, Summary(leaf, title, line)) for leaf, title, line in st.summaries if leaf in st.leaves]
        leaves = {leaf: (key, ts, 0) for leaf, (key, ts) in st.leaves.items()}
        by_file, _notes = _resolve_titles([path], known, leaves)
        titles = by_file.get(0, [])
    return titles


def _with_name(extra: dict[str, Any], name: str) -> dict[str, Any]:
    """``extra`` with ``name`` right after ``tool_use_id`` (the order the parser builds)."""
    out: dict[str, Any] = {}
    for k, v in extra.items():
        out[k] = v
        if k == "tool_use_id":
            out["name"] = name
    if "name" not in out:
        out["name"] = name
    return out


def _root(uuid: str, info: dict[str, tuple[str, bool, str]], roots: dict[str, str]) -> str:
    """The first line of the inline sidechain ``uuid`` is on (as ``claude_code._SessionKeys.root``)."""
    seen: set[str] = set()
    cur = uuid
    while True:
        seen.add(cur)
        parent = info[cur][0] if cur in info else ""
        if not parent:
            return cur
        if parent in info:
            _p, side, agent = info[parent]
            if not side or agent or parent in seen:
                return cur
            cur = parent
            continue
        if parent in roots:
            return roots[parent]
        return cur


def _track_open(st: SourceState, ctx: list[_Rec], new: list[_Rec], pf: ParsedFile) -> None:
    """Which response of each session is still open after these lines (as the parser decides it)."""
    keys = {uuid: key for uuid, (key, _ts) in pf.uuids.items()}
    opened: dict[str, OpenResponse] = {}
    for r in [c for c in ctx if c.raw] + new:
        v = r.value
        if not isinstance(v, dict):
            continue
        kind = v.get("type")
        uuid = _str(v.get("uuid"))
        key = keys.get(uuid)
        if key is None or not uuid:
            continue
        if kind == "system":
            if v.get("subtype") == "local_command":
                opened.pop(key, None)
        elif kind == "user":
            msg = v.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            if not (isinstance(content, list) and content
                    and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)):
                opened.pop(key, None)
        elif kind == "assistant":
            msg = v.get("message")
            api_id = _str(msg.get("id")) if isinstance(msg, dict) else ""
            cur = opened.get(key)
            raw = r.raw.decode("utf-8", "surrogatepass")
            if cur is None or not api_id or cur.api_id != api_id:
                opened[key] = OpenResponse(api_id, [(r.line, raw)])
            else:
                cur.lines.append((r.line, raw))
    st.open = opened


# --- ingesting one file --------------------------------------------------------------------------


def _fingerprints(f: Any, position: int) -> tuple[str, str]:
    head_len = min(position, FINGERPRINT_BYTES)
    head = os.pread(f.fileno(), head_len, 0) if head_len else b""
    tail_start = max(0, position - FINGERPRINT_BYTES)
    tail = os.pread(f.fileno(), position - tail_start, tail_start) if position else b""
    return xxhash.xxh3_64_hexdigest(head), xxhash.xxh3_64_hexdigest(tail)


def _reset_reason(st: SourceState, f: Any, s: os.stat_result) -> str:
    if not st.position and not st.line:
        return ""
    if (s.st_dev, s.st_ino) != (st.dev, st.ino):
        return "the file was replaced (new inode)"
    if s.st_size < st.position:
        return f"the file shrank below the position read ({s.st_size} < {st.position} bytes)"
    if _fingerprints(f, st.position) != (st.head, st.tail):
        return "the bytes already read changed (rewritten)"
    return ""


def ingest_file(
    log: Any,
    path: str,
    *,
    state_dir: str,
    fmt: str = "auto",
    project: str = "",
    final: bool = False,
    max_bytes: int | None = None,
    lock_timeout: float = 5.0,
    max_line: int | None = None,
) -> SourceResult:
    """Ingest what ``path`` gained since the last call (see the module docstring) into ``log``.

    ``log`` is an open, writable ``eventlog.log.Log`` (or a callable returning one, called
    only when there is something to append). ``max_bytes`` caps the new bytes read in one
    call (whole lines; the rest is read by the next call): it bounds the time a call takes.
    A file that cannot be read raises ``NotFound``/``IngestError``; a malformed line is
    reported in ``result.file.error`` (``path:line: reason``) with nothing of the chunk
    appended, and the position stays before it. A line over ``max_line`` bytes
    (``lines.MAX_LINE_BYTES``, 8 MiB) is never held whole: it is read with its long strings cut
    (or skipped), said in ``result.file.warnings``, and the position moves past it.
    """
    if fmt not in FORMAT_CHOICES:
        raise ConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMAT_CHOICES)}")
    real = os.path.realpath(path)
    refuse_workspace_files(path)  # before its position lock is made (open_source checks again)
    lock = FileLock(state_path(state_dir, path)[: -len(".json")] + ".lock", what=f"the ingest position of {path}")
    lock.acquire(lock_timeout)
    try:
        with open_source(path) as f:
            return _ingest_open(log, path, real, f, state_dir=state_dir, fmt=fmt, project=project,
                                final=final, max_bytes=max_bytes, max_line=max_line)
    finally:
        lock.close()


def _read_lines(f: Any, start: int, size: int, first_line: int, *, cap: int | None, final: bool, skip_newline: bool,
                path: str, warnings: list[str], max_line: int | None = None) -> tuple[list[_Rec], int, int, bool]:
    """Decode the complete lines from byte ``start`` (at most ``cap`` bytes, but always at least one line)."""
    lines = iter_lines(f.fileno(), start, size, max_line=max_line)
    try:
        return _decode_lines(lines, first_line, at_start=start == 0, final=final, skip_newline=skip_newline, cap=cap,
                             path=path, warnings=warnings, max_line=max_line)
    finally:
        lines.close()


def _fail(result: SourceResult, e: IngestError, path: str) -> str:
    result.file.error, result.file.error_line = f"{path}:{e.line}: {e}", e.line
    return result.file.error


@dataclass
class _Open:
    """One open source file being ingested: what every step of ``_ingest_open`` reads or fills in."""

    f: Any
    s: os.stat_result
    path: str
    real: str
    state_dir: str
    result: SourceResult

    def remember(self, st: SourceState, *, error: str = "", fingerprint: Any = None) -> None:
        _remember(st, self.s, self.state_dir, self.path, self.result, error=error, fingerprint=fingerprint)


class _Read(NamedTuple):
    """The complete lines read from byte ``start``: records, bytes and lines consumed, a partial line taken."""

    records: list[_Rec]
    start: int
    consumed: int
    nlines: int
    took_partial: bool


def _ingest_open(log: Any, path: str, real: str, f: Any, *, state_dir: str, fmt: str, project: str,
                 final: bool, max_bytes: int | None, max_line: int | None) -> SourceResult:
    s = os.fstat(f.fileno())
    op = _Open(f, s, path, real, state_dir, SourceResult(path=path, size=s.st_size, file=FileResult(path)))
    result = op.result
    st = _opening_state(op)
    known_fmt = st.format or ("" if fmt == "auto" else fmt)
    if s.st_size == st.position:
        op.remember(st)
        return result
    whole = known_fmt == catbuddy.FORMAT  # a snapshot its harness rewrites: read whole when it changed
    if whole and st.position:
        st = SourceState(path=real, dev=s.st_dev, ino=s.st_ino, format=known_fmt)
    read = _read_new(op, st, cap=None if whole else max_bytes, final=final or whole, max_line=max_line)
    if read is None:
        return result
    known_fmt = _format_of(op, st, known_fmt, read.records)
    if not known_fmt:
        return result
    result.file.format = known_fmt
    if _claude_needs_full(known_fmt, st, read):
        result.reset = "a summary line points at a line read in an earlier call"
        st = SourceState(path=real, dev=s.st_dev, ino=s.st_ino)
        read = _reread_whole(op, st, final=final, max_line=max_line)
        if read is None:
            return result
    _store(op, log, st, read, fmt=known_fmt, capped=not whole and max_bytes is not None
           and s.st_size - read.start > max_bytes, project=project)
    return result


def _opening_state(op: _Open) -> SourceState:
    """The state kept for the file, or a fresh one when the file was replaced or truncated (``result.reset``)."""
    st = load_state(op.state_dir, op.path) or SourceState(path=op.real)
    reason = _reset_reason(st, op.f, op.s)
    if reason:
        op.result.reset = reason
        st = SourceState(path=op.real)
    st.dev, st.ino = op.s.st_dev, op.s.st_ino
    return st


def _read_new(op: _Open, st: SourceState, *, cap: int | None, final: bool, max_line: int | None) -> _Read | None:
    """The lines after ``st.position``; None when there are none to parse (the state is then remembered)."""
    start = st.position
    try:
        records, consumed, nlines, took_partial = _read_lines(
            op.f, start, op.s.st_size, st.line, cap=cap, final=final,
            skip_newline=st.partial_taken, path=op.path, warnings=op.result.file.warnings, max_line=max_line)
    except IngestError as e:
        op.remember(st, error=_fail(op.result, e, op.path))
        return None
    if consumed == 0:
        op.result.mode = "waiting"
        op.remember(st)
        return None
    if not records:  # blank lines only
        st.position, st.line, st.partial_taken = start + consumed, st.line + nlines, took_partial
        op.result.mode = "waiting"
        op.remember(st, fingerprint=op.f)
        return None
    return _Read(records, start, consumed, nlines, took_partial)


def _format_of(op: _Open, st: SourceState, known_fmt: str, records: list[_Rec]) -> str:
    """``known_fmt``, else the format the first record shows; "" when none (the error is then remembered)."""
    if known_fmt:
        return known_fmt
    first = records[0].value
    known_fmt = detect(first) or ""
    if not known_fmt:
        line = records[0].line
        op.result.file.error = (f"{op.path}:{line}: not a transcript (not catbuddy, nanobot, claude-code or codex): "
                                f"line {line} is {describe(first)}")
        op.result.file.error_line = line
        op.remember(st, error=op.result.file.error)
    return known_fmt


def _claude_needs_full(fmt: str, st: SourceState, read: _Read) -> bool:
    """Whether a Claude Code file read from the middle must be read again whole (a summary points back)."""
    return fmt == claude_code.FORMAT and read.start > 0 and _claude_summaries_need_full(st, read.records)


def _reread_whole(op: _Open, st: SourceState, *, final: bool, max_line: int | None) -> _Read | None:
    """The whole file, from its first byte; None on a bad line (the error is then remembered)."""
    warnings = op.result.file.warnings
    try:
        warnings.clear()
        records, consumed, nlines, took_partial = _read_lines(op.f, 0, op.s.st_size, 0, cap=None, final=final,
                                                              skip_newline=False, path=op.path, warnings=warnings,
                                                              max_line=max_line)
    except IngestError as e:
        op.remember(st, error=_fail(op.result, e, op.path))
        return None
    return _Read(records, 0, consumed, nlines, took_partial)


def _parse_chunk(fmt: str, work: SourceState, records: list[_Rec], path: str) -> _Chunk:
    if fmt == claude_code.FORMAT:
        return _parse_claude(work, records, path)
    if fmt in (nanobot.FORMAT, codex.FORMAT):
        return _parse_headed(fmt, work, records, path)
    return _Chunk(_parse(fmt, records, path))


def _store(op: _Open, log: Any, st: SourceState, read: _Read, *, fmt: str, capped: bool, project: str) -> None:
    """Parse ``read``, append its events, and remember the state after it (or the error)."""
    result = op.result
    work = msgspec.structs.replace(st)  # the state advances only once the events are in the log
    _copy_containers(work)
    try:
        chunk = _parse_chunk(fmt, work, read.records, op.path)
    except IngestError as e:
        op.remember(st, error=_fail(result, e, op.path))
        return
    result.mode = "full" if read.start == 0 else "incremental"
    result.bytes_read = read.consumed
    result.capped = capped
    result.file.notes = list(chunk.pf.notes)
    _write_chunk(log, chunk, work, project, result)
    if result.file.error is not None:
        op.remember(st, error=result.file.error)
        return
    work.format = fmt
    work.position = read.start + read.consumed
    work.line = st.line + read.nlines
    work.partial_taken = read.took_partial
    work.capped = result.capped and work.position < op.s.st_size
    op.remember(work, fingerprint=op.f)


def _write_chunk(log: Any, chunk: _Chunk, work: SourceState, project: str, result: SourceResult) -> None:
    """Append the chunk's events, then the session updates its metadata calls for."""
    target = log() if callable(log) else log
    # One turn of the write lock: the dedup lookups that decide "new", "grown" or "already there"
    # must see what other writers appended (a response another process stored a moment ago).
    with target.turn():
        _append(target, chunk.pf, chunk.titles, project, result.file)
        if result.file.error is None:
            extra = _metadata_updates(target, chunk.pf, work)
            if extra:
                extra, _found = _redact(extra)
                last = target.last_seq
                result.file.events += sum(1 for seq in target.append_batch(extra) if seq > last)


def _copy_containers(st: SourceState) -> None:
    """Give a copied state its own containers (``structs.replace`` copies shallowly)."""
    st.context = list(st.context)
    st.counts = dict(st.counts)
    st.tools = dict(st.tools)
    st.agents = dict(st.agents)
    st.roots = dict(st.roots)
    st.open = {k: OpenResponse(v.api_id, list(v.lines)) for k, v in st.open.items()}
    st.cwds = dict(st.cwds)
    st.meta = {k: list(v) for k, v in st.meta.items()}
    st.summaries = list(st.summaries)
    st.leaves = dict(st.leaves)


def _remember(st: SourceState, s: os.stat_result, state_dir: str, path: str, result: SourceResult, *,
              error: str = "", fingerprint: Any = None) -> None:
    st.size, st.mtime_ns, st.error = s.st_size, s.st_mtime_ns, error
    if fingerprint is not None:
        st.head, st.tail = _fingerprints(fingerprint, st.position)
    result.position = st.position
    result.pending_bytes = max(0, s.st_size - st.position)
    try:
        _save_state(state_dir, path, st)
    except OSError:
        pass  # disposable: the next call reads again from the last saved position (dedup keeps it exact)


def _metadata_updates(log: Any, pf: ParsedFile, st: SourceState) -> list[Event]:
    """``session.updated`` events for metadata keys a session gained after it was first ingested.

    ``session.created`` is written once; a key that first appears in a later line (Claude
    Code's ``slug``, Codex's ``model``) is added with its first value, as a full ingest of
    the final file would have it.
    """
    out: list[Event] = []
    for s in pf.sessions:
        known = st.meta.get(s.key)
        if known is None:
            known = _created_keys(log, s.key)
            if known is None:  # not in the log (the batch was empty?): nothing to compare with
                continue
        have = set(known)
        for k, v in s.metadata.items():
            if k in have or k in STRUCTURAL_KEYS:
                continue
            digest = xxhash.xxh3_64_hexdigest(msgspec.json.encode([k, v], order="deterministic"))
            out.append(SessionUpdated(session_key=s.key, metadata={k: v}, dedup=f"ingest:{s.key}:meta:{digest}"))
            have.add(k)
        st.meta[s.key] = sorted(have)
    return out


def _created_keys(log: Any, key: str) -> list[str] | None:
    seq = log.lookup_dedup(f"ingest:{key}:created")
    if seq is None:
        return None
    rec = log.find(seq)
    md = getattr(rec.event, "metadata", None) if rec is not None else None
    return sorted(md) if isinstance(md, dict) else []

