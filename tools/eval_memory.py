#!/usr/bin/env python3
"""Evaluate fact extraction (``processors.extract``) on LoCoMo and on the real transcripts.

Run from the repository root::

    .venv/bin/python tools/eval_memory.py                      # LoCoMo and real transcripts, readable
    .venv/bin/python tools/eval_memory.py locomo --json        # one JSON object per line
    .venv/bin/python tools/eval_memory.py locomo --sample 50 --seed 1   # 50 random facts with their sources
    .venv/bin/python tools/eval_memory.py real                 # the facts of every real transcript

**LoCoMo** (``../shared/data/real/locomo``, read through ``tools/locomo_data.py``, never
copied): each conversation is its own project and its own memory. Its turns become
``Entry`` objects exactly as Dream would build them from the ``message.appended`` events
of ``locomo_data.events`` (speaker = ``extra.speaker`` or the role, meta = extra), and
are fed to the extractor one LoCoMo session per call, in order, with the active facts so
far as ``existing``. The operations are applied (``model.apply_ops``: add, supersede,
forget), then the budget (``budget.apply_budget``, 200 lines and 25,000 bytes per
MEMORY.md by default, nothing cited or recalled) per file. Reported:

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

**Real transcripts**: every source folder under ``../shared/data/real`` except locomo is
ingested into a temporary workspace with the ``evlog`` command line, the
``message.appended`` events become entries (by project, in log order, at most 30 a
call, as Dream batches), and the facts are printed with their sources.
``injected_sources`` counts facts with a source that ``text.skip_reason`` refuses
(must be 0).
"""

from __future__ import annotations

import argparse
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
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, REPO)
sys.path.insert(0, HERE)

from processors.extract import budget as budget_mod  # noqa: E402
from processors.extract import offline  # noqa: E402
from processors.extract.model import Entry, ExistingFact, FactOp, apply_ops  # noqa: E402
from processors.extract.signals import vocabulary  # noqa: E402
from processors.extract.text import ends_mid_word, near_duplicate, skip_reason  # noqa: E402
from processors.extract.timeref import DAYS, MONTHS  # noqa: E402

REWRITE_WORDS = ("themself", "themselves", "they", "them", "their", "theirs", "user", "team", "project", "is", "has",
                 "says", "photo", "assistant", "s")
BATCH = 30


def _real_root() -> str:
    if os.environ.get("EVLOG_REAL_DATA"):
        return os.environ["EVLOG_REAL_DATA"]
    here = REPO
    for _ in range(5):
        candidate = os.path.join(os.path.dirname(here), "shared", "data", "real")
        if os.path.isdir(candidate):
            return candidate
        here = os.path.dirname(here)
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
            k, a = budget_mod.apply_budget(fs, max_lines=args.max_lines, max_bytes=args.max_bytes)
            kept += k
            archived += a
            file_sizes["/".join(x for x in fk if x)] = budget_mod.size(k)
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
        states = Counter(f.state for f in facts)
        rows.append({
            "kind": "locomo_conversation", "conversation": conv.sample_id, "turns": len(entries),
            "sessions": len(by_session), "questions": len(qs),
            "covered": sum(v[0] for v in per_cat.values()),
            "per_category": {locomo_data.CATEGORY_NAMES[c]: v for c, v in sorted(per_cat.items())},
            "answer_in_memory": answer_hits, "facts_in_budget": len(kept), "facts_archived": len(archived),
            "superseded": states["superseded"], "forgotten": states["forgotten"], "ops": dict(ops_count),
            "cut_mid_word": len(cut), "cut_examples": [f.text for f in cut[:3]],
            "near_duplicate_pairs": len(dups), "duplicate_examples": dups[:3],
            "no_subject_or_date": sum(1 for f in kept if not f.subject or not f.when),
            "max_sources": max((len(f.sources) for f in facts), default=0),
            "file_sizes": {k: {"lines": v[0], "bytes": v[1]} for k, v in file_sizes.items()},
            "seconds": round(elapsed, 3),
        })
        for f in kept:
            all_facts.append({"conversation": conv.sample_id, "fact_id": f.fact_id, "text": f.text,
                              "subject": f.subject,
                              "section": f.section, "when": f.when, "sources": f.sources,
                              "reason": reasons.get(f.text, ""), "source_text": [texts.get(s, "") for s in f.sources]})
    return rows, all_facts


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


def extract_in_batches(entries: list[Entry], extract=offline.extract) -> tuple[list[ExistingFact], list[FactOp]]:
    """Feed ``entries`` to ``extract`` as Dream would: one project per call, at most ``BATCH`` entries, in order."""
    facts: list[ExistingFact] = []
    all_ops: list[FactOp] = []
    i = 0
    while i < len(entries):
        project = entries[i].project
        batch = []
        while i < len(entries) and entries[i].project == project and len(batch) < BATCH:
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


# --- output -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", nargs="?", choices=("all", "locomo", "real"), default="all")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--sample", type=int, default=0, help="print N random in-budget LoCoMo facts with their sources")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--conversations", type=int, default=0, help="only the first N LoCoMo conversations")
    p.add_argument("--max-lines", type=int, default=budget_mod.MAX_LINES)
    p.add_argument("--max-bytes", type=int, default=budget_mod.MAX_BYTES)
    args = p.parse_args(argv)

    def emit(obj: dict[str, Any], text: str) -> None:
        print(json.dumps(obj, ensure_ascii=False) if args.json else text, flush=True)

    if args.what in ("all", "locomo"):
        rows, facts = run_locomo(args)
        if args.sample:
            rng = random.Random(args.seed)
            for i, f in enumerate(rng.sample(facts, min(args.sample, len(facts))), 1):
                emit({"kind": "sample", "n": i, **f},
                     f"[{i}] {f['conversation']} {f['section']} ({f['when'][:10]}; {f['reason']}): {f['text']}\n"
                     + "".join(f"      <- {s}: {t}\n" for s, t in zip(f["sources"], f["source_text"], strict=False)))
        else:
            for r in rows:
                emit(r, f"{r['conversation']}: {r['covered']}/{r['questions']} covered, {r['facts_in_budget']} facts "
                        f"in budget, {r['facts_archived']} archived, ops {r['ops']}, cut {r['cut_mid_word']}, "
                        f"dups {r['near_duplicate_pairs']}, {r['seconds']}s")
            s = locomo_summary(rows)
            emit(s, "LoCoMo: coverage {coverage:.1%} of {questions} questions {coverage_by_category}; answer in "
                    "memory {answer_in_memory:.1%}; {facts_in_budget} facts in budget, {facts_archived} archived, "
                    "{superseded} superseded, {forgotten} forgotten; cut mid-word {cut_mid_word}; near-duplicate pairs "
                    "{near_duplicate_pairs}; without subject or date {no_subject_or_date}; max sources {max_sources}; "
                    "{seconds}s".format(**s))
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
