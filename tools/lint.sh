#!/usr/bin/env bash
# Static checks, independent of the test suite: ruff (lint and import order) and mypy (types)
# over the whole repository, configured in pyproject.toml ([tool.ruff], [tool.mypy]), and
# tools/func_sizes.py --check: no function of the library over 60 lines or complexity 15 but
# those its KNOWN_OFFENDERS list names (to split, issue 20).
# Uses the virtualenv tools/test.sh sets up (.venv); creates it with the test extra (which
# brings ruff and mypy) if it is missing. Exits non-zero on any finding.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
if [ ! -x .venv/bin/ruff ] || [ ! -x .venv/bin/mypy ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[test]"
fi
status=0
.venv/bin/ruff check eventlog projections processors tests tools || status=1
.venv/bin/mypy || status=1  # the packages listed in [tool.mypy]: eventlog, projections, processors
.venv/bin/python tools/func_sizes.py --check || status=1  # eventlog projections processors
exit $status
