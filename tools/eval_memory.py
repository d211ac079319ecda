#!/usr/bin/env python3
"""Evaluate fact extraction (``processors.extract``) on LoCoMo and on the real transcripts.

Run from the repository root::

    .venv/bin/python tools/eval_memory.py                      # LoCoMo and real transcripts, readable
    .venv/bin/python tools/eval_memory.py locomo --json        # one JSON object per line
    .venv/bin/python tools/eval_memory.py locomo --sample 50 --seed 1   # 50 random facts with their sources
    .venv/bin/python tools/eval_memory.py locomo --sample 50 --seed 1 --half odd   # ... of the odd conversations
    .venv/bin/python tools/eval_memory.py locomo --pipeline    # the same metrics through evlog itself (Dream)
    .venv/bin/python tools/eval_memory.py real                 # the facts of every real transcript

**LoCoMo** (``../shared/data/real/locomo``, read through ``tools/locomo_data.py``, never
copied): each conversation is its own project and its own memory. Its turns become
``Entry`` objects exactly as Dream would build them from the ``message.appended`` events
of ``locomo_data.events`` (speaker = ``extra.speaker`` or the role, meta = extra), and
are fed to the extractor one LoCoMo session per call, in order, with the active facts so
far as ``existing``. The operations are applied (``model.apply_ops``: add, supersede,
forget), then the budget per file as Dream applies it (``budget.apply_budget`` with the
``# Memory`` header and ``- text`` lines of the written file, cited = the number of
sources, nothing recalled; 200 lines and 25,000 bytes per MEMORY.md by default,
``--max-lines`` / ``--max-bytes``). Reported:

* ``coverage``: the share of the non-adversarial questions (categories 1-4) with at
  least one evidence turn among the sources of an active, in-budget fact; per category
  too, and ``answer_in_memory``: the share whose answer text appears verbatim (case and
  punctuation aside) in one such fact;
* ``facts``: active in budget, archived by the budget, superseded, forgotten;
* ``cut_mid_word``: facts ending in an ellipsis or in a word that is no whole word of
  their sources (nor a name, month, weekday, number, or a word the rewrite adds);
* ``near_duplicate_pairs``: pairs of active in-budget facts of one file whose token
  sets have a Jaccard similarity >= 0.8 (``text.near_duplicate``);
* ``no_subject_or_date``: facts without a subject or without ``when``;
* ``max_sources``: the most sources any fact has (never more than 3).

**LoCoMo through the product** (``locomo --pipeline``): the same metrics, but the facts
come from evlog itself, not from calling the extractor. Per conversation: a temporary
workspace (``eventlog.init_workspace``, with ``--max-lines`` / ``--max-bytes`` as its
``memory_max_lines`` / ``memory_max_bytes``; ``eventlog.open_workspace(home,
writable=True)``); the project registered (``ws.register_project`` on a directory made
under the temporary directory: the events' project is the label ``locomo/<sample_id>``,
not a directory, so nothing is mirrored there, ``mirrored_files`` = 0); the events of
``locomo_data.events`` appended unchanged (one atomic batch per LoCoMo session); then
``processors.run(ws, "dream", llm=make_llm("offline"))``, what a user runs after ``evlog
ingest``. The facts are the workspace's (``eventlog.app.memory.facts``): active ones are
what MEMORY.md shows, and each fact's ``source_seqs`` are mapped back through the log's
``message.appended`` events to ``<session_key>#<dia_id>`` (``source_mismatches`` counts
facts whose ``source_refs`` disagree: must be 0). Reported on top: ``dream_runs`` and
their outcomes (the offline extractor takes a whole project's pending entries, up to
``dream.OFFLINE_BATCH``, per call: one run per conversation), ``refused`` (operations
``parse_ops`` refused), ``pending_after``, ``ops`` (the operations of the recorded
answers) and ``fact_events``, the MEMORY.md files as written on disk (``memory_files``:
lines and bytes; ``over_budget_files`` must be 0), ``replay --check`` of the first
conversation's workspace (``eventlog.app.replay.check``: must be clean), and the time to
create and fill the workspace (``append_seconds``), Dream's (``dream_seconds``) and the
whole (``seconds`` per conversation, ``wall_seconds`` in total). On the 10 conversations
both modes give the same facts (503, coverage 40.8%), also under a tight budget.

**Real transcripts**: every source folder under ``../shared/data/real`` except locomo is
ingested into a temporary workspace with the ``evlog`` command line, the
``message.appended`` events become entries (by project, in log order, at most 30 a
call, as Dream batches), and the facts are printed with their sources.
``injected_sources`` counts facts with a source that ``text.skip_reason`` refuses
(must be 0).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

import real_data  # noqa: E402 - tools/real_data.py

from processors.extract import budget as budget_mod  # noqa: E402
from processors.extract import offline  # noqa: E402
from processors.extract.model import Entry, ExistingFact, FactOp, apply_ops  # noqa: E402
from processors.extract.signals import vocabulary  # noqa: E402
from processors.extract.text import ends_mid_word, near_duplicate, skip_reason  # noqa: E402
from processors.extract.timeref import DAYS, MONTHS  # noqa: E402
from projections.memory import HEADER, fact_line  # noqa: E402

REWRITE_WORDS = ("themself", "themselves", "they", "them", "their", "theirs", "user", "team", "project", "is", "has",
                 "says", "photo", "assistant", "s")
BATCH = 30


def _memory_line(f: ExistingFact) -> str:
    return fact_line(f.text)


def _real_root() -> str:
    found = real_data.find()
    if found:
        return found
    raise FileNotFoundError("real data not found: set EVLOG_REAL_DATA (see ../shared/data/real/README.md)")


# --- entries from events -----------------------------------------------------------------


def entries_from_events(events: list[Any]) -> list[Entry]:
    """``Entry`` objects for the ``message.appended`` events (``message.updated`` applied), in log order."""
    from eventlog.events import MessageAppended, MessageUpdated, SessionCreated

    projects: dict[str, str] = {}
    out: dict[tuple[str, str], Entry] = {}
    for n, ev in enumerate(events, 1):
        seq = getattr(ev, "seq", 0) or n
        if isinstance(ev, SessionCreated):
            projects.setdefault(ev.session_key, ev.project)
        elif isinstance(ev, MessageAppended):
            extra = dict(ev.extra or {})
            if ev.tool_calls:
                extra["tool_calls"] = list(ev.tool_calls)  # as Dream's entries carry them (processors.extract.workflow)
            named = extra.get("speaker")
            speaker = named if isinstance(named, str) and named else ev.role
            key = (ev.session_key, ev.message_id)
            out[key] = Entry(ref=f"{ev.session_key}#{ev.message_id}", seq=seq, session_key=ev.session_key,
                             message_id=ev.message_id, project=projects.get(ev.session_key, ""), speaker=speaker,
                             role=ev.role, time=ev.timestamp or getattr(ev, "ts", ""), text=ev.content, meta=extra)
        elif isinstance(ev, MessageUpdated):
            key = (ev.session_key, ev.message_id)
            if key in out:
                import msgspec

                meta = {**out[key].meta, **(ev.extra or {})}
                out[key] = msgspec.structs.replace(out[key], text=ev.content, meta=meta)
    return sorted(out.values(), key=lambda e: e.seq)


# --- LoCoMo ------------------------------------------------------------------------------------


def _norm(s: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", s.casefold()).split())


def score_conversation(conv: Any, texts: dict[str, str], kept: list[ExistingFact],
                       facts: list[ExistingFact]) -> dict[str, Any]:
    """The metrics of one conversation's memory (both modes).

    ``kept`` are the facts MEMORY.md shows (active, in budget), ``facts`` every fact in any
    state; sources are message refs ``<session_key>#<dia_id>`` whose text is ``texts[ref]``.
    """
    import locomo_data

    covered_ids = {src.split("#", 1)[1] for f in kept for src in f.sources}
    qs = [q for q in conv.questions if q.category in (1, 2, 3, 4)]
    per_cat: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    answer_hits = 0
    kept_norm = [_norm(f.text) for f in kept]
    for q in qs:
        ev = {x.strip() for e in q.evidence for x in re.split(r"[;,\s]+", e) if x.strip()}
        hit = bool(ev & covered_ids)
        per_cat[q.category][0] += hit
        per_cat[q.category][1] += 1
        ans = _norm(q.answer)
        if ans and any(ans in t for t in kept_norm):
            answer_hits += 1
    names = set(conv.speakers) | {w for s in conv.speakers for w in s.split()}
    extra_words = set(REWRITE_WORDS) | set(MONTHS) | set(DAYS) | names | vocabulary()
    cut = [f for f in kept if ends_mid_word(f.text, [texts.get(s, "") for s in f.sources], extra_words)]
    dups = []
    by_file: dict[tuple[str, str], list[ExistingFact]] = defaultdict(list)
    for f in kept:
        by_file[budget_mod.file_key(f)].append(f)
    for fs in by_file.values():
        for i in range(len(fs)):
            for j in range(i + 1, len(fs)):
                if near_duplicate(fs[i].text, fs[j].text):
                    dups.append((fs[i].text, fs[j].text))
    return {
        "questions": len(qs), "covered": sum(v[0] for v in per_cat.values()),
        "per_category": {locomo_data.CATEGORY_NAMES[c]: v for c, v in sorted(per_cat.items())},
        "answer_in_memory": answer_hits,
        "cut_mid_word": len(cut), "cut_examples": [f.text for f in cut[:3]],
        "near_duplicate_pairs": len(dups), "duplicate_examples": dups[:3],
        "no_subject_or_date": sum(1 for f in kept if not f.subject or not f.when),
        "max_sources": max((len(f.sources) for f in facts), default=0),
    }


def _fact_rows(conv: Any, kept: list[ExistingFact], texts: dict[str, str], reasons: dict[str, str]) -> list[dict[str, Any]]:
    return [{"conversation": conv.sample_id, "fact_id": f.fact_id, "text": f.text, "subject": f.subject,
             "section": f.section, "when": f.when, "sources": f.sources, "reason": reasons.get(f.text, ""),
             "source_text": [texts.get(s, "") for s in f.sources]} for f in kept]


def run_locomo(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-conversation results and the in-budget facts (with their source texts)."""
    import locomo_data

    convs = locomo_data.load()
    if args.conversations:
        convs = convs[: args.conversations]
    rows: list[dict[str, Any]] = []
    all_facts: list[dict[str, Any]] = []
    for conv in convs:
        t0 = time.perf_counter()
        entries = entries_from_events(locomo_data.events(conv))
        by_session: dict[str, list[Entry]] = defaultdict(list)
        for e in entries:
            by_session[e.session_key].append(e)
        facts: list[ExistingFact] = []
        ops_count: Counter[str] = Counter()
        reasons: dict[str, str] = {}
        for key in sorted(by_session, key=lambda k: int(k.rsplit("_", 1)[1])):
            ops = offline.extract(by_session[key], [f for f in facts if f.state == "active"])
            ops_count.update(o.op for o in ops)
            reasons.update({o.text: o.reason for o in ops if o.text})
            facts = apply_ops(facts, ops)
        elapsed = time.perf_counter() - t0
        texts = {e.ref: e.text for e in entries}
        files: dict[tuple[str, str], list[ExistingFact]] = defaultdict(list)
        for f in facts:
            files[budget_mod.file_key(f)].append(f)
        kept: list[ExistingFact] = []
        archived: list[ExistingFact] = []
        file_sizes = {}
        for fk, fs in files.items():
            # counted as Dream counts a MEMORY.md (dream.budget_events): its header, its lines, cited = sources
            k, a = budget_mod.apply_budget(fs, max_lines=args.max_lines, max_bytes=args.max_bytes,
                                           cited={f.fact_id: len(f.sources) for f in fs}, header=HEADER,
                                           line=_memory_line)
            kept += k
            archived += a
            file_sizes["/".join(x for x in fk if x)] = budget_mod.size(k, header=HEADER, line=_memory_line)
        m = score_conversation(conv, texts, kept, facts)
        states = Counter(f.state for f in facts)
        rows.append({
            "kind": "locomo_conversation", "mode": "direct", "conversation": conv.sample_id, "turns": len(entries),
            "sessions": len(by_session), "questions": m["questions"], "covered": m["covered"],
            "per_category": m["per_category"],
            "answer_in_memory": m["answer_in_memory"], "facts_in_budget": len(kept), "facts_archived": len(archived),
            "superseded": states["superseded"], "forgotten": states["forgotten"], "ops": dict(ops_count),
            **{k: m[k] for k in ("cut_mid_word", "cut_examples", "near_duplicate_pairs", "duplicate_examples",
                                 "no_subject_or_date", "max_sources")},
            "file_sizes": {k: {"lines": v[0], "bytes": v[1]} for k, v in file_sizes.items()},
            "seconds": round(elapsed, 3),
        })
        all_facts += _fact_rows(conv, kept, texts, reasons)
    return rows, all_facts


