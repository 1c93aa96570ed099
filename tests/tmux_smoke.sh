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
# wait_gone TEXT [SECONDS]: until the screen no longer shows TEXT (a key sent while the
# app is still busy can merge with the next escape sequence, as a fast typist's would)
wait_gone() {
    local text="$1" limit="${2:-20}" waited=0
    while screen | grep -qF -- "$text"; do
        sleep 0.2
        waited=$((waited + 1))
        if (( waited > limit * 5 )); then fail "waited ${limit}s for '$text' to go"; fi
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
wait_gone "Help (F1"
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
echo "first part OK: problems, filter, edit+save, labels, help, stats, quit-with-save," \
     "rescue on SIGHUP; audit: $audit"
# 8. A maintainer's and an annotator's day, from the keyboard only: create a problem,
#    write its solution and tests, run, set ready, import samples, evaluate, review a
#    failure with the taxonomy id key, build and verify a release.
"$ROOT/.venv/bin/python" - "$WORK/samples.jsonl" <<'EOF'
import json, sys
rows = [{"task_id": "smoke_add", "model": "smoke-lm",
         "solution": "def smoke_add(x):\n    return x + 1\n"},
        {"task_id": "smoke_add", "model": "smoke-lm",
         "solution": "def smoke_add(x):\n    return x + 2\n"}]
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in rows))
EOF
printf '[release]\nlicense = "MIT"\n' >> "$WS/curator.toml"
tmux new-session -d -s "$SESSION" -x "$COLS" -y "$ROWS" \
    "env CURATOR_USER=smoke TERM=xterm-256color $CURATOR --workspace $WS; sleep 30"
tmux set-option -s -t "$SESSION" escape-time 0
wait_for "$TOTAL problems" 20
keys n
wait_for "New problem"
type_text "smoke_add"
keys Enter
wait_for "smoke_add · draft" 20
[[ -f "$WS/problems/smoke_add/test_solution.py" ]] || fail "problems new wrote no files"
show "a new problem from the template"
lines() { for line in "$@"; do type_text "$line"; keys Enter; done; }
keys M-2                      # Solution tab
wait_for "solution.py ─"
sleep 1
keys F7                       # select all: what is typed replaces the template
lines "def smoke_add(x):" "    return x + 1"
keys M-3                      # Tests tab
wait_for "test_solution.py ─"
sleep 1
keys F7
lines "from solution import smoke_add" "" "" "def test_one():" "    assert smoke_add(1) == 2" \
      "" "" "def test_zero():" "    assert smoke_add(0) == 1" "" "" "def test_negative():" \
      "    assert smoke_add(-3) == -2"
keys C-s
wait_for "Saved smoke_add"
keys C-r
wait_for "reference passed" 90
show "the reference passes"
keys M-4                      # Labels: stage, task, data, status by number keys
keys 1
keys Right
keys 7
keys Right
keys 3
keys Right
keys 2                        # status ready
keys C-s
wait_for "Saved smoke_add"
grep -q 'status = "ready"' "$WS/problems/smoke_add/problem.toml" || fail "not ready"
keys F3
wait_for "Import"
keys i
wait_for "Import samples"
keys BTab                     # from the folder tree to the path box
type_text "$WORK/samples.jsonl"
keys Enter
wait_for "2 imported" 20
keys e
wait_for "evaluated" 120
sleep 1
show "samples evaluated (references first)"
keys F5
wait_for "smoke-lm" 20
sleep 1                       # the first visit builds the screen
keys 5                        # taxonomy id 5: fails edge cases
wait_for "to save: 5 Fails edge cases"
type_text "off by one"
keys Enter
wait_for "✓" 10
show "a failure reviewed with the taxonomy id key"
keys F6
wait_for "checked" 60
keys b
wait_for "proposed next"
keys Enter                    # 1.0.0, as proposed
wait_for "Output folder"
keys Enter
wait_for "Release blocked" 60   # the seed problems were never run here
keys Right
keys Enter                    # "Build anyway"
wait_for "folder   $WS/releases" 60
show "where the release went"
keys v
wait_for "Verify a bundle"
keys Enter
wait_for "re-run every"
keys Enter                    # "Check files"
wait_for ", ok" 60
show "the release verified"
keys C-q
sleep 1
ls "$WS/releases/"*/*-1.0.0.tar.gz >/dev/null || fail "no release archive"
"$CURATOR" release verify "$WS"/releases/*/*-1.0.0.tar.gz >/dev/null || fail "CLI verify failed"
day="$("$ROOT/.venv/bin/python" - "$WS/db/curator.sqlite" <<'EOF'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ref = db.execute("SELECT outcome FROM runs WHERE problem_id = 'smoke_add' AND "
                 "solution_kind = 'reference' ORDER BY id DESC").fetchone()[0]
samples = sorted(r[0] for r in db.execute(
    "SELECT outcome FROM runs WHERE solution_kind = 'sample'"))
pairs = json.loads(db.execute("SELECT pairs FROM review_labels WHERE annotator = 'smoke'"
                              ).fetchone()[0])
print(f"reference {ref}; samples {','.join(samples)}; review category {pairs[0]['category']}")
EOF
)"
[[ "$day" == "reference passed; samples failed,passed; review category 5" ]] || fail "day: $day"
echo "SMOKE OK: day: new problem, tests, run, ready, import, eval, review by taxonomy key," \
     "release build + verify ($day)"
