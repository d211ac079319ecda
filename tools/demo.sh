#!/usr/bin/env bash
# Set up a virtualenv (.venv) with evlog, then run the main job on a fresh workspace
# (./demo-home, or $EVLOG_HOME): init, append the bundled example events, tail, verify.
# This is the README's "run it" command. Nothing here needs a network or an API key.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
export EVLOG_HOME=${EVLOG_HOME:-$PWD/demo-home}
evlog() { .venv/bin/evlog "$@"; }
set -x
evlog init
evlog append examples/events.ndjson
evlog tail -n 5
evlog verify
