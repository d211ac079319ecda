"""How often the secret detector fires on real text that holds no (or few) secrets: its false-positive rate.

Reads the real third-party data in place (``../shared/data/real``, never copied): the
transcripts ingest reads (every string ingest keeps: message content, tool calls, extra,
session titles and metadata), LoCoMo's chat turns and LongMemEval's sessions (gzip JSON,
read in memory). Every string goes through ``eventlog.secrets.find``, and each hit is
printed with its context, the secret itself masked (its kind, length, character classes
and entropy: enough for a person to judge, nothing to leak). ``--labels FILE`` reads a
person's verdicts (``{"<hit id>": "secret" | "false-positive", ...}``; the id is a hash of
the source and the matched text, so it names no secret) and prints the false-positive
rate: false positives per MB of text and per 1,000 strings. Hits without a verdict are
counted as unjudged.

    .venv/bin/python tools/secret_fp.py [--data DIR] [--labels tools/secret_fp_labels.json] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import xxhash

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from eventlog.secrets import _classes, entropy, find, placeholder  # noqa: E402
from tools.real_data import find as find_real_data  # noqa: E402

DEFAULT_LABELS = os.path.join(HERE, "secret_fp_labels.json")
CONTEXT = 60


def _strings(v: Any) -> Iterator[str]:
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from _strings(x)
    elif isinstance(v, list | tuple):
        for x in v:
            yield from _strings(x)


def transcript_strings(data: str) -> Iterator[tuple[str, str]]:
    """(source, string) for every string ingest keeps from the transcripts under ``data``."""
    from eventlog.ingest import collect_files, parse_file
    from eventlog.ingest.detect import detect, read_records

    for path in collect_files([data]):
        try:
            if detect(read_records(path)) is None:
                continue
            pf = parse_file(path)
        except Exception:  # noqa: BLE001 - not a transcript (a data set's JSON): read below
            continue
        rel = os.path.relpath(path, data)
        for s in pf.sessions:
            for x in _strings([s.title, s.metadata]):
                yield rel, x
            for m in s.messages:
                for x in _strings([m.content, m.tool_calls, m.extra]):
                    yield rel, x


def dataset_strings(data: str) -> Iterator[tuple[str, str]]:
    """(source, string) for LoCoMo's and LongMemEval's JSON (chat text, read in memory)."""
    for sub in ("locomo", "longmemeval"):
        folder = os.path.join(data, sub)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.endswith(".json.gz"):
                with gzip.open(path, "rt", encoding="utf-8") as f:
                    obj = json.load(f)
            elif name.endswith(".json"):
                with open(path, encoding="utf-8") as f:
                    obj = json.load(f)
            else:
                continue
            for x in _strings(obj):
                yield f"{sub}/{name}", x


def hit_id(source: str, secret: str) -> str:
    """A stable id for a hit that names no secret: xxh3-64 of the source and the matched text."""
    return xxhash.xxh3_64_hexdigest(f"{source}\x00{secret}".encode("utf-8", "surrogatepass"))


def _shape(secret: str) -> str:
    up, lo, dig = _classes(secret)
    classes = ("A" if up else "") + ("a" if lo else "") + ("9" if dig else "")
    other = sorted({c for c in secret if not c.isalnum()})
    return f"{len(secret)} chars [{classes}{''.join(other)[:8]}] {entropy(secret):.1f} bits/char"


def scan(data: str) -> dict[str, Any]:
    """Every hit in the real data, with its masked context, and the totals."""
    hits: list[dict[str, Any]] = []
    strings = 0
    size = 0
    seconds = 0.0
    for source, text in (*transcript_strings(data), *dataset_strings(data)):
        strings += 1
        size += len(text.encode("utf-8", "surrogatepass"))
        t0 = time.perf_counter()
        found = find(text)
        seconds += time.perf_counter() - t0
        for s, e, kind in found:
            secret = text[s:e]
            before = text[max(0, s - CONTEXT):s]
            after = text[e:e + CONTEXT]
            hits.append({"id": hit_id(source, secret), "source": source, "kind": kind, "shape": _shape(secret),
                         "context": (before + placeholder(kind) + after).replace("\n", "\\n")})
    return {"strings": strings, "bytes": size, "seconds": seconds, "hits": hits}


def summarize(result: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    verdicts = Counter(labels.get(h["id"], "unjudged") for h in result["hits"])
    fp = verdicts.get("false-positive", 0)
    mb = result["bytes"] / 1e6
    return {"strings": result["strings"], "mb": round(mb, 2), "hits": len(result["hits"]),
            "by_kind": dict(Counter(h["kind"] for h in result["hits"]).most_common()),
            "secret": verdicts.get("secret", 0), "false_positive": fp, "unjudged": verdicts.get("unjudged", 0),
            "fp_per_mb": round(fp / mb, 3) if mb else 0.0,
            "fp_per_1000_strings": round(1000 * fp / result["strings"], 3) if result["strings"] else 0.0,
            "mb_per_s": round(mb / result["seconds"], 1) if result["seconds"] else 0.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=None, help="the real data folder (default: $EVLOG_REAL_DATA, else ../shared/data/real)")
    ap.add_argument("--labels", default=DEFAULT_LABELS, help="a person's verdicts per hit id (JSON)")
    ap.add_argument("--json", action="store_true", help="one JSON object per hit, then the summary")
    args = ap.parse_args(argv)
    labels: dict[str, str] = {}
    if args.labels and os.path.exists(args.labels):
        with open(args.labels, encoding="utf-8") as f:
            labels = {k: v for k, v in json.load(f).items() if not k.startswith("_")}
    result = scan(args.data or find_real_data())
    summary = summarize(result, labels)
    for h in result["hits"]:
        verdict = labels.get(h["id"], "unjudged")
        if args.json:
            print(json.dumps({**h, "verdict": verdict}, ensure_ascii=False))
        else:
            print(f"{h['id']} {verdict:14} {h['kind']:20} {h['source']}: {h['shape']}\n    ...{h['context']}...")
    print(json.dumps(summary) if args.json else
          f"{summary['hits']} hit(s) in {summary['strings']} strings, {summary['mb']} MB: {summary['by_kind']}; "
          f"{summary['secret']} secret(s), {summary['false_positive']} false positive(s), {summary['unjudged']} unjudged; "
          f"{summary['fp_per_mb']} false positives per MB, {summary['fp_per_1000_strings']} per 1000 strings; "
          f"scanned at {summary['mb_per_s']} MB/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
