#!/usr/bin/env bash
# Drives the running local management plane (cluster/demo/up.sh) and asserts
# what the product must do there, end to end through Crossplane core, the
# functions, the provider and the stand-ins:
#
#   1. every example hypervisor pool is Ready (up.sh waited for it);
#   2. the inventory is watched: Servers that fail show in the claim's
#      InventorySufficient condition within seconds, and so does their return;
#   3. a pool the inventory cannot provide gets no Shoot, is not Ready, and
#      says by how much it falls short (UnderProvisioned);
#   4. a dedicated pool whose labels match a Server another pool claimed gets
#      no Shoot (LabelOverlap);
#   5. deleting a claim removes its composite, ServerInventory, Shoot and
#      ShootKubeconfig, leaves the Servers and every other pool untouched;
#   6. no error loops: Crossplane core, the provider and the functions log no
#      new errors once everything has settled.
#
# Every wait is bounded; a failure names what was expected and what is.
set -uo pipefail
cd "$(dirname "$0")/../.."
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
[ -f "$RUN/kubeconfig" ] && [ -f "$RUN/crossplane.pid" ] || { echo "no demo runs in $RUN: start it with cluster/demo/up.sh" >&2; exit 1; }
eval "$(cluster/tools/build.sh --env | sed 's/^/export /')"
export KUBECONFIG=$RUN/kubeconfig
K=$KUBECTL
fails=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; fails=$((fails + 1)); }
# eventually SECONDS DESCRIPTION COMMAND...: true once COMMAND succeeds; prints the seconds it took.
eventually() {
  local bound=$1 what=$2 t0; t0=$(date +%s%N); shift 2
  for _ in $(seq $((bound * 5))); do
    if "$@" >/dev/null 2>&1; then pass "$what ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"; return 0; fi
    sleep 0.2
  done
  fail "$what (not within ${bound}s)"; return 1
}
reason() { $K -n infrastructure get hypervisorcluster "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].reason}"; }
is_reason() { [ "$(reason "$1" "$2")" = "$3" ]; }
says() { # CLAIM CONDITION TEXT: the condition's message contains TEXT
  case $($K -n infrastructure get hypervisorcluster "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].message}") in *"$3"*) return 0 ;; esac
  return 1
}
absent() { ! $K get "$@" >/dev/null 2>&1; }
server() { # NAME LABELS(json) STATE [CLAIM]
  local ref=""
  [ -n "${4:-}" ] && ref=',"serverClaimRef":{"namespace":"metal","name":"'"$4"'"}'
  printf '{"apiVersion":"metal.ironcore.dev/v1alpha1","kind":"Server","metadata":{"name":"%s","labels":%s},"spec":{"systemUUID":"e2e-%s"%s}}' \
    "$1" "$2" "$1" "$ref" | $K apply -f - >/dev/null
  $K patch server "$1" --subresource=status --type=merge -p "{\"status\":{\"state\":\"$3\",\"totalSystemMemory\":\"512Gi\",\"processors\":[{\"id\":\"CPU0\",\"totalCores\":32,\"totalThreads\":64}]}}" >/dev/null
}
claim() { # NAME MACHINE-POOL WORKERS MAX [DEDICATED-TENANT]
  local ded=""; [ -n "${5:-}" ] && ded=$'\n  dedicated: true\n  allowedTenants: ['"$5"']'
  $K apply -f - >/dev/null <<Y
apiVersion: crossplane.c5c3.io/v1alpha1
kind: HypervisorCluster
metadata: {name: $1, namespace: infrastructure}
spec:
  region: eu-de-1
  name: $1
  workers: $3
  maxWorkers: $4
  zones: [eu-de-1a]
  ironcore: {machinePool: $2}$ded
Y
}

echo "== 1. the example pools"
for n in $($K -n infrastructure get hypervisorclusters -o name); do
  if $K -n infrastructure wait --for=condition=Ready "$n" --timeout=5s >/dev/null 2>&1; then pass "$n is Ready"; else fail "$n is not Ready"; fi
done

echo "== 2. Server changes reach the claim through the watches"
for i in $(seq -w 1 15); do $K patch server "hv-pool-a-0$i" --subresource=status --type=merge -p '{"status":{"state":"Error"}}' >/dev/null; done
eventually 15 "15 failed Servers: hv-pool-a reports MaxWorkersUnreachable" is_reason hv-pool-a InventorySufficient MaxWorkersUnreachable
for i in $(seq -w 1 15); do $K patch server "hv-pool-a-0$i" --subresource=status --type=merge -p '{"status":{"state":"Available"}}' >/dev/null; done
eventually 15 "the Servers return: hv-pool-a counts 62 usable servers again" is_reason hv-pool-a InventorySufficient Sufficient
eventually 15 "... and is Sufficient with all 62" says hv-pool-a InventorySufficient "62 usable servers"

