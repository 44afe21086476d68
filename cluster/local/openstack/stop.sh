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
rm -f "$RUN"/*/*.pid
echo "local OpenStack stopped"
