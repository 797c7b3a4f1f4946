# Sourced by scripts/demo and scripts/test: create or reuse .venv and install the project into it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${STEPWISE_VENV:-$ROOT/.venv}"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 \
      && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      PY="$candidate"; break
    fi
  done
fi
[ -n "$PY" ] || { echo "Stepwise needs Python 3.11 or newer on PATH (set PYTHON=/path/to/python3.11)." >&2; exit 2; }
command -v git >/dev/null 2>&1 || { echo "Stepwise needs git on PATH." >&2; exit 2; }
if [ ! -x "$VENV/bin/python" ]; then
  echo "Creating the virtualenv $VENV (once)..." >&2
  "$PY" -m venv "$VENV"
fi
# Reinstall only when the project metadata or the pinned versions changed since the last install.
STAMP="$VENV/.stepwise-installed"
EXTRAS="${STEPWISE_EXTRAS:-}"
HASH="$("$PY" -c 'import hashlib, sys; print(hashlib.sha256(b"".join(open(p, "rb").read() for p in sys.argv[1:])).hexdigest()[:16])' "$ROOT/pyproject.toml" "$ROOT/requirements.lock")"
WANT="$HASH$EXTRAS"
HAVE="$(cat "$STAMP" 2>/dev/null || true)"
# An install with the dev extras also serves a plain run.
if [ "$HAVE" != "$WANT" ] && [ "$HAVE" != "$HASH[dev]" ]; then
  echo "Installing Stepwise and its pinned dependencies into $VENV (the first time takes about a minute; each package is named as it comes)..." >&2
  # The versions the project was tested with (requirements.lock), not whatever is newest today.
  "$VENV/bin/python" -m pip install --progress-bar off --disable-pip-version-check \
    -c "$ROOT/requirements.lock" -e "$ROOT$EXTRAS" 2>&1 \
    | { grep --line-buffered -E "^(Collecting|Successfully installed|ERROR)" \
        | sed -u -e 's/^Collecting /  getting /' -e 's/^Successfully installed .*/  installed./' \
        || true; } >&2
  echo "$WANT" > "$STAMP"
fi
# The project's own bytecode, as an installed package carries it (pip compiles at install, the
# Docker image too): with PYTHONDONTWRITEBYTECODE set, an editable checkout would otherwise
# compile its ~600 modules again at every `stepwise` start (0.2 s each). Up-to-date files are skipped.
"$VENV/bin/python" -m compileall -q "$ROOT/bot" "$ROOT/jobs" >/dev/null || true
# Programs the project runs (python, stepwise) resolve to the virtualenv first.
export PATH="$VENV/bin:$PATH"
export VIRTUAL_ENV="$VENV"