echo "== 3. an under-provisioned pool"
for i in 1 2 3; do server "e2e-short-$i" '{"c5c3.io/machine-pool":"e2e-short"}' Available; done
claim e2e-short e2e-short 5 6
if eventually 60 "e2e-short (5 workers, 3 servers) is UnderProvisioned" is_reason e2e-short InventorySufficient UnderProvisioned; then
  msg=$($K -n infrastructure get hypervisorcluster e2e-short -o jsonpath='{.status.conditions[?(@.type=="InventorySufficient")].message}')
  case $msg in *"2 more are needed"*) pass "it says by how much: $msg" ;; *) fail "the message does not say how many servers are missing: $msg" ;; esac
fi
sleep 5
if absent shoot -n garden-c5c3 e2e-short; then pass "no Shoot for e2e-short"; else fail "a Shoot was created for e2e-short"; fi
[ "$($K -n infrastructure get hypervisorcluster e2e-short -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] &&
  fail "e2e-short reports Ready" || pass "e2e-short is not Ready"

echo "== 4. a dedicated pool overlapping another pool's servers"
for i in 1 2 3; do server "e2e-fin-$i" '{"c5c3.io/machine-pool":"e2e-fin","c5c3.io/dedicated-pool":"e2e-fin"}' Available; done
server e2e-fin-4 '{"c5c3.io/machine-pool":"e2e-fin","c5c3.io/dedicated-pool":"e2e-fin"}' Reserved shoot--c5c3--hv-pool-b-hypervisor-z1-1
claim e2e-fin e2e-fin 2 3 finance
eventually 60 "e2e-fin reports LabelOverlap" is_reason e2e-fin InventorySufficient LabelOverlap || true
if absent shoot -n garden-c5c3 e2e-fin; then pass "no Shoot for e2e-fin"; else fail "a Shoot was created for e2e-fin"; fi

echo "== 5. deleting a claim"
servers_before=$($K get servers -l c5c3.io/machine-pool=hv-pool-us -o name | wc -l)
others_before=$($K get serverinventories -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}' | tr ' ' '\n' | grep -v hv-pool-us | sort)
$K -n infrastructure delete hypervisorcluster hv-pool-us --wait=false >/dev/null
eventually 60 "hv-pool-us: its composite is gone" sh -c "! $K get xhypervisorclusters -l crossplane.io/claim-name=hv-pool-us -o name | grep -q ."
eventually 60 "hv-pool-us: its ServerInventory is gone" absent serverinventory hypervisor-hv-pool-us
eventually 60 "hv-pool-us: its Shoot is gone" absent shoot -n garden-c5c3 hv-pool-us
eventually 60 "hv-pool-us: its ShootKubeconfig is gone" absent shootkubeconfig hypervisor-hv-pool-us
[ "$($K get servers -l c5c3.io/machine-pool=hv-pool-us -o name | wc -l)" = "$servers_before" ] && pass "its Servers are left ($servers_before)" || fail "Servers of hv-pool-us were removed"
others_after=$($K get serverinventories -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}' | tr ' ' '\n' | grep -v hv-pool-us | sort)
[ "$others_before" = "$others_after" ] && pass "the other pools' inventories are untouched" || fail "other inventories changed: $others_before -> $others_after"

echo "== 6. no error loops"
count() { grep -c "$2" "$RUN/$1.log" || true; }
declare -A before
logs=(crossplane provider function-controlplane-cluster function-hypervisor-cluster function-storage-cluster function-openstack-cluster)
for l in "${logs[@]}"; do before[$l]=$(count "$l" 'ERROR\|"level":"error"'); done
sleep 30
for l in "${logs[@]}"; do
  n=$(( $(count "$l" 'ERROR\|"level":"error"') - before[$l] ))
  [ "$n" -eq 0 ] && pass "$l: no new errors in 30s" || fail "$l: $n new errors in 30s: $(grep 'ERROR\|"level":"error"' "$RUN/$l.log" | tail -1 | cut -c1-300)"
done

echo "== memory of the plane's processes"
cluster/demo/rss.sh

echo
[ "$fails" -eq 0 ] && { echo "e2e: all passed"; exit 0; }
echo "e2e: $fails failed (logs in $RUN)"; exit 1
