#!/usr/bin/env bash
# Set up a virtualenv (.venv) with evlog and its test dependencies, then run every test.
# This is the README's test command; .ci/run calls it too. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
exec .venv/bin/python -m pytest "$@"
