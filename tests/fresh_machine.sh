#!/usr/bin/env bash
# The fresh-machine check: the README's `make test` on a clean clone, on a machine without
# bubblewrap, must install bubblewrap itself and pass; where it cannot install it, `make
# test` fails with one line saying how and `make run` goes on in weak isolation.
#
# It REMOVES the bubblewrap package, so it runs only as root in a container (or with
# CURATOR_FRESH_MACHINE=1 where you accept that), e.g.
#
#   docker run --rm -v "$PWD":/src:ro python:3.11-bookworm bash /src/tests/fresh_machine.sh /src
#
#   tests/fresh_machine.sh [SOURCE]     # SOURCE: a checkout or URL to clone (default: this one)
#
# PYTEST_ARGS picks what `make test` runs (default: a few minutes' worth that needs the
# sandbox); FULL=1 runs the whole suite. Nothing here names a package index: pip uses the
# machine's own configuration.
set -euo pipefail
src="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
if [ "$(id -u)" != 0 ]; then
    echo "error: run as root (in a container): this check removes and installs bubblewrap" >&2
    exit 2
fi
if [ ! -e /.dockerenv ] && [ ! -e /run/.containerenv ] && [ "${CURATOR_FRESH_MACHINE:-}" != 1 ]; then
    echo "error: not in a container; set CURATOR_FRESH_MACHINE=1 to remove bubblewrap here anyway" >&2
    exit 2
fi
for tool in git make; do
    command -v "$tool" >/dev/null || { apt-get update -qq && apt-get install -y -qq "$tool" >/dev/null; }
done
git config --global user.email >/dev/null 2>&1 || git config --global user.email "fresh@localhost"
git config --global user.name >/dev/null 2>&1 || git config --global user.name "fresh"

work="$(mktemp -d /tmp/curator-fresh.XXXXXX)"
chmod 755 "$work"
clone="$work/curator"
git clone -q "$src" "$clone"
echo "clean clone of $src at $(git -C "$clone" rev-parse --short HEAD) in $clone"

fail() { echo "FRESH MACHINE CHECK FAILED: $*" >&2; exit 1; }

# Whatever happens below, bubblewrap is back at the end.
restore() { command -v bwrap >/dev/null || apt-get install -y -qq bubblewrap >/dev/null 2>&1 || true; }
trap restore EXIT

if dpkg -s bubblewrap >/dev/null 2>&1; then
    apt-get remove -y -qq bubblewrap >/dev/null
fi
command -v bwrap >/dev/null && fail "bwrap is still on PATH after removing the package"
echo "bubblewrap removed"

# 1. A user who cannot install it: one line saying how; test fails, run goes on.
set +e
out="$(setpriv --reuid 65534 --regid 65534 --clear-groups make -s -C "$clone" sandbox 2>&1)"
status=$?
set -e
[ "$status" -ne 0 ] || fail "make sandbox (the first step of make test) passed without bubblewrap"
[ "$(printf '%s\n' "$out" | grep -c 'bubblewrap')" -eq 1 ] || fail "expected one line, got: $out"
echo "as nobody, make test's first step fails with: $(printf '%s\n' "$out" | grep bubblewrap)"
out="$(setpriv --reuid 65534 --regid 65534 --clear-groups make -s -C "$clone" sandbox-optional 2>&1)" \
    || fail "make run's first step must go on in weak mode: $out"
echo "as nobody, make run's first step goes on: $out"

# 2. root: `make test` installs bubblewrap itself, then the suite passes.
if [ "${FULL:-}" = 1 ]; then
    args=""
else
    args="${PYTEST_ARGS:-tests/test_ensure_bubblewrap.py tests/execution/test_execution.py}"
fi
start=$(date +%s)
make -C "$clone" test PYTEST_ARGS="$args" || fail "make test failed on the fresh machine"
command -v bwrap >/dev/null || fail "make test passed but bubblewrap is not installed"
level="$("$clone/.venv/bin/curator" --workspace "$clone" doctor --json | "$clone/.venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["isolation"])')"
[ "$level" = strong ] || fail "curator doctor says isolation is $level after make test"
echo "fresh machine check passed in $(( $(date +%s) - start )) s: make test installed $(command -v bwrap) ($(bwrap --version)), isolation $level"
rm -rf "$work"