def pipeline_workspace(conv: Any, tmp: str, *, max_lines: int = budget_mod.MAX_LINES,
                       max_bytes: int = budget_mod.MAX_BYTES) -> tuple[Any, dict[str, Any]]:
    """A writable workspace under ``tmp`` holding ``conv`` and what Dream learned from it (the product path).

    ``evlog init``, the project registered (its directory created under ``tmp`` first:
    evlog never creates one), the events of ``locomo_data.events`` appended unchanged
    (one atomic batch per LoCoMo session, as an ingest of one file per session would),
    then ``processors.run(ws, "dream", llm=make_llm("offline"))``. Returns the open
    workspace (the caller closes it) and timings and the Dream report.
    """
    import locomo_data

    import eventlog
    import processors
    from processors.llm import make_llm

    t0 = time.perf_counter()
    home = os.path.join(tmp, "home")
    eventlog.init_workspace(home, memory_max_lines=max_lines, memory_max_bytes=max_bytes)
    ws = eventlog.open_workspace(home, writable=True)
    try:
        events = locomo_data.events(conv)
        projects = {ev.project for ev in events if getattr(ev, "project", "")}
        registered = []
        for project in sorted(projects):
            # the project is a label (locomo/<sample_id>); its directory is made under tmp, never in the cwd
            directory = os.path.join(tmp, "projects", project)
            os.makedirs(directory, exist_ok=True)
            ws.register_project(directory)
            registered.append(directory)
        sessions: dict[str, list[Any]] = defaultdict(list)
        for ev in events:
            sessions[ev.session_key].append(ev)
        for batch in sessions.values():
            ws.append(batch)
        t1 = time.perf_counter()
        report = processors.run(ws, "dream", llm=make_llm("offline"))
        t2 = time.perf_counter()
        ws.flush()
    except BaseException:
        ws.close()
        raise
    return ws, {"append_seconds": t1 - t0, "dream_seconds": t2 - t1, "report": report, "registered": registered}


