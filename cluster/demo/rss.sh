#!/usr/bin/env bash
# Prints the peak resident memory (VmHWM) and current RSS of every process
# cluster/demo/up.sh started. etcd, kube-apiserver and gardener-apiserver are children of the
# apiserver launcher and are listed by name; the Shoots' etcd and
# kube-apiservers, children of the Gardener stand-in, are summed; the node
# agents, children of the operator stand-in, are listed by agent and pool;
# the local node's daemons and each package's pod process by name.
set -uo pipefail
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
cd "$(dirname "$0")/../.."
eval "$(cluster/tools/build.sh --env | sed 's/^/export /')"
# shellcheck source=node-processes.sh
. cluster/demo/node-processes.sh
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
      printf '%-32s %8s MiB %8s MiB\n' "Shoot clusters ($(wc -w <<<"$kids") processes)" \
        "$(( $(cat $(printf '/proc/%s/status ' $kids) 2>/dev/null | awk '/VmHWM/{s+=$2} END{print s+0}') / 1024 ))" \
        "$(( $(cat $(printf '/proc/%s/status ' $kids) 2>/dev/null | awk '/VmRSS/{s+=$2} END{print s+0}') / 1024 ))"
    fi
  fi
  row "$n" "$p"
  if [ "$n" = operator-standin ]; then
    # The node agents it runs, one node per pool: agent and pool.
    for c in $(pgrep -P "$p"); do
      node=$(tr '\0' '\n' <"/proc/$c/cmdline" 2>/dev/null | sed -n '/^-node-name$/{n;p;}')
      node=${node#*.}
      row "  $(basename "$(readlink "/proc/$c/exe")") ${node%-node-0}" "$c"
    done
  fi
done
node_processes | while read -r n p; do row "$n" "$p"; done
