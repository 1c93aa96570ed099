#!/bin/sh
# Make sure bubblewrap (bwrap), the strong sandbox for runs, is installed.
#
#   scripts/ensure-bubblewrap.sh --required   # `make test`: fail when it cannot be had
#   scripts/ensure-bubblewrap.sh --optional   # `make run`: say how, then go on (weak mode)
#
# Installs it when the machine allows: root with apt-get, or sudo without a password.
# Otherwise prints one line saying how. --required exits 1 then (a missing sandbox fails
# the suite), unless CURATOR_ALLOW_SKIP=1, which skips the tests that need it instead.
set -u
mode="${1:---required}"

have_bwrap() { command -v bwrap >/dev/null 2>&1; }

if have_bwrap; then
    exit 0
fi

as_root=""
if [ "$(id -u)" = 0 ]; then
    as_root="yes"
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    as_root="yes"
    sudo="sudo -n"
fi

log="${TMPDIR:-/tmp}/curator-bubblewrap.$$.log"
if [ -n "$as_root" ] && command -v apt-get >/dev/null 2>&1; then
    echo "bubblewrap (bwrap) is missing: installing it with apt-get" >&2
    # the package lists of a fresh machine are empty: update once if the first try fails
    if $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >"$log" 2>&1 \
        || { $sudo apt-get update -qq >>"$log" 2>&1 &&
             $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap \
                 >>"$log" 2>&1; }; then
        rm -f "$log"
        if have_bwrap; then
            echo "bubblewrap installed: $(command -v bwrap)" >&2
            exit 0
        fi
    fi
    why="apt-get could not install it ($(tail -n 1 "$log" 2>/dev/null)); install it with 'apt-get install bubblewrap'"
    rm -f "$log"
elif [ -n "$as_root" ]; then
    why="no apt-get here: install the bubblewrap package with this system's package manager"
else
    why="this user cannot install it (not root, no sudo without a password): run 'sudo apt-get install bubblewrap' (or this system's equivalent)"
fi

if [ "$mode" = "--optional" ]; then
    echo "warning: bubblewrap (bwrap) is missing, so runs get weak isolation (untrusted code can read your files and reach the network): $why" >&2
    exit 0
fi
if [ "${CURATOR_ALLOW_SKIP:-}" = 1 ]; then
    echo "warning: bubblewrap (bwrap) is missing: $why; CURATOR_ALLOW_SKIP=1, so the tests that need it are skipped" >&2
    exit 0
fi
echo "error: bubblewrap (bwrap) is missing and the tests need it: $why (or set CURATOR_ALLOW_SKIP=1 to skip those tests)" >&2
exit 1
