#!/usr/bin/env bash
# Stops everything local/demo/up.sh started, by the PIDs it recorded, and
# waits until each process is gone.
#
# The local OpenStack and Ceph outlive the demo (make openstack-down
# ceph-down stops them), so first the tenants' clouds are deleted through
# the product, while it still runs: their projects, aggregates, volume
# types, OVN HA chassis groups, Ceph pools and clients leave the real services (bounded: 180s; what
# is left then is named).
#
#   COBALTCORE_DEMO_LEAVE_CLOUDS=1  leave the clouds' objects in the local
#     OpenStack and Ceph: for a caller that stops both right after (their
#     next start wipes them), as .ci/run does. Deleting them took about two
#     minutes of every CI run (stop 74) and checks nothing: e2e 4b, 5 and 9
#     check what a deleted cloud leaves in the real services.
set -uo pipefail
# One compound command: bash reads all of it before running any, so editing
# this file while it runs cannot derail it.
{
cd "$(dirname "$0")/../.."
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
shopt -s nullglob
pids=("$RUN"/*.pid)
[ ${#pids[@]} -eq 0 ] && { echo "no demo runs in $RUN"; exit 0; }
# took PART: says how long the part since the last call took, when that
# was 3 s or more: a slow teardown names what holds it.
at=$SECONDS
took() { [ $((SECONDS - at)) -ge 3 ] && echo "  $1 took $((SECONDS - at))s to stop"; at=$SECONDS; }
# Flux first: it would apply the clouds from Git again while they are deleted.
for s in kustomize-controller source-controller; do
  [ -f "$RUN/$s.pid" ] || continue
  kill "$(cat "$RUN/$s.pid")" 2>/dev/null
  for _ in $(seq 20); do kill -0 "$(cat "$RUN/$s.pid")" 2>/dev/null || break; sleep 0.5; done
done
took "Flux"
if [ "${COBALTCORE_DEMO_LEAVE_CLOUDS:-0}" = 1 ]; then
  echo "the tenants' clouds are left in the local OpenStack and Ceph (COBALTCORE_DEMO_LEAVE_CLOUDS=1: their next start wipes them)"
elif [ -f "$RUN/crossplane.pid" ] && kill -0 "$(cat "$RUN/crossplane.pid")" 2>/dev/null; then
  eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
  export KUBECONFIG=$RUN/kubeconfig
  mrs() { "$KUBECTL" get pools.ceph.provider.c5c3.io,clients.ceph.provider.c5c3.io,projects.keystone.provider.c5c3.io,users.keystone.provider.c5c3.io,roleassignments.keystone.provider.c5c3.io,applicationcredentials.keystone.provider.c5c3.io,aggregates.nova.provider.c5c3.io,volumetypes.cinder.provider.c5c3.io,hachassisgroups.ovn.provider.c5c3.io -o name 2>/dev/null; }
  # Not "kubectl get | grep -q": under pipefail, grep leaving after the
  # first line made kubectl die of SIGPIPE now and then, and the clouds were
  # left in the local services.
  # A cloud is claimed in c5c3.io, as the C5C3 docs write it, or in the
  # deprecated crossplane.c5c3.io.
  clouds=openstackclusters.crossplane.c5c3.io,openstackclusters.c5c3.io
  if [ -n "$("$KUBECTL" get "$clouds" -A -o name 2>/dev/null)" ]; then
    echo "deleting the tenants' clouds (their objects in the local OpenStack and Ceph go with them)"
    "$KUBECTL" delete "$clouds" --all -A --wait=false >/dev/null 2>&1
    for _ in $(seq 90); do [ -z "$(mrs)" ] && break; sleep 2; done
    left=$(mrs | tr '\n' ' ')
    [ -n "$left" ] && echo "left in the local services (not deleted within 180s): $left"
  fi
fi
# The local node: its pods (the packages) first, while the API server
# still answers kubelet.
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
at=$SECONDS
NODE_DIR=$RUN/node local/node/stop.sh
took "the local node"
# The Shoots' kube-apiservers and etcd are the Gardener stand-in's
# children, the node agents the operator stand-in's; each stops its own on
# SIGTERM. Noted first, so that none outlives a parent that has to be killed.
children=""
for s in gardener-standin operator-standin; do
  [ -f "$RUN/$s.pid" ] && children="$children $(pgrep -P "$(cat "$RUN/$s.pid")" | tr '\n' ' ')"
done
# What runs supervised (up.sh) is started again when it exits: its loop
# goes first.
for f in "$RUN"/*.supervisor; do kill "$(cat "$f")" 2>/dev/null; rm -f "$f"; done
# The API server last, so the controllers stop against a live one.
for f in "${pids[@]}"; do [ "$(basename "$f")" = apiserver.pid ] || kill "$(cat "$f")" 2>/dev/null; done
# Each is waited for in turn (all were sent TERM at once); one that takes
# long is named, so that a slow teardown says which process holds it.
for f in "${pids[@]}"; do
  [ "$(basename "$f")" = apiserver.pid ] && continue
  t0=$SECONDS
  for _ in $(seq 60); do kill -0 "$(cat "$f")" 2>/dev/null || break; sleep 0.5; done
  if kill -9 "$(cat "$f")" 2>/dev/null; then echo "  $(basename "$f" .pid) did not stop within 30s of TERM: killed"
  elif [ $((SECONDS - t0)) -ge 3 ]; then echo "  $(basename "$f" .pid) took $((SECONDS - t0))s to stop"; fi
  rm -f "$f"
done
at=$SECONDS
for p in $children; do
  for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
  kill -9 "$p" 2>/dev/null
done
took "the Shoots' API servers and the node agents"
# The OVN chassis the operator stand-in registered for its nodes: it
# removes them on SIGTERM; this catches those of a stand-in that was killed.
if command -v ovn-sbctl >/dev/null; then
  sb() { timeout 20 ovn-sbctl --db=tcp:127.0.0.1:6642 --timeout=10 "$@" 2>/dev/null; }
  for ch in $(sb --bare --columns=name list chassis | grep -E -- '-node-[0-9]+$'); do sb --if-exists chassis-del "$ch"; done
fi
took "the OVN chassis' cleanup"
# The stretched pool's own Ceph (the single local Ceph outlives the demo).
[ -d "$RUN/ceph-stretched" ] && COBALTCORE_CEPH_RUN=$RUN/ceph-stretched local/ceph/stop.sh >/dev/null
took "the stretched pool's Ceph"
if [ -f "$RUN/apiserver.pid" ]; then
  kill "$(cat "$RUN/apiserver.pid")" 2>/dev/null
  for _ in $(seq 60); do kill -0 "$(cat "$RUN/apiserver.pid")" 2>/dev/null || break; sleep 0.5; done
  rm -f "$RUN/apiserver.pid"
fi
took "the management API server"
echo "demo stopped in ${SECONDS}s"
exit
}
