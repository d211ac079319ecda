"""Ingest: turn agent transcripts written by other tools into session and message events.

Each supported format (catbuddy/evlog session files, nanobot sessions, Claude Code
project folders, Codex rollouts; see the sub-module of the same name for its mapping)
has a parser that reads one file into a small neutral model (``model.ParsedFile``:
sessions with their messages, in file order). ``ingest_paths`` then turns each file's
model into ``session.created`` / ``message.appended`` / ``session.updated`` events and
appends them in ONE ``append_batch`` call per file. Every file is parsed and validated
in full before anything of it is appended, so a malformed file (bad JSON, invalid
UTF-8, a field of the wrong type, a truncated last line, not a transcript at all)
appends nothing and is reported with its path, line and reason, while the other files
go in. Claude Code files are parsed in a first pass over the run, because a ``summary``
line in one file titles a session in another; parsed files are kept for the second
(appending) pass up to ``KEEP_PARSED_BYTES`` of source, beyond that they are parsed
again, so memory stays bounded on a large ``~/.claude/projects``. A file of any other
format (told from its first record) holds nothing another file needs: the first pass
skips it and it is parsed once, right before its batch is appended.

**Durability.** The batches are not fsynced one by one: the log is synced every
``SYNC_EVERY_BYTES`` of source and once before ``ingest_paths`` returns (or raises). A
crash mid-run can lose the batches since the last sync, never part of one; running the
same ingest again appends exactly what was lost (the dedup keys below).

Every event carries a ``dedup`` key derived from the source's identity, never from the
time of the ingest: ``ingest:<session key>:created``, ``ingest:<session key>:msg:<message
id>`` (plus ``@<last line uuid>`` for a Claude response merged from several lines) and
``ingest:<session key>:title:<hash of leaf and title>``. The log writes an event once
per key and returns the first seq for a known one, so ingesting the same data again
appends nothing, and a file that grew appends only its new messages. Message ids are
the source's own where it has them (catbuddy ``id``, Claude ``uuid``) and a stable hash
of the message with an occurrence counter where it has none (nanobot, Codex).

**Secrets** (``eventlog.secrets``) are redacted before anything is appended, always, by
the log's own door (``eventlog.redact.redact_counted``: a whole file's texts prefiltered at
once, the kinds found counted, and each event found clean marked so the writer's door does
not scan it a second time): every text field of every event (``content``, ``tool_calls``,
``extra``, session titles and metadata...). Each secret becomes
``[REDACTED:<kind>]`` and a message event lists the kinds it lost in ``redacted`` (one
entry per secret); ``FileResult.redacted`` counts them by kind for the events the file
appended. Dedup keys and message ids are computed from the source as it is, before
redaction, so a better detector never changes which events count as already ingested:
ingesting again appends nothing, and does not replace what was stored. Events the log already
has are not redacted again (they are dropped before the batch, as the log would drop them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import msgspec
import xxhash

from eventlog.errors import ConfigError, IngestError, NotFound, RefusedInput
from eventlog.events import Event, MessageAppended, MessageUpdated, RecordErased, SessionCreated, SessionUpdated
from eventlog.ingest import catbuddy, claude_code, codex, nanobot
from eventlog.ingest.detect import describe, detect, read_records
from eventlog.ingest.model import ParsedFile, ParsedSession, Summary
from eventlog.ingest.source import is_workspace_folder, refuse_workspace_files

# eventlog.ingest.secrets is imported where it is used, so `python -m eventlog.ingest.secrets` runs it cleanly

__all__ = ["FORMATS", "FORMAT_CHOICES", "FileResult", "IngestReport", "collect_files", "ingest_paths", "parse_file"]

#: format name -> parser(records, path) -> ParsedFile
FORMATS: dict[str, Callable[[Iterable[tuple[int, Any]], str], ParsedFile]] = {
    catbuddy.FORMAT: catbuddy.parse,
    nanobot.FORMAT: nanobot.parse,
    claude_code.FORMAT: claude_code.parse,
    codex.FORMAT: codex.parse,
}
FORMAT_CHOICES: tuple[str, ...] = ("auto", *FORMATS)
#: Parsed files are kept between the two passes up to this many bytes of source.
KEEP_PARSED_BYTES = 32 * 1024 * 1024
#: The log is synced after this many bytes of source were appended (and at the end of the run).
SYNC_EVERY_BYTES = 64 * 1024 * 1024
#: Files a folder is searched for (files named on the command line are always read).
TRANSCRIPT_SUFFIX = ".jsonl"


@dataclass
class FileResult:
    """What ingesting one file did.

    ``sessions``: sessions the file holds; ``messages``: message events appended;
    ``duplicates``: message events not appended because the log already had them (or
    the file repeats them); ``events``: all events appended (sessions, messages,
    titles); ``redacted``: secrets replaced by a placeholder in the appended events,
    by kind (``{"openai-key": 2}``). ``error`` is
    ``"<path>:<line>: <reason>"`` for a file that appended nothing, else None;
    ``notes`` say what was skipped or could not be matched; ``warnings`` name the lines over
    the line limit (``eventlog.ingest.lines``: read with their long strings cut, or skipped).
    """

    path: str
    format: str = ""
    sessions: int = 0
    messages: int = 0
    duplicates: int = 0
    events: int = 0
    error: str | None = None
    error_line: int = 0
    notes: list[str] = field(default_factory=list)
    redacted: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # lines over the line limit: cut or skipped (path:line)

    @property
    def ok(self) -> bool:
        """True when the file went in (or had nothing to add)."""
        return self.error is None

    @property
    def secrets(self) -> int:
        """How many secrets were redacted in the events this file appended."""
        return sum(self.redacted.values())


@dataclass
class IngestReport:
    """The results of one ``ingest_paths`` run, one per file, in the order read."""

    files: list[FileResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every file went in."""
        return all(f.ok for f in self.files)

    @property
    def failed(self) -> list[FileResult]:
        """The files that appended nothing because of an error."""
        return [f for f in self.files if not f.ok]

    @property
    def sessions(self) -> int:
        return sum(f.sessions for f in self.files)

    @property
    def messages(self) -> int:
        return sum(f.messages for f in self.files)

    @property
    def duplicates(self) -> int:
        return sum(f.duplicates for f in self.files)

    @property
    def events(self) -> int:
        return sum(f.events for f in self.files)

    @property
    def redacted(self) -> dict[str, int]:
        """Secrets redacted in the whole run, by kind (kinds in name order)."""
        out: dict[str, int] = {}
        for f in self.files:
            for kind, n in f.redacted.items():
                out[kind] = out.get(kind, 0) + n
        return dict(sorted(out.items()))

    @property
    def secrets(self) -> int:
        return sum(f.secrets for f in self.files)

    def redacted_summary(self) -> str:
        """``"3 secret(s) redacted (2 openai-key, 1 url-password)"``, or ``""`` when there were none."""
        from eventlog.secrets import kinds_summary

        kinds = [k for k, n in self.redacted.items() for _ in range(n)]
        return f"{len(kinds)} secret(s) redacted ({kinds_summary(kinds)})" if kinds else ""


