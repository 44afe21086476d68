#!/usr/bin/env bash
# Prints the peak resident memory (VmHWM) and current RSS of every process
# local/demo/up.sh started. etcd, kube-apiserver and gardener-apiserver are children of the
# apiserver launcher and are listed by name; the Shoots' etcd and
# kube-apiservers, children of the Gardener stand-in, are summed; the local
# node's daemons, each package's pod process and the node agents (containers
# the operator stand-in runs) by name.
set -uo pipefail
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
cd "$(dirname "$0")/../.."
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
# shellcheck source=node-processes.sh
. local/demo/node-processes.sh
row() { # NAME PID
  local s=/proc/$2/status
  [ -r "$s" ] || return 0
  printf '%-40s %8s MiB %8s MiB\n' "$1" "$(( $(awk '/VmHWM/{print $2}' "$s") / 1024 ))" "$(( $(awk '/VmRSS/{print $2}' "$s") / 1024 ))"
}
printf '%-40s %12s %12s\n' process "peak RSS" "RSS"
shopt -s nullglob
for f in "$RUN"/*.pid; do
  n=$(basename "$f" .pid); p=$(cat "$f")
  if [ "$n" = apiserver ]; then
    for c in $(pgrep -P "$p"); do row "$(basename "$(readlink /proc/"$c"/exe)")" "$c"; done
    continue
  fi
  if [ "$n" = gardener-standin ]; then
    kids=$(pgrep -P "$p" | tr '\n' ' ')
    if [ -n "$kids" ]; then
      # shellcheck disable=SC2086 # PIDs
      printf '%-40s %8s MiB %8s MiB\n' "Shoot clusters ($(wc -w <<<"$kids") processes)" \
        "$(( $(cat $(printf '/proc/%s/status ' $kids) 2>/dev/null | awk '/VmHWM/{s+=$2} END{print s+0}') / 1024 ))" \
        "$(( $(cat $(printf '/proc/%s/status ' $kids) 2>/dev/null | awk '/VmRSS/{s+=$2} END{print s+0}') / 1024 ))"
    fi
  fi
  row "$n" "$p"
done
node_processes | while read -r n p; do row "$n" "$p"; done
