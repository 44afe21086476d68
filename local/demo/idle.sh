#!/usr/bin/env bash
# Measures what the local management plane costs while nothing happens: the
# CPU each part of it uses over SECONDS (default 300) of idle, in cores
# (1.00 = one core busy all the time), and the whole machine's for
# comparison. Run it once every claim is Ready (make demo has returned):
#
#   local/demo/idle.sh [SECONDS]
#
# Parts: the processes local/demo/up.sh started (by their PID files; the
# Shoots' etcd and kube-apiservers, children of the Gardener stand-in, are
# summed, as are the node agents the operator stand-in runs), the local
# node (its daemons, and each package's pod process by package), the local
# OpenStack (by service) and the local Ceph. Figures: docs/benchmarks.md.
set -uo pipefail
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
SECONDS_IDLE=${1:-300}
[ -d "$RUN" ] || { echo "no local management plane in $RUN: run make demo first" >&2; exit 1; }
HZ=$(getconf CLK_TCK)
cd "$(dirname "$0")/../.."
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
# shellcheck source=node-processes.sh
. local/demo/node-processes.sh

# parts prints "PART PID" for every process of the plane.
parts() {
  local f n p c
  shopt -s nullglob
  for f in "$RUN"/*.pid; do
    n=$(basename "$f" .pid); p=$(cat "$f")
    echo "$n $p"
    case "$n" in
      apiserver) for c in $(pgrep -P "$p"); do echo "$(basename "$(readlink "/proc/$c/exe")") $c"; done ;;
      gardener-standin) for c in $(pgrep -P "$p"); do echo "shoot-clusters $c"; done ;;
    esac
  done
  node_processes | sed 's/^node-agent-[^ ]* /node-agents /'
  for n in keystone nova placement; do
    for p in $(pgrep -f "uwsgi .*127.0.0.1:.* --chdir [^ ]*/$n "); do echo "openstack-$n $p"; done
  done
  for n in cinder-api neutron-server mariadbd memcached ovsdb-server ovn-northd; do
    for p in $(pgrep -x "$n"; pgrep -f "^/usr/bin/python3 /usr/bin/$n"); do echo "openstack-$n $p"; done
  done
  for n in ceph-mon ceph-mgr ceph-osd; do
    for p in $(pgrep -x "$n"); do echo "ceph $p"; done
  done
}

# ticks PID: CPU time (user + system) the process has used, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
machine() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat; }

mapfile -t procs < <(parts | sort -u -k2,2)
declare -A before
for l in "${procs[@]}"; do before[${l#* }]=$(ticks "${l#* }"); done
m0=$(machine)
echo "measuring ${SECONDS_IDLE}s of idle over ${#procs[@]} processes ..." >&2
sleep "$SECONDS_IDLE"
m1=$(machine)

declare -A used
for l in "${procs[@]}"; do
  part=${l% *}; pid=${l#* }
  now=$(ticks "$pid")
  used[$part]=$(( ${used[$part]:-0} + now - ${before[$pid]} ))
done
total=0
printf '%-28s %8s\n' part cores
for part in "${!used[@]}"; do echo "$part ${used[$part]}"; done | sort -k2,2nr | while read -r part t; do
  awk -v p="$part" -v t="$t" -v hz="$HZ" -v s="$SECONDS_IDLE" 'BEGIN{printf "%-28s %8.3f\n", p, t / hz / s}'
done
for part in "${!used[@]}"; do total=$(( total + ${used[$part]} )); done
awk -v t="$total" -v m="$(( m1 - m0 ))" -v hz="$HZ" -v s="$SECONDS_IDLE" 'BEGIN{
  printf "%-28s %8.3f\n%-28s %8.3f\n", "the plane, in all", t / hz / s, "the whole machine", m / hz / s}'
