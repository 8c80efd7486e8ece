#!/bin/sh
# The example job of wsag-server under Slurm, and a model of the checkpoint contract
# (docs/operations.md, "Checkpoint contract"). It computes for WORK seconds of wall-clock
# time (its first argument, else WSAG_WORK_SECONDS, else 60), counted in tenths of a second,
# or, holding a session's nodes, until WSAG_SESSION_END (seconds since the epoch), and:
#  - started again after a failure, resumes from the state in WSAG_RESUME_FROM;
#  - on the checkpoint signal (WSAG_CHECKPOINT_SIGNAL, USR1 unless the site changed it)
#    writes its state into WSAG_CHECKPOINT_DIR, then the empty file checkpoint.done, the
#    sign that the checkpoint is complete;
#  - exits 0 when its work is done.
# It notes what it does in WSAG_JOB_DIR/example-job.log.
set -u
work=${1:-${WSAG_WORK_SECONDS:-60}}
# A session ends at its window's end however late Slurm started it.
[ -n "${WSAG_SESSION_END:-}" ] && work=$(awk -v e="$WSAG_SESSION_END" -v n="$(date +%s.%N)" 'BEGIN { w = e - n; printf "%.1f", (w > 0 ? w : 0) }')
total=$(awk -v w="$work" 'BEGIN { printf "%d", w * 10 + 0.5 }')
steps=0
log="${WSAG_JOB_DIR:-.}/example-job.log"
note() { echo "$(date -u +%Y-%m-%dT%H:%M:%S.%NZ) $*" >> "$log"; }
if [ -n "${WSAG_RESUME_FROM:-}" ] && [ -f "$WSAG_RESUME_FROM/progress" ]; then
  steps=$(cat "$WSAG_RESUME_FROM/progress")
fi
checkpoint() {
  echo "$steps" > "$WSAG_CHECKPOINT_DIR/progress.tmp"
  mv "$WSAG_CHECKPOINT_DIR/progress.tmp" "$WSAG_CHECKPOINT_DIR/progress"
  : > "$WSAG_CHECKPOINT_DIR/checkpoint.done"
  note "checkpoint progress=$steps/$total"
}
trap checkpoint "${WSAG_CHECKPOINT_SIGNAL:-USR1}"
note "start node=${SLURMD_NODENAME:-unknown} job=${SLURM_JOB_ID:-none} progress=$steps/$total${WSAG_RESUME_FROM:+ resumed-from=$WSAG_RESUME_FROM}"
# Progress follows the clock, not the count of sleeps (each costs a fork as well as its tenth).
began=$(date +%s%N)
from=$steps
while [ "$steps" -lt "$total" ]; do
  sleep 0.1
  steps=$((from + ($(date +%s%N) - began) / 100000000))
  [ "$steps" -gt "$total" ] && steps=$total
done
note "done"
