# Sourced by scripts/suite and scripts/test: make .venv and install the project into it, once per
# change of pyproject.toml.  Needs only python3 (>= 3.10) on PATH.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${PYTHON:-python3}"
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "error: $py is missing or older than Python 3.10; set PYTHON=/path/to/python3.10+" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  "$py" -m venv .venv
fi
stamp=".venv/.installed-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "setting up .venv (first run or pyproject.toml changed) ..." >&2
  log=".venv/install.log"
  if ! { .venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip \
         && .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test,sdk]"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "error: installing the project into .venv failed (log above, also in $log)" >&2
    exit 2
  fi
  rm -f .venv/.installed-*
  touch "$stamp"
fi
export PATH="$root/.venv/bin:$PATH"
# The official schemas are not committed.  In this repository's checkout they sit in a sibling
# ../shared/mcp-spec/schemas (CI uses the same); elsewhere the loader uses its cache or downloads
# the pinned files and verifies their sha256.
if [ -z "${MCP_CONFORMANCE_SCHEMA_DIR:-}" ] && [ -d "$root/../shared/mcp-spec/schemas" ]; then
  export MCP_CONFORMANCE_SCHEMA_DIR="$(cd "$root/../shared/mcp-spec/schemas" && pwd)"
fi