ProgressCallback = Callable[[FileResult, int, int], None]


def collect_files(paths: Iterable[str], notes: list[str] | None = None) -> list[str]:
    """The files to ingest: each file as given, each folder's ``*.jsonl`` files recursively.

    Folders are walked in sorted order, skipping hidden names; a file reached twice is
    read once; in a folder, what is not a regular file (a FIFO, a device, a socket, a
    broken link) is skipped with a note in ``notes``, and so is each folder evlog writes in a
    workspace (``source.is_workspace_folder``: its files are projections, not transcripts). A path
    that does not exist raises ``NotFound``, one inside a workspace ``RefusedInput``, before
    anything is read.
    """
    paths = list(paths)
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise NotFound(f"no such file or directory: {', '.join(missing)}")
    for p in paths:
        refuse_workspace_files(p)
    out: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            out.append(path)

    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                for d in [d for d in dirs if is_workspace_folder(os.path.join(root, d))]:
                    dirs.remove(d)
                    if notes is not None:
                        notes.append(f"{os.path.join(root, d)}: skipped, a folder of the evlog workspace {root} "
                                     "(its files are projections, not transcripts)")
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(names):
                    if name.lower().endswith(TRANSCRIPT_SUFFIX) and not name.startswith("."):
                        path = os.path.join(root, name)
                        if os.path.isfile(path):
                            add(path)
                        elif notes is not None:
                            notes.append(f"{path}: skipped, not a regular file")
        elif os.path.isfile(p):
            add(p)
        else:
            raise ConfigError(f"not a regular file or folder: {p}")
    return out


