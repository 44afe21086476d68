#!/usr/bin/env bash
# Stops what start.sh started, by the PID files in its run directory.
set -uo pipefail
RUN=${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}
[ -d "$RUN" ] || exit 0
for f in "$RUN"/*/*.pid; do
  [ -f "$f" ] || continue
  pid=$(cat "$f" 2>/dev/null) || continue
  case "$f" in
    */uwsgi.pid) kill -INT "$pid" 2>/dev/null ;;   # uwsgi's master stops its workers on INT
    *) kill "$pid" 2>/dev/null ;;
  esac
done
# Wait (bounded) for the processes to go, so ports are free for a restart.
for i in $(seq 50); do
  alive=0
  for f in "$RUN"/*/*.pid; do [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null && alive=1; done
  [ $alive -eq 0 ] && break
  sleep 0.2
done
# What did not stop in 10 s goes by force, with its children: neutron-server
# has been seen to outlive TERM with its periodic worker holding port 9696,
# which made the next start.sh refuse to start.
for f in "$RUN"/*/*.pid; do
  [ -f "$f" ] || continue
  pid=$(cat "$f" 2>/dev/null) || continue
  kill -0 "$pid" 2>/dev/null || continue
  echo "local OpenStack: $(basename "$f" .pid) did not stop on TERM; killing it and its children" >&2
  pkill -KILL -P "$pid" 2>/dev/null
  kill -KILL "$pid" 2>/dev/null
done
rm -f "$RUN"/*/*.pid
echo "local OpenStack stopped"
