#!/usr/bin/env bash
# Prints the peak resident memory (VmHWM) and current RSS of every process
# cluster/demo/up.sh started. etcd and kube-apiserver are children of the
# apiserver launcher and are listed by name.
set -uo pipefail
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
row() { # NAME PID
  local s=/proc/$2/status
  [ -r "$s" ] || return 0
  printf '%-32s %8s MiB %8s MiB\n' "$1" "$(( $(awk '/VmHWM/{print $2}' "$s") / 1024 ))" "$(( $(awk '/VmRSS/{print $2}' "$s") / 1024 ))"
}
printf '%-32s %12s %12s\n' process "peak RSS" "RSS"
shopt -s nullglob
for f in "$RUN"/*.pid; do
  n=$(basename "$f" .pid); p=$(cat "$f")
  if [ "$n" = apiserver ]; then
    for c in $(pgrep -P "$p"); do row "$(basename "$(readlink /proc/"$c"/exe)")" "$c"; done
    continue
  fi
  row "$n" "$p"
done
