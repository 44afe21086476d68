#!/usr/bin/env bash
# Stops everything cluster/demo/up.sh started, by the PIDs it recorded, and
# waits until each process is gone.
set -uo pipefail
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
shopt -s nullglob
pids=("$RUN"/*.pid)
[ ${#pids[@]} -eq 0 ] && { echo "no demo runs in $RUN"; exit 0; }
# The API server last, so the controllers stop against a live one.
for f in "${pids[@]}"; do [ "$(basename "$f")" = apiserver.pid ] || kill "$(cat "$f")" 2>/dev/null; done
for f in "${pids[@]}"; do
  [ "$(basename "$f")" = apiserver.pid ] && continue
  for _ in $(seq 30); do kill -0 "$(cat "$f")" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$(cat "$f")" 2>/dev/null
  rm -f "$f"
done
if [ -f "$RUN/apiserver.pid" ]; then
  kill "$(cat "$RUN/apiserver.pid")" 2>/dev/null
  for _ in $(seq 60); do kill -0 "$(cat "$RUN/apiserver.pid")" 2>/dev/null || break; sleep 0.5; done
  rm -f "$RUN/apiserver.pid"
fi
echo "demo stopped"