def _memory_files(home: str) -> dict[str, dict[str, int]]:
    """Every MEMORY.md under ``home/memory`` as written on disk: lines and bytes."""
    out = {}
    root = os.path.join(home, "memory")
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            if name == "MEMORY.md":
                with open(os.path.join(dirpath, name), "rb") as f:
                    data = f.read()
                out[os.path.relpath(os.path.join(dirpath, name), home)] = {"lines": data.count(b"\n"),
                                                                            "bytes": len(data)}
    return out


def run_locomo_pipeline(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """``--pipeline``: per-conversation results, the facts MEMORY.md shows, and the replay check of the first workspace."""
    import locomo_data
    import msgspec

    from eventlog.app import memory as memory_app
    from eventlog.app import replay
    from eventlog.events import DreamCompleted, DreamFailed
    from processors.dream import existing_of

    convs = locomo_data.load()
    if args.conversations:
        convs = convs[: args.conversations]
    rows: list[dict[str, Any]] = []
    all_facts: list[dict[str, Any]] = []
    check: dict[str, Any] = {}
    for n, conv in enumerate(convs):
        t0 = time.perf_counter()
        tmp = tempfile.mkdtemp(prefix="evlog-eval-pipeline-")
        try:
            ws, info = pipeline_workspace(conv, tmp, max_lines=args.max_lines, max_bytes=args.max_bytes)
            try:
                elapsed = time.perf_counter() - t0
                log = list(ws.log.read(1))
                entries = entries_from_events(log)  # with the seqs the log gave them
                by_seq = {e.seq: e for e in entries}
                texts = {e.ref: e.text for e in entries}
                refused = [r for ev in log if isinstance(ev, DreamCompleted | DreamFailed) for r in ev.validation]
                ops_count: Counter[str] = Counter()
                reasons: dict[str, str] = {}
                for ev in log:  # the operations the extractor answered, as recorded (raw_output)
                    if isinstance(ev, DreamCompleted):
                        try:
                            answered = json.loads(ev.raw_output).get("ops", [])
                        except (ValueError, AttributeError):
                            answered = []
                        ops_count.update(o.get("op", "") for o in answered)
                        reasons.update({o["text"]: o.get("reason", "") for o in answered if o.get("text")})
                facts: list[ExistingFact] = []
                mismatched = 0
                for f in memory_app.facts(ws, state=None):
                    # sources by message: the seqs Dream recorded, through the log's message ids (dia_ids)
                    refs = [by_seq[q].ref for q in f.source_seqs if q in by_seq] if f.source_seqs else list(f.source_refs)
                    mismatched += refs != list(f.source_refs)
                    facts.append(msgspec.structs.replace(existing_of(f), sources=refs))
                kept = [f for f in facts if f.state == "active"]
                files = _memory_files(ws.home)
                registered_files = sum(len(fs) for d in info["registered"] for _p, _d, fs in os.walk(d))
                if n == 0:
                    t = time.perf_counter()
                    res = replay.check(ws)
                    check = {"kind": "replay_check", "conversation": conv.sample_id, "clean": res.clean,
                             "seq": res.seq, "log_end": res.log_end, "files": res.files,
                             "drifts": [str(d) for d in res.drifts][:5], "index_problems": res.index_problems[:5],
                             "seconds": round(time.perf_counter() - t, 3)}
            finally:
                ws.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        report = info["report"]
        m = score_conversation(conv, texts, kept, facts)
        states = Counter(f.state for f in facts)
        over = {k: v for k, v in files.items() if v["lines"] > args.max_lines or v["bytes"] > args.max_bytes}
        rows.append({
            "kind": "locomo_conversation", "mode": "pipeline", "conversation": conv.sample_id, "turns": len(entries),
            "sessions": len({e.session_key for e in entries}), "questions": m["questions"], "covered": m["covered"],
            "per_category": m["per_category"], "answer_in_memory": m["answer_in_memory"],
            "facts_in_budget": len(kept), "facts_archived": states["archived"],
            "superseded": states["superseded"], "forgotten": states["forgotten"],
            "ops": dict(ops_count),
            "fact_events": {"appended": sum(len(r.facts) for r in report.runs),
                            "superseded": sum(len(r.superseded) for r in report.runs),
                            "forgotten": sum(len(r.forgotten) for r in report.runs),
                            "archived": sum(len(r.archived) for r in report.runs)},
            **{k: m[k] for k in ("cut_mid_word", "cut_examples", "near_duplicate_pairs", "duplicate_examples",
                                 "no_subject_or_date", "max_sources")},
            "dream_runs": len(report.runs), "dream_outcomes": dict(Counter(r.outcome for r in report.runs)),
            "pending_after": report.pending_after, "refused": len(refused), "refused_examples": refused[:3],
            "source_mismatches": mismatched, "memory_files": files, "over_budget_files": over,
            "mirrored_files": registered_files,
            "append_seconds": round(info["append_seconds"], 3), "dream_seconds": round(info["dream_seconds"], 3),
            "seconds": round(elapsed, 3),
        })
        all_facts += _fact_rows(conv, kept, texts, reasons)
    return rows, all_facts, check


def locomo_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The totals over all conversations."""
    q = sum(r["questions"] for r in rows)
    cov = sum(r["covered"] for r in rows)
    cats: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        for c, (h, n) in r["per_category"].items():
            cats[c][0] += h
            cats[c][1] += n
    return {
        "kind": "locomo_total", "conversations": len(rows), "turns": sum(r["turns"] for r in rows), "questions": q,
        "coverage": round(cov / q, 4) if q else 0.0,
        "coverage_by_category": {c: round(h / n, 4) if n else 0.0 for c, (h, n) in cats.items()},
        "answer_in_memory": round(sum(r["answer_in_memory"] for r in rows) / q, 4) if q else 0.0,
        "facts_in_budget": sum(r["facts_in_budget"] for r in rows),
        "facts_archived": sum(r["facts_archived"] for r in rows),
        "superseded": sum(r["superseded"] for r in rows), "forgotten": sum(r["forgotten"] for r in rows),
        "cut_mid_word": sum(r["cut_mid_word"] for r in rows),
        "near_duplicate_pairs": sum(r["near_duplicate_pairs"] for r in rows),
        "no_subject_or_date": sum(r["no_subject_or_date"] for r in rows),
        "max_sources": max((r["max_sources"] for r in rows), default=0),
        "seconds": round(sum(r["seconds"] for r in rows), 2),
        "mode": rows[0].get("mode", "direct") if rows else "direct",
    }


def pipeline_summary(rows: list[dict[str, Any]], check: dict[str, Any]) -> dict[str, Any]:
    """``locomo_summary`` plus what only the product path has: Dream runs, the files' budget, the replay check."""
    files = [f for r in rows for f in r["memory_files"].values()]
    return {
        **locomo_summary(rows),
        "dream_runs": sum(r["dream_runs"] for r in rows),
        "dream_outcomes": dict(sum((Counter(r["dream_outcomes"]) for r in rows), Counter())),
        "pending_after": sum(r["pending_after"] for r in rows), "refused": sum(r["refused"] for r in rows),
        "source_mismatches": sum(r["source_mismatches"] for r in rows),
        "memory_files": len(files), "max_file_lines": max((f["lines"] for f in files), default=0),
        "max_file_bytes": max((f["bytes"] for f in files), default=0),
        "over_budget_files": sum(len(r["over_budget_files"]) for r in rows),
        "mirrored_files": sum(r["mirrored_files"] for r in rows),
        "append_seconds": round(sum(r["append_seconds"] for r in rows), 2),
        "dream_seconds": round(sum(r["dream_seconds"] for r in rows), 2),
        "replay_check": check.get("clean"), "replay_check_conversation": check.get("conversation", ""),
    }


# --- real transcripts ---------------------------------------------------------------------------


def _evlog_cmd() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "evlog")
    if os.path.exists(script):
        return [script]
    found = shutil.which("evlog")
    if found:
        return [found]
    return [sys.executable, "-c", "from eventlog.cli import main; main()"]


