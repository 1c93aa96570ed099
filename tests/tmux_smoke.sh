#!/usr/bin/env bash
# Drive the real app in a real terminal (tmux) the way a person does, and check what it
# shows and what it writes. Run by hand before a release of the app:
#
#     tests/tmux_smoke.sh            # uses .venv/bin/curator, a copy of the frozen seed
#     KEEP=1 tests/tmux_smoke.sh     # keep the temporary workspace for a look
#
# Each step prints the screen it saw (capture-pane), so the log shows the session.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CURATOR="${CURATOR:-$ROOT/.venv/bin/curator}"
SESSION="curator-smoke-$$"
WORK="$(mktemp -d /tmp/curator-smoke.XXXXXX)"
WS="$WORK/ws"
COLS=100
ROWS=30

cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    if [[ -z "${KEEP:-}" ]]; then rm -rf "$WORK"; else echo "workspace kept: $WS"; fi
}
trap cleanup EXIT

fail() { echo "SMOKE FAILED: $*" >&2; screen; exit 1; }
screen() { tmux capture-pane -p -t "$SESSION" 2>/dev/null || true; }
show() { echo "----- $1 -----"; screen; }

# wait_for TEXT [SECONDS]: until the screen shows TEXT
wait_for() {
    local text="$1" limit="${2:-20}" waited=0
    until screen | grep -qF -- "$text"; do
        sleep 0.2
        waited=$((waited + 1))
        if (( waited > limit * 5 )); then fail "waited ${limit}s for '$text'"; fi
    done
    return 0
}
keys() { tmux send-keys -t "$SESSION" "$@"; sleep 0.4; }
type_text() { tmux send-keys -t "$SESSION" -l "$1"; sleep 0.3; }

command -v tmux >/dev/null || { echo "tmux is not installed" >&2; exit 2; }

"$CURATOR" init "$WS" >/dev/null
rm -rf "$WS/problems"
cp -r "$ROOT/tests/fixtures/seed_problems" "$WS/problems"
"$CURATOR" --workspace "$WS" load --quiet
PID="$(ls "$WS/problems" | sort | head -1)"
TOTAL="$(ls "$WS/problems" | wc -l | tr -d ' ')"

tmux new-session -d -s "$SESSION" -x "$COLS" -y "$ROWS" \
    "env CURATOR_USER=smoke TERM=xterm-256color $CURATOR --workspace $WS; echo EXITED-\$?; sleep 30"

tmux set-option -s -t "$SESSION" escape-time 0   # pass a lone Escape straight through

# 1. Problems screen with every problem
wait_for "$TOTAL problems" 20
show "problems screen"

# 2. filter: label term and count
keys /
type_text "stage:model"
wait_for " of $TOTAL"
show "filtered by stage:model"
keys Escape   # back to the table
keys Escape   # clear the filter
wait_for "$TOTAL problems"

# 3. open the first problem (the cursor stayed on the last filtered row: Home first),
#    edit the prompt, save
keys Home
keys Enter
wait_for "$PID · "
type_text "Smoke test line. "
wait_for "unsaved: prompt"
show "problem with an unsaved prompt"
keys C-s
wait_for "Saved $PID"
grep -q "Smoke test line. " "$WS/problems/$PID/prompt.md" || fail "prompt.md not written"

# 4. labels by number keys, save (alt+right three times: Solution, Tests, Labels)
keys M-Right
keys M-Right
keys M-Right
wait_for "Definition"
keys 3   # stage 3 = training
wait_for "unsaved: stage"
show "labels tab"
keys C-s
wait_for "Saved $PID"
grep -q 'stage = "training"' "$WS/problems/$PID/problem.toml" || fail "problem.toml not written"

# 5. help, stats, back
keys F1
wait_for "Help (F1"
show "F1 help"
keys Escape
keys F3
wait_for "pass@k"
show "stats screen"
keys F2
wait_for "$PID · "

# 6. quit with unsaved edits asks first; Save writes them
keys M-Left
keys M-Left
keys M-Left
type_text "Second edit. "
keys C-q
wait_for "Unsaved changes"
show "quit asks"
keys Enter   # the Save button has focus
wait_for "EXITED-0" 10
grep -q "Second edit. " "$WS/problems/$PID/prompt.md" || fail "save on quit not written"

# 7. the terminal goes away with unsaved edits: they are rescued to db/recovery/
tmux kill-session -t "$SESSION"
tmux new-session -d -s "$SESSION" -x "$COLS" -y "$ROWS" \
    "env CURATOR_USER=smoke TERM=xterm-256color $CURATOR --workspace $WS; sleep 30"
tmux set-option -s -t "$SESSION" escape-time 0
wait_for "$TOTAL problems" 20
keys Home
keys Enter
wait_for "$PID · "
type_text "Rescue me. "
wait_for "unsaved: prompt"
tmux kill-session -t "$SESSION"   # SIGHUP to the app, as when a terminal window closes
for _ in $(seq 50); do ls "$WS/db/recovery/"*.json >/dev/null 2>&1 && break; sleep 0.1; done
grep -l "Rescue me. " "$WS/db/recovery/"*.json >/dev/null || fail "no recovery file after SIGHUP"
echo "----- recovery file after the terminal closed -----"
cat "$WS/db/recovery/"*.json | head -8

audit="$("$ROOT/.venv/bin/python" - "$WS/db/curator.sqlite" "$PID" <<'EOF'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT field FROM audit WHERE actor = 'smoke' AND entity_id = ? ORDER BY id",
    (sys.argv[2],)).fetchall()
print(",".join(r[0] or "" for r in rows))
EOF
)"
[[ "$audit" == "prompt,stage,prompt" ]] || fail "audit rows by 'smoke': $audit"
echo "SMOKE OK: problems, filter, edit+save, labels, help, stats, quit-with-save," \
     "rescue on SIGHUP; audit: $audit"