def parse_file(path: str, fmt: str = "auto") -> ParsedFile:
    """Read and validate one transcript file; ``IngestError`` names path, line and reason."""
    if fmt not in FORMAT_CHOICES:
        raise ConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMAT_CHOICES)}")
    warnings: list[str] = []
    try:
        records = read_records(path, warnings=warnings)
        try:
            parsed = _parse(records, path, fmt)
        finally:
            records.close()
        parsed.warnings.extend(warnings)
        return parsed
    except RefusedInput:
        raise
    except IngestError as e:
        if e.path:  # about the file itself (source.open_source): it already names it
            raise
        raise IngestError(f"{path}:{e.line}: {e}", path=path, line=e.line) from None
    except OSError as e:
        raise IngestError(f"{path}: cannot read: {e.strerror or e}", path=path) from None
    except RecursionError:
        raise IngestError(f"{path}: nested too deeply to read", path=path) from None


def _parse(records: Iterator[tuple[int, Any]], path: str, fmt: str) -> ParsedFile:
    if fmt == "auto":
        try:
            first = next(records, None)
        except IngestError as e:
            if e.path:  # the file could not be opened (source.open_source): not a matter of its lines
                raise
            raise IngestError(f"not a transcript: line {e.line} is not a JSON record ({e})", line=e.line) from None
        if first is None:
            return ParsedFile("empty", notes=["empty file"])
        found = detect(first[1])
        if found is None:
            raise IngestError(f"not a transcript (not catbuddy, nanobot, claude-code or codex): line {first[0]} is "
                              f"{describe(first[1])}", line=first[0])
        fmt = found
        records = chain([first], records)
    parsed = FORMATS[fmt](records, path)
    if not parsed.sessions and not parsed.summaries and not parsed.notes:
        parsed.notes.append("empty file")
    return parsed


def ingest_paths(
    log: Any,
    paths: Iterable[str],
    *,
    fmt: str = "auto",
    project: str = "",
    on_progress: ProgressCallback | None = None,
) -> IngestReport:
    """Ingest transcript files and folders into ``log`` (an open, writable ``eventlog.log.Log``).

    ``fmt`` is ``"auto"`` (detected per file) or a format name from ``FORMATS``;
    ``project``, when given, is the project of every ingested session (else the one the
    transcript names, e.g. Claude Code's and Codex's ``cwd``). ``on_progress(result,
    done, total)`` is called after each file is appended (or fails). Secrets are
    redacted (see the module docstring). Per-file problems
    are in the report; a path that does not exist or a bad ``fmt`` raises before
    anything is read; log failures (I/O, lock) raise and stop the run.
    """
    if fmt not in FORMAT_CHOICES:
        raise ConfigError(f"unknown format {fmt!r}; choose one of {', '.join(FORMAT_CHOICES)}")
    files = collect_files(paths)
    # pass 1: parse everything (keeping what fits), index Claude uuids, collect summaries
    parsed: list[ParsedFile | IngestError | None] = []
    kept = 0
    leaves: dict[str, tuple[str, str, int]] = {}  # uuid -> (session key, timestamp, file index)
    summaries: list[tuple[int, Summary]] = []
    for i, path in enumerate(files):
        if _format_of(path, fmt) not in _CROSS_FILE_FORMATS:
            parsed.append(None)  # nothing in it concerns another file: parsed once, when its turn comes
            continue
        try:
            pf = parse_file(path, fmt)
        except IngestError as e:
            parsed.append(e)
            continue
        for uuid, (key, ts) in pf.uuids.items():
            leaves.setdefault(uuid, (key, ts, i))
        summaries.extend((i, s) for s in pf.summaries)
        size = _size(path)
        if kept + size <= KEEP_PARSED_BYTES:
            kept += size
            parsed.append(pf)
        else:
            parsed.append(None)  # parse again when its turn comes
    titles, title_notes = _resolve_titles(files, summaries, leaves)
    # pass 2: one atomic batch per file, synced every SYNC_EVERY_BYTES and at the end
    report = IngestReport()
    try:
        _append_files(log, files, parsed, fmt, titles, title_notes, project, report, on_progress)
    finally:
        log.sync()
    return report