def real_entries(path: str) -> list[Entry]:
    """Ingest ``path`` into a temporary workspace (the ``evlog`` command line) and return its entries."""
    import eventlog

    home = tempfile.mkdtemp(prefix="evlog-eval-")
    try:
        eventlog.init_workspace(home)
        proc = subprocess.run([*_evlog_cmd(), "--home", home, "ingest", path], capture_output=True, text=True,
                              check=False)
        if proc.returncode not in (0, 1):
            raise RuntimeError(f"evlog ingest {path} failed ({proc.returncode}): {proc.stderr[-500:]}")
        ws = eventlog.open_workspace(home)
        try:
            events = list(ws.log.read(1))
        finally:
            close = getattr(ws, "close", None)
            if close:
                close()
        return entries_from_events(events)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def extract_in_batches(entries: list[Entry], extract=offline.extract,
                       batch_size: int = BATCH) -> tuple[list[ExistingFact], list[FactOp]]:
    """Feed ``entries`` to ``extract`` as Dream would: one project per call, at most ``batch_size`` entries, in order."""
    facts: list[ExistingFact] = []
    all_ops: list[FactOp] = []
    i = 0
    while i < len(entries):
        project = entries[i].project
        batch = []
        while i < len(entries) and entries[i].project == project and len(batch) < batch_size:
            batch.append(entries[i])
            i += 1
        ops = extract(batch, [f for f in facts if f.state == "active"])
        all_ops += ops
        facts = apply_ops(facts, ops)
    return facts, all_ops


