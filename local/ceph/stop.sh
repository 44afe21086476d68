#!/usr/bin/env bash
# Stops the local Ceph that start.sh started, by the PIDs its daemons wrote.
set -uo pipefail
D=${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}
for f in "$D"/run/*.pid; do
  [ -f "$f" ] || continue
  pid=$(cat "$f"); kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
done
echo "local Ceph: stopped"