#: formats whose files hold what titles a session of another file (Claude Code's summaries and leaf uuids)
_CROSS_FILE_FORMATS = frozenset({"claude-code"})


def _format_of(path: str, fmt: str) -> str | None:
    """The format ``path`` will be parsed as (from its first record when ``fmt`` is "auto"); None when
    that cannot be told without parsing it (unreadable, empty, not a transcript: the parse says why)."""
    if fmt != "auto":
        return fmt
    try:
        records = read_records(path)
        try:
            first = next(records, None)
        finally:
            records.close()
    except (IngestError, RefusedInput, OSError, RecursionError):
        return None
    return detect(first[1]) if first is not None else None


def _append_files(log: Any, files: list[str], parsed: list[ParsedFile | IngestError | None], fmt: str,
                  titles: dict[int, list[tuple[str, str, str]]], title_notes: dict[int, list[str]], project: str,
                  report: IngestReport, on_progress: ProgressCallback | None) -> None:
    total = len(files)
    unsynced = 0
    for i, path in enumerate(files):
        result = FileResult(path)
        item = parsed[i]
        parsed[i] = None  # free it once appended
        if item is None:
            try:
                item = parse_file(path, fmt)
            except IngestError as e:
                item = e
        if isinstance(item, IngestError):
            result.error, result.error_line = str(item), item.line
        else:
            result.format = item.format
            result.notes = item.notes + title_notes.get(i, [])
            result.warnings = list(item.warnings)
            # One turn of the write lock per file: the lookups that decide "new", "grown" or
            # "already stored" must see what other writers appended a moment ago.
            with log.turn():
                _append(log, item, titles.get(i, []), project, result, sync=False)
            unsynced += _size(path)
            if unsynced >= SYNC_EVERY_BYTES:
                log.sync()
                unsynced = 0
        report.files.append(result)
        if on_progress is not None:
            on_progress(result, i + 1, total)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _resolve_titles(
    files: list[str], summaries: list[tuple[int, Summary]], leaves: dict[str, tuple[str, str, int]]
) -> tuple[dict[int, list[tuple[str, str, str]]], dict[int, list[str]]]:
    """Pick each session's title from the summaries pointing into it: the newest leaf wins.

    Returns {file index: [(session key, title, leaf uuid)]} for the file holding each
    titled session (the title goes into that file's batch, after its session.created),
    and notes per file.
    """
    best: dict[str, tuple[tuple[str, int, int], str, str, int, int]] = {}
    notes: dict[int, list[str]] = {}
    matched: dict[int, int] = {}
    for src, s in summaries:
        target = leaves.get(s.leaf_uuid)
        if target is None:
            notes.setdefault(src, []).append(
                f"line {s.line}: summary {s.title!r} points at {s.leaf_uuid}, which is in no session of this run; not applied")
            continue
        key, ts, holder = target
        matched[src] = matched.get(src, 0) + 1
        rank = (ts, src, s.line)
        if key not in best or rank >= best[key][0]:
            best[key] = (rank, s.title, s.leaf_uuid, holder, src)
    for src, n in matched.items():
        notes.setdefault(src, []).append(f"{n} summary line(s) matched a session of this run")
    titles: dict[int, list[tuple[str, str, str]]] = {}
    for key, (rank, title, leaf, holder, src) in best.items():
        titles.setdefault(holder, []).append((key, title, leaf))
        where = "" if src == holder else f" ({os.path.basename(files[src])} line {rank[2]})"
        notes.setdefault(holder, []).append(f"title of {key} from its newest summary{where}: {title!r}")
    return titles, notes


