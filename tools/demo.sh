#!/usr/bin/env bash
# The README's "run it" command: set up a virtualenv (.venv) with evlog, then run the whole
# pipeline on the bundled example conversations in a fresh workspace (./demo-home, or
# $EVLOG_HOME): ingest -> snapshot -> digest -> consolidate -> dream (offline extractor:
# no API key, no network) -> show MEMORY.md, the audit and why a line is there -> verify.
# Run it again and nothing is duplicated.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
export EVLOG_HOME=${EVLOG_HOME:-$PWD/demo-home}
PROJECT="$EVLOG_HOME/shop"   # the project the example conversations belong to
step() { printf '\n\033[1m$ evlog %s\033[0m\n' "$*" >&2; .venv/bin/evlog "$@"; }

step init
mkdir -p "$PROJECT"
step ingest examples/transcripts --project "$PROJECT"
step sessions
step run snapshot
step run digest
step run consolidate
step run dream --llm offline
printf '\n==> %s\n' "$EVLOG_HOME/memory/MEMORY.md" >&2; cat "$EVLOG_HOME/memory/MEMORY.md"
printf '\n==> %s\n' "$PROJECT/memory/MEMORY.md" >&2; cat "$PROJECT/memory/MEMORY.md"
step audit
step audit why pytest
step tail -n 3
step verify
step replay --check