def run_real(args: argparse.Namespace) -> list[dict[str, Any]]:
    """One row per source folder with its facts."""
    root = _real_root()
    rows = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if name == "locomo" or not os.path.isdir(path):
            continue
        entries = real_entries(path)
        facts, ops = extract_in_batches(entries)
        by_ref = {e.ref: e for e in entries}
        active = [f for f in facts if f.state == "active"]
        bad = [f for f in active if any(s not in by_ref or skip_reason(by_ref[s]) is not None for s in f.sources)]
        rows.append({
            "kind": "real_source", "source": name, "messages": len(entries),
            "user_messages": sum(1 for e in entries if e.role == "user"),
            "facts": [{"text": f.text, "subject": f.subject, "scope": f.scope, "project": f.project,
                       "section": f.section, "when": f.when, "sources": f.sources,
                       "source_text": [by_ref[s].text[:300] if s in by_ref else "" for s in f.sources]}
                      for f in active],
            "injected_sources": len(bad), "ops": dict(Counter(o.op for o in ops)),
        })
    return rows


# --- coding sessions (issue 21, item 5) --------------------------------------------------------------

CODING_LABELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "judged", "coding-labels.json")


def score_coding(facts: list[str], items: list[dict[str, Any]]) -> dict[str, Any]:
    """Which labels the facts state (``match``, case-insensitive) and which facts state a label."""
    pats = [(it["id"], re.compile(it["match"], re.IGNORECASE)) for it in items]
    found = sorted({i for i, p in pats for f in facts if p.search(f)})
    precise = [f for f in facts if any(p.search(f) for _i, p in pats)]
    return {"labels": len(items), "found": found, "missed": [i for i, _p in pats if i not in found],
            "facts": len(facts), "precise": len(precise), "imprecise": [f for f in facts if f not in precise]}


