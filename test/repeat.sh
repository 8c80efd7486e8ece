#!/usr/bin/env bash
# Runs `npm test` N times in a row (default 20) and reports how many runs were green:
# the check that no test is flaky. Logs of failed runs stay in $LOGS (default a temp dir).
set -u
runs="${1:-20}"
logs="${LOGS:-$(mktemp -d -t wsag-repeat-XXXX)}"
green=0
for i in $(seq 1 "$runs"); do
  if npm test >"$logs/run-$i.log" 2>&1; then
    green=$((green + 1)); rm -f "$logs/run-$i.log"; echo "run $i: green"
  else
    echo "run $i: RED (log: $logs/run-$i.log)"
  fi
done
echo "$green of $runs runs green"
[ "$green" -eq "$runs" ]