def _events(pf: ParsedFile, titles: list[tuple[str, str, str]], project: str) -> tuple[list[Event], int]:
    """The file's events in order, each dedup key once; also how many messages repeated a key."""
    from eventlog.secrets import redact

    events: list[Event] = []
    keys: set[str] = set()
    repeats = 0

    def add(ev: Event) -> None:
        nonlocal repeats
        if ev.dedup in keys:
            repeats += isinstance(ev, MessageAppended)
            return
        keys.add(ev.dedup)
        events.append(ev)

    for s in pf.sessions:
        add(_created(s, project))
        for m in s.messages:
            add(MessageAppended(
                session_key=s.key,
                message_id=m.message_id,
                role=m.role,
                content=m.content,
                timestamp=m.timestamp,
                tool_calls=m.tool_calls,
                extra=m.extra,
                dedup=f"ingest:{s.key}:msg:{m.message_id}" + (f"@{m.version}" if m.version else ""),
            ))
    for key, title, leaf in titles:
        # of the redacted title: the incremental ingest keeps titles redacted (I24), both must agree
        digest = xxhash.xxh3_64_hexdigest(f"{leaf}\0{redact(title)[0]}".encode("utf-8", "surrogatepass"))
        add(SessionUpdated(session_key=key, title=title, dedup=f"ingest:{key}:title:{digest}"))
    return events, repeats


def _created(s: ParsedSession, project: str) -> SessionCreated:
    return SessionCreated(
        session_key=s.key,
        title=s.title,
        metadata=s.metadata,
        created_at=s.created_at,
        project=project or s.project,
        dedup=f"ingest:{s.key}:created",
    )


def _as_update_if_grown(log: Any, ev: Event) -> Event | None:
    """A versioned message already stored in an older version becomes a ``message.updated``.

    A Claude response caught while still being written is stored under its first line's
    id; when it is ingested again complete, the session must show one message with the
    whole text, not two. The first version is stored as ``message.appended`` with the
    plain key ``ingest:<key>:msg:<id>``; a later, different version is a
    ``message.updated`` keyed by its version (written once, like everything else).
    """
    if not isinstance(ev, MessageAppended) or "@" not in ev.dedup.rsplit(":msg:", 1)[-1]:
        return ev
    plain, _, version = ev.dedup.rpartition("@")
    first = log.lookup_dedup(plain)
    if first is None:
        return msgspec.structs.replace(ev, dedup=plain, extra={**ev.extra, "version": version})
    rec = log.find(first)
    stored = rec.event if rec is not None else None
    if isinstance(stored, RecordErased):
        return None  # erased (eventlog.erasure): a re-ingest never brings any version of it back
    if isinstance(stored, MessageAppended) and stored.extra.get("version") == version:
        return None
    return MessageUpdated(session_key=ev.session_key, message_id=ev.message_id, content=ev.content,
                          tool_calls=ev.tool_calls, extra={**ev.extra, "version": version}, dedup=ev.dedup)


def _append(log: Any, pf: ParsedFile, titles: list[tuple[str, str, str]], project: str, result: FileResult,
            sync: bool = True) -> None:
    events, repeats = _events(pf, titles, project)
    result.sessions = len(pf.sessions)
    result.duplicates = repeats
    if repeats:
        result.notes.append(f"{repeats} message line(s) repeat an earlier message id of the same session; kept the first")
    converted = [_as_update_if_grown(log, ev) for ev in events]
    result.duplicates += sum(1 for ev in converted if ev is None)  # unchanged versions of stored messages
    events = []
    for ev in converted:
        if ev is None:
            continue
        if log.lookup_dedup(ev.dedup) is not None:  # the log has it: it would not be written again
            result.duplicates += isinstance(ev, MessageAppended)
            continue
        events.append(ev)
    if not events:
        return
    events, found = _redact(events)
    last = log.last_seq
    try:
        seqs = log.append_batch(events, sync=sync)  # ingest_paths syncs later (see "Durability" above)
    except (msgspec.MsgspecError, UnicodeError, OverflowError, TypeError, ValueError) as e:
        # raised while encoding, before anything is written
        result.error = f"{result.path}: cannot store its events: {e}"
        return
    for ev, seq, kinds in zip(events, seqs, found, strict=True):
        new = seq > last
        result.events += new
        if new:
            for kind in kinds:
                result.redacted[kind] = result.redacted.get(kind, 0) + 1
        if isinstance(ev, MessageAppended):
            if new:
                result.messages += 1
            else:
                result.duplicates += 1


def _redact(events: list[Event]) -> tuple[list[Event], list[list[str]]]:
    """``events`` with secrets replaced by the log's own door (all of a file's text prefiltered at once), and
    the kinds found per event. The door marks each event it found clean, so the writer does not scan it again
    (``eventlog.redact.redact_counted``): every text is scanned once."""
    from eventlog.redact import redact_counted

    return redact_counted(events)