def run_coding(args: argparse.Namespace | None, batch_size: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Recall and precision of the offline extractor against the careful reader's labels, per project and split.

    ``batch_size`` entries per extractor call (0: Dream's own offline batch, ``dream.OFFLINE_BATCH``); the
    splits are those the labels file names (``tune``, ``held-out``, and ``held-out-new`` for projects labelled
    later, reported apart).
    """
    from processors.dream import OFFLINE_BATCH

    with open(CODING_LABELS, encoding="utf-8") as f:
        labels = json.load(f)["projects"]
    root = _real_root()
    rows = []
    for name, spec in labels.items():
        entries = real_entries(os.path.join(root, name))
        facts, _ops = extract_in_batches(entries, batch_size=batch_size or OFFLINE_BATCH)
        texts = [x.text for x in facts if x.state == "active"]
        rows.append({"kind": "coding_source", "source": name, "split": spec["split"],
                     **score_coding(texts, spec["items"])})
    total: dict[str, Any] = {"kind": "coding_summary", "batch": batch_size or OFFLINE_BATCH}
    for split in dict.fromkeys(r["split"] for r in rows):
        mine = [r for r in rows if r["split"] == split]
        n_labels, n_found = sum(r["labels"] for r in mine), sum(len(r["found"]) for r in mine)
        n_facts, n_precise = sum(r["facts"] for r in mine), sum(r["precise"] for r in mine)
        total[split] = {"recall": round(n_found / n_labels, 3) if n_labels else None, "labels": n_labels,
                        "found": n_found, "precision": round(n_precise / n_facts, 3) if n_facts else None,
                        "facts": n_facts, "precise": n_precise}
    return rows, total


# --- output -------------------------------------------------------------------------------------


@contextlib.contextmanager
def signals_dropped(kinds: set[str]) -> Iterator[None]:
    """While inside, ``signals`` writes no sentence of these kinds (``--drop-signals``: what the other rules
    give without the word-list signals, or without the language one)."""
    from processors.extract import signals

    real = signals.signal_sentences
    signals.signal_sentences = lambda found, known=(): real([x for x in found if x.kind not in kinds], known)
    try:
        yield
    finally:
        signals.signal_sentences = real


def emit_coding(args: argparse.Namespace, emit: Any) -> None:
    """Print ``run_coding``: a line per source, then the recall and precision of each split.

    Measured as Dream's offline extractor batches its input, then again in batches of ``BATCH`` entries
    (a stricter setting: a loop cut between two calls is seen in neither).
    """
    for size in (args.batch, BATCH) if args.batch != BATCH else (BATCH,):
        with signals_dropped(set(filter(None, args.drop_signals.split(",")))):
            rows, total = run_coding(args, size)
        for r in rows:
            emit(r, f"{r['source']} ({r['split']}): {len(r['found'])}/{r['labels']} labels found, "
                    f"{r['precise']}/{r['facts']} facts precise; missed {r['missed']}; imprecise {r['imprecise']}")
        emit(total, f"coding, batches of {total['batch']} entries: " + "; ".join(
            f"{k}: recall {v['recall']} ({v['found']}/{v['labels']}), precision {v['precision']} "
            f"({v['precise']}/{v['facts']})" for k, v in total.items() if isinstance(v, dict)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="?", choices=("all", "locomo", "real", "coding"), default="all")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--sample", type=int, default=0, help="print N random in-budget LoCoMo facts with their sources")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--half", choices=("even", "odd"), default="",
                   help="--sample draws only from the LoCoMo conversations with an even (0, 2, ...) or odd index: "
                        "a tuning / held-out split")
    p.add_argument("--conversations", type=int, default=0, help="only the first N LoCoMo conversations")
    p.add_argument("--batch", type=int, default=0,
                   help="coding: entries per extractor call (default: Dream's offline batch; batches of "
                        f"{BATCH} are always measured too)")
    p.add_argument("--drop-signals", default="", metavar="KINDS",
                   help="coding: signals.py writes no sentence of these kinds (comma-separated: stack, "
                        "tracking, instructions)")
    p.add_argument("--max-lines", type=int, default=budget_mod.MAX_LINES)
    p.add_argument("--max-bytes", type=int, default=budget_mod.MAX_BYTES)
    p.add_argument("--pipeline", action="store_true",
                   help="LoCoMo through the product path: a workspace per conversation, its events appended, "
                        "'run dream' with the offline extractor (see the module docstring)")
    args = p.parse_args(argv)
    if args.pipeline and args.what != "locomo":
        p.error("--pipeline measures LoCoMo only: use 'locomo --pipeline'")

    def emit(obj: dict[str, Any], text: str) -> None:
        print(json.dumps(obj, ensure_ascii=False) if args.json else text, flush=True)

    if args.what == "coding":
        emit_coding(args, emit)
        return 0
    if args.what in ("all", "locomo"):
        wall = time.perf_counter()
        check: dict[str, Any] = {}
        if args.pipeline:
            rows, facts, check = run_locomo_pipeline(args)
        else:
            rows, facts = run_locomo(args)
        wall = time.perf_counter() - wall
        if args.sample:
            rng = random.Random(args.seed)
            if args.half:
                import locomo_data

                index = {c.sample_id: i for i, c in enumerate(locomo_data.load())}
                facts = [f for f in facts if index[f["conversation"]] % 2 == (args.half == "odd")]
            for i, f in enumerate(rng.sample(facts, min(args.sample, len(facts))), 1):
                emit({"kind": "sample", "n": i, **f},
                     f"[{i}] {f['conversation']} {f['section']} ({f['when'][:10]}; {f['reason']}): {f['text']}\n"
                     + "".join(f"      <- {s}: {t}\n" for s, t in zip(f["sources"], f["source_text"], strict=False)))
        else:
            for r in rows:
                runs = (f", {r['dream_runs']} Dream run(s) {r['dream_outcomes']}, files "
                        + ", ".join(f"{k} {v['lines']} lines {v['bytes']} B" for k, v in r["memory_files"].items())
                        if args.pipeline else "")
                emit(r, f"{r['conversation']}: {r['covered']}/{r['questions']} covered, {r['facts_in_budget']} facts "
                        f"in budget, {r['facts_archived']} archived, ops {r['ops']}, cut {r['cut_mid_word']}, "
                        f"dups {r['near_duplicate_pairs']}{runs}, {r['seconds']}s")
            if args.pipeline:
                emit(check, "replay --check of {conversation}'s workspace: {verdict} ({files} files at seq {seq} of "
                            "{log_end}){extra}".format(**check, verdict="clean" if check["clean"] else "DRIFT",
                                                       extra="" if check["clean"] else f": {check['drifts']} "
                                                       f"{check['index_problems']}"))
                s = pipeline_summary(rows, check)
            else:
                s = locomo_summary(rows)
            s["wall_seconds"] = round(wall, 2)
            emit(s, "LoCoMo: coverage {coverage:.1%} of {questions} questions {coverage_by_category}; answer in "
                    "memory {answer_in_memory:.1%}; {facts_in_budget} facts in budget, {facts_archived} archived, "
                    "{superseded} superseded, {forgotten} forgotten; cut mid-word {cut_mid_word}; near-duplicate pairs "
                    "{near_duplicate_pairs}; without subject or date {no_subject_or_date}; max sources {max_sources}; "
                    "{seconds}s".format(**s)
                 + ("\nPipeline: {dream_runs} Dream runs {dream_outcomes}, {refused} operations refused, {pending_after} "
                    "entries left pending; {memory_files} MEMORY.md files, at most {max_file_lines} lines and "
                    "{max_file_bytes} bytes, {over_budget_files} over the budget; source mismatches "
                    "{source_mismatches}; replay --check clean on {replay_check_conversation}: {replay_check}; "
                    "append {append_seconds}s, dream {dream_seconds}s, wall {wall_seconds}s".format(**s)
                    if args.pipeline else ""))
    if args.what in ("all", "real") and not args.sample:
        for r in run_real(args):
            lines = [f"{r['source']}: {r['messages']} messages ({r['user_messages']} from users), "
                     f"{len(r['facts'])} facts, injected sources {r['injected_sources']}, ops {r['ops']}"]
            for f in r["facts"]:
                where = f['scope'] + (':' + f['project'] if f['project'] else '')
                lines.append(f"  - [{where} / {f['section']}] {f['text']}")
                for s, t in zip(f["sources"], f["source_text"], strict=False):
                    lines.append(f"      <- {s}: {' '.join(t.split())[:160]}")
            emit(r, "\n".join(lines))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # piped into head: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
