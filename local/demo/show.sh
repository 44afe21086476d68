#!/usr/bin/env bash
# Prints what the running local management plane (local/demo/up.sh) made:
# the claims with their printer columns, a trace of one OpenStackCluster
# through Crossplane, and for each tenant cloud the real objects in the local
# Keystone, Nova, Cinder, OVN and Ceph.
#
# Usage: local/demo/show.sh [OPENSTACKCLUSTER-NAMESPACE/NAME to trace]
set -uo pipefail
cd "$(dirname "$0")/../.."
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
OS_RUN=${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}
CEPH_RUN=${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}
[ -f "$RUN/kubeconfig" ] || { echo "no demo runs in $RUN: start it with make demo" >&2; exit 1; }
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
export KUBECONFIG=$RUN/kubeconfig
K=$KUBECTL
trace=${1:-team-a/team-a-prod}

section() { printf '\n=== %s\n' "$*"; }
section "claims"
$K get controlplaneclusters,hypervisorclusters,storageclusters -n infrastructure
echo
$K get openstackclusters -A
# Clouds claimed in the deprecated crossplane.c5c3.io, if any: a plain
# "openstackclusters" is c5c3.io's (docs/tenant-guide.md).
$K get openstackclusters.crossplane.c5c3.io -A 2>/dev/null

section "what the pools' node agents report (3 nodes per pool in this demo)"
$K get hypervisorinventories -o wide
echo
$K get storageclusters -n infrastructure -o custom-columns='POOL:.spec.name,HEALTH:.status.health,OSDS-UP:.status.osds.up,OSDS:.status.osds.total,AVAILABLE:.status.capacity.available,FROM-AGENT:.status.conditions[?(@.type=="AgentsReporting")].status'

section "crossplane resource trace openstackclusters ${trace#*/} -n ${trace%/*}"
"$CROSSPLANE" resource trace openstackclusters.c5c3.io "${trace#*/}" -n "${trace%/*}" 2>&1

# What the real services hold, read once: the local OpenStack's CLI as admin, the ceph CLI.
os() { OS_CLIENT_CONFIG_FILE=$OS_RUN/clouds.yaml timeout 120 openstack --os-cloud admin "$@"; }
cephc() { timeout 60 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 "$@"; }
projects=$(os project list -f value -c Name 2>&1)
aggregates=$(os aggregate list --long -f value -c Name -c "Availability Zone" -c Properties 2>&1)
volumetypes=$(os volume type list --long -f value -c Name -c Description 2>&1)
cephpools=$(cephc osd pool ls detail 2>&1 | sed -n "s/^pool [0-9]* '\([^']*\)' replicated size \([0-9]*\).*/\1 (size \2)/p")
cephclients=$(cephc auth ls 2>/dev/null | grep '^client\.openstack-')
# "group chassis (priority N)", a line per member.
hagroups=$(timeout 20 ovn-nbctl --db=tcp:127.0.0.1:6641 --timeout=10 ha-chassis-group-list 2>&1 |
  awk '/^[0-9a-f]/ {g = $2; gsub(/[()]/, "", g); next} /^ +[0-9a-f]/ {c = $2; gsub(/[()]/, "", c); next} /priority/ {print g, c, "(priority " $2 ")"}')

section "in the local OpenStack, OVN and Ceph, per tenant cloud (the one local OpenStack, OVN and Ceph stand in for every cloud's and pool's)"
# The composites of both groups, with their claims' namespace and name.
while read -r x ns claim; do
  [ -n "$x" ] || continue
  printf -- '--- %s/%s (composite %s)\n' "$ns" "$claim" "$x"
  grep -x "$x" <<<"$projects" | sed 's/^/  Keystone project  /'
  grep "^$x-" <<<"$aggregates" | sed 's/^/  Nova aggregate    /'
  grep "^$x-" <<<"$volumetypes" | sed 's/^/  Cinder type       /'
  grep "^$x-" <<<"$cephpools" | sed 's/^/  Ceph pool         /'
  grep "^client.openstack-$x-" <<<"$cephclients" | sed 's/^/  CephX client      /'
  grep "^$x-" <<<"$hagroups" | sed 's/^/  OVN gateway group /'
done < <($K get xopenstackclusters.c5c3.io,xopenstackclusters.crossplane.c5c3.io -o jsonpath='{range .items[*]}{.metadata.name} {.metadata.labels.crossplane\.io/claim-namespace} {.metadata.labels.crossplane\.io/claim-name}{"\n"}{end}' 2>/dev/null)

# OVN: the clouds' Neutron makes logical switches and routers as tenants
# create networks; the consumer plane makes each cloud's gateway HA chassis
# groups, one per hypervisor pool, of the pool's chassis.
section "the local OVN (it stands in for every cloud's): Southbound chassis"
nb() { timeout 20 ovn-nbctl --db=tcp:127.0.0.1:6641 --timeout=10 "$@" 2>&1; }
timeout 20 ovn-sbctl --db=tcp:127.0.0.1:6642 --timeout=10 --format=table --columns=name,hostname,other_config list chassis 2>&1
printf 'logical switches: %s   logical routers: %s   HA chassis groups: %s\n' \
  "$(nb ls-list | grep -c .)" "$(nb lr-list | grep -c .)" "$(nb ha-chassis-group-list | grep -c '^[0-9a-f]')"
