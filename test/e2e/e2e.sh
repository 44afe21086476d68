#!/usr/bin/env bash
# Drives the running local management plane (local/demo/up.sh) and asserts
# what the product must do there, end to end through Crossplane core, the
# functions, the provider and the stand-ins. Sections 1 to 4b, 6 to 6c, 7
# and 8 have moved to the Go suite beside this file (TestPlane, TestClouds,
# TestShares: named subtests, waits that watch, independent sections at
# once); this script calls it where they stood, and the others follow them
# there (docs/development.md):
#
#   G. GitOps: every Flux Kustomization of examples/clusters/management and
#      each tenant's own is Ready at the demo's commit, and every example
#      claim was applied by Flux, none with kubectl; a tenant's commit of a
#      hypervisor pool, a ClusterRole and a cloud in another tenant's
#      namespace is refused by its Kustomization (applying as the tenant's
#      ServiceAccount), saying why, with nothing created; a tenant's commit
#      adding a cloud creates it (then every Kustomization but team-a's is
#      suspended: the later sections change claims by hand);
#   0. the C5C3 operations docs' dedicated pool hv-pool-compliance, applied as
#      the docs print it, and the storage pool their finance-prod names start
#      provisioning (3b and 6 check them);
#   1. every example pool and control-plane cluster is Ready (up.sh waited);
#  1a. Crossplane core runs under its chart's ServiceAccount and RBAC (with
#      the RBAC manager and CobaltCore's crossplane-rbac.yaml), and
#      provider-kubernetes' conversion webhook converts Objects;
#  1b. their Shoots live in the real Gardener API (gardener-apiserver,
#      aggregated): defaulted by Gardener, their kubeconfigs issued by its
#      shoots/adminkubeconfig; a Shoot Gardener refuses (a zone the region
#      lacks) shows on its claim with Gardener's message;
#  1c. CobaltCore was installed from the local registry as a platform
#      engineer installs it (the Configuration; core resolved the functions),
#      and every package runs as core's Deployment runtime made it: a pod on
#      the local node, from the image pulled from the registry, its image's
#      binary, the provider as its ServiceAccount; the node agents run the
#      images their DaemonSets name, pulled through the node's mirror;
#   2. the inventory is watched: Servers that fail show in the claim's
#      InventorySufficient condition within seconds, and so does their return;
#   3. a pool the inventory cannot provide gets no Shoot, is not Ready, and
#      says by how much it falls short (UnderProvisioned);
#   4. a dedicated pool whose labels match a Server another pool claimed gets
#      no Shoot (LabelOverlap);
#  3b. names longer than Gardener allows provision with derived Shoot names;
#      the docs' hv-pool-compliance is dedicated by its label, and the docs'
#      finance-prod (c5c3.io/v1alpha1), applied by its tenant as printed,
#      says it waits until the platform names the tenant on the pool;
#  4b. a cloud in a region whose catalog has no Nova, Cinder or Neutron
#      (us-east-1) composes no aggregates, volume types or quotas, is Ready,
#      and its tenant reads on the claim which services it lacks;
#   5. deleting a claim removes its composite, ServerInventory, Shoot and
#      ShootKubeconfig, leaves the Servers and every other pool untouched
#      (the stretched pool is deleted after 9f: its arbiter leaves the
#      control-plane cluster, which it releases);
#  5b. the cloud team-a's commit added is Ready; a commit removing it from
#      Git deletes it (Flux prunes it), and its Ceph pool stays with the
#      tenant's image under the default dataPolicy (Retain);
#   6. the tenants' clouds: every example OpenStackCluster and the docs'
#      finance-prod (in group c5c3.io) is Ready, and each
#      has its own objects in the real services (Keystone project, Nova
#      aggregates, Cinder volume types, Ceph pools and CephX client, and in
#      OVN, reached over ssl: with the cloud's client certificate, an HA
#      chassis group per hypervisor pool of that pool's chassis);
#  6b. every tenant logs in: it reads its claim's connection secret with its
#      own identity (impersonated: only the tenant role of its namespace),
#      `openstack --os-cloud <claim>` with that clouds.yaml gets a token of its
#      project and sees it; team-b cannot see or change team-a's project, nor
#      act as an admin; each share of a hypervisor pool is named nodes,
#      carrying the cloud's label, in its aggregate (its zone), reachable with
#      the kubeconfig the cloud's control plane got, and nothing more;
#  6d. a share shrunk in the claim gives nodes back and the clouds waiting
#      get them (aggregates, zones and compute hosts follow); a share grown
#      with no node free takes none from another cloud and waits;
#   7. shared pools are shared out, never over-committed: the clouds on
#      hv-pool-a hold shares that add up to at most its workers, each in its
#      own aggregate; st-pool-a's shares of its raw capacity add up to at
#      most it, and a cloud's Ceph quota is its share; a cloud asking for
#      more nodes or storage than is free is refused;
#   8. the dedicated pool: finance alone uses hv-pool-fin; another tenant's
#      claim on it, and a claim on a pool of another region, are refused and
#      get nothing. For each refusal the tenant (an identity with only the
#      tenant role of its namespace, impersonated) reads PHASE Refused, the
#      reason in the claim's PoolsReady condition and a Warning event; a
#      tenant is refused an environment its namespace does not allow, a
#      compositionRef and a resourceRef, when it applies the claim;
#   9. deleting a tenant's claim removes its aggregates, volume types, Ceph
#      pools and client, and OVN HA chassis groups from the real services, and leaves every other
#      tenant's objects as they were; a Ceph pool holding the tenant's image
#      stays under the default spec.dataPolicy (Retain), and goes with it
#      under Delete, which the platform team sets and a tenant may not;
#  9b. a pool in use cannot be deleted: each cloud's ClusterUsage makes core's
#      webhook refuse it; the pool claim's deletion is held, naming the cloud,
#      every cloud stays Ready; once the last cloud on it is gone, it deletes;
#  9d. a tenant's Ceph data holds its storage pool in the cloud: a storage
#      pool removed from a claim while its Ceph pool holds the tenant's
#      image stays the cloud's, the claim says why, the cloud stays Ready;
#      once the image is gone the pool leaves, and it can be taken back;
#  9e. a hypervisor pool removed from a claim while its node runs the
#      cloud's instance stays the cloud's, and the claim says why; once the
#      instance stops, the pool leaves the cloud;
#  9f. a stretched storage pool says where its data is (2 replicas in each
#      of its zones) and a cloud's Ceph pools there ask for the stretch rule
#      with size 4 and min_size 2 (refused by the single-OSD local Ceph,
#      saying why);
#  10. no error loops: Crossplane core, the provider and the functions log no
#      new errors once everything has settled.
#
# Every wait is bounded; a failure names what was expected and what is.
set -uo pipefail
# One compound command: bash reads all of it before running any, so editing
# this file while it runs cannot derail it.
{
cd "$(dirname "$0")/../.."
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
[ -f "$RUN/kubeconfig" ] && [ -f "$RUN/crossplane.pid" ] || { echo "no demo runs in $RUN: start it with local/demo/up.sh" >&2; exit 1; }
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
export KUBECONFIG=$RUN/kubeconfig
K=$KUBECTL
# A cloud is served in two groups: crossplane.c5c3.io, where the examples
# claim it, and c5c3.io, as the C5C3 docs write it, which a plain
# "openstackclusters" means (docs/tenant-guide.md). Name the group.
OSC=openstackclusters.crossplane.c5c3.io XOSC=xopenstackclusters.crossplane.c5c3.io DOSC=openstackclusters.c5c3.io
fails=0
# section TITLE: a section's header, with the seconds since e2e started
# (where the time goes).
# Each section's start is also written to _output/e2e-sections.tsv (seconds
# since e2e started, title), which .ci/run prints at the end.
SECTIONS=${E2E_SECTIONS:-_output/e2e-sections.tsv}
mkdir -p "$(dirname "$SECTIONS")" && printf 'start_s\tsection\n' >"$SECTIONS"
section() { printf '== %s   [e2e %ds]\n' "$*" "$SECONDS"; printf '%d\t%s\n' "$SECONDS" "$*" >>"$SECTIONS"; }
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; fails=$((fails + 1)); }
# eventually SECONDS DESCRIPTION COMMAND...: true once COMMAND succeeds
# within SECONDS of wall time (however long each try takes); prints the time
# it took. Tries come every 0.2 s at first, then slow to one a second: most
# checks pass at once, and a long wait must not take the two cores the plane
# needs with kubectl processes.
eventually() {
  local bound=$1 what=$2 t0 deadline pause=0.2; t0=$(date +%s%N); shift 2
  deadline=$((t0 + bound * 1000000000))
  while :; do
    if "$@" >/dev/null 2>&1; then pass "$what ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"; return 0; fi
    [ "$(date +%s%N)" -lt "$deadline" ] || break
    sleep "$pause"
    case $pause in 0.2) pause=0.4 ;; 0.4) pause=0.7 ;; *) pause=1 ;; esac
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
# The tenant's view: kubectl as a person of the tenant's group, with only the
# RBAC the landscape gives a tenant namespace (examples/infrastructure/tenant-role.yaml).
as_tenant() { local t=$1; shift; $K --as="$t-user" --as-group="$t" -n "$t" "$@"; }

server() { # NAME LABELS(json) STATE [CLAIM]
  local ref=""
  [ -n "${4:-}" ] && ref=',"serverClaimRef":{"namespace":"metal","name":"'"$4"'"}'
  printf '{"apiVersion":"metal.ironcore.dev/v1alpha1","kind":"Server","metadata":{"name":"%s","labels":%s},"spec":{"systemUUID":"e2e-%s"%s}}' \
    "$1" "$2" "$1" "$ref" | $K apply -f - >/dev/null
  $K patch server "$1" --subresource=status --type=merge -p "{\"status\":{\"state\":\"$3\",\"totalSystemMemory\":\"512Gi\",\"processors\":[{\"id\":\"CPU0\",\"totalCores\":32,\"totalThreads\":64}]}}" >/dev/null
}

# The C5C3 operations docs' claims, as the docs print them: document N of
# tools/xrd/testdata/c5c3-docs-claims.yaml (3 hv-pool-compliance, 4 finance-prod).
docs_claim() { awk -v n="$1" 'BEGIN {d = 1} /^---$/ {d++; next} d == n' tools/xrd/testdata/c5c3-docs-claims.yaml; }

# The sections moved to Go (test/e2e, docs/development.md maps each check):
# its test binary builds while G and 0 run; go_sections RUN-REGEX runs the
# tests matching it, prints their checks, and counts each failed subtest.
# Their lines are kept in _output/e2e-go.log, as go test -json in
# _output/e2e-go.json (each subtest's seconds).
E2E_TEST=$RUN/bin/e2e.test GO_LOG=${SECTIONS%/*}/e2e-go.log
: >"$GO_LOG"; : >"${GO_LOG%.log}.json"
(nice -n 5 go test -c -tags e2e -o "$E2E_TEST" ./test/e2e) >"$RUN/e2e-build.log" 2>&1 &
e2e_build=$!
go_sections() {
  if [ -n "${e2e_build:-}" ]; then wait "$e2e_build" || { fail "building test/e2e: $(tail -5 "$RUN/e2e-build.log")"; return 1; }; e2e_build=; fi
  local out; out=$(mktemp)
  COBALTCORE_DEMO=$RUN "$E2E_TEST" -test.v -test.run "$1" -test.timeout 30m 2>&1 | tee "$out" | grep --line-buffered -vE '^=== (RUN|PAUSE|CONT|NAME)'
  cat "$out" >>"$GO_LOG"
  go tool test2json -t -p e2e <"$out" >>"${GO_LOG%.log}.json"
  # Each subtest without subtests of its own is a check; a parent fails with
  # its failed checks.
  local passed failed
  read -r passed failed < <(awk '/--- (PASS|FAIL): / { r[$3] = $2 } END { for (a in r) { leaf = 1; for (b in r) if (b != a && index(b, a "/") == 1) leaf = 0; if (leaf) n[r[a]]++ } printf "%d %d\n", n["PASS:"], n["FAIL:"] }' "$out")
  printf 'Go    %s: %d checks passed, %d failed\n' "$1" "$passed" "$failed"
  fails=$((fails + failed))
  grep -q '^ok\|^PASS$' "$out" || grep -q -- '--- FAIL' "$out" || fail "test/e2e $1 did not finish: $(tail -3 "$out")"
  rm -f "$out"
}

# The demo's GitOps repository (local/demo/up.sh), committed to and pushed
# as a tenant's or the platform team's Git would be; Flux is asked to fetch
# at once, as `flux reconcile source git` does, instead of in 5 minutes.
FLUX_KS=kustomizations.kustomize.toolkit.fluxcd.io FLUX_GIT=gitrepositories.source.toolkit.fluxcd.io
gitops() { git -C "$RUN/gitops" -c user.name=e2e -c user.email=e2e@cobaltcore.invalid "$@"; }
gitops_commit() { # MESSAGE: commit and push everything; prints the revision as Flux names it
  gitops add -A && gitops commit -qm "$1" && gitops push -q origin main && echo "main@sha1:$(gitops rev-parse HEAD)"; }
ks() { $K -n "${1%/*}" get $FLUX_KS "${1#*/}" -o jsonpath="$2"; }
# fetched NS REV: the tenant's GitRepository has fetched REV; until then it
# is asked (every 5 s) to fetch now, as `flux reconcile source git` does.
fetched() {
  [ "$($K -n "$1" get $FLUX_GIT gitops -o jsonpath='{.status.artifact.revision}')" = "$2" ] && return 0
  [ $(( $(date +%s) % 5 )) = 0 ] && $K -n "$1" annotate --overwrite $FLUX_GIT gitops reconcile.fluxcd.io/requestedAt="$(date +%s%N)" >/dev/null
  return 1
}
# tenant_at TENANT REV STATUS [TEXT]: the tenant's Kustomization tried REV and
# its Ready is STATUS, its message containing TEXT.
tenant_at() {
  fetched "$1" "$2" || return 1
  [ "$(ks "$1/openstack-clusters" '{.status.lastAttemptedRevision}')" = "$2" ] &&
    [ "$(ks "$1/openstack-clusters" '{.status.conditions[?(@.type=="Ready")].status}')" = "$3" ] || return 1
  case $(ks "$1/openstack-clusters" '{.status.conditions[?(@.type=="Ready")].message}') in *"${4:-}"*) return 0 ;; esac
  return 1
}

section "G. GitOps: the tree came through Flux, and a tenant's Git touches only its own namespace"
# up.sh applied nothing of examples/infrastructure or examples/tenants
# with kubectl: it committed examples/ to the local Git server and gave Flux
# the Kustomizations of clusters/management. Each is Ready at that commit,
# in their dependsOn order, and every example claim's fields are Flux's.
demo_rev="main@sha1:$(gitops rev-parse HEAD)"
for k in flux-system/crossplane flux-system/infrastructure-namespace flux-system/infrastructure-eu-de-1 flux-system/infrastructure-us-east-1 \
  flux-system/tenant-team-a flux-system/tenant-team-b flux-system/tenant-internal flux-system/tenant-finance \
  team-a/openstack-clusters team-b/openstack-clusters internal/openstack-clusters finance/openstack-clusters; do
  st=$(ks "$k" '{.status.conditions[?(@.type=="Ready")].status} {.status.lastAppliedRevision}')
  [ "$st" = "True $demo_rev" ] && pass "Kustomization $k is Ready at the demo's commit" || fail "Kustomization $k: Ready, revision: '$st' (want True $demo_rev)"
done
# In their dependsOn order: each became Ready no earlier than what it
# depends on (in seconds).
# When each first reconciled (the earliest firstReconciled of its history;
# with wait: true, once its health checks passed): the Ready condition's
# transition time moves whenever Flux reconciles again (every 10 minutes,
# Ready goes Unknown and back), so it says nothing of the first time.
ready_at() { ks "$1" '{.status.history[*].firstReconciled}' | tr ' ' '\n' | sort | head -1; }
for pair in crossplane:infrastructure-namespace infrastructure-namespace:infrastructure-eu-de-1 infrastructure-namespace:infrastructure-us-east-1 \
  infrastructure-eu-de-1:tenant-team-a infrastructure-eu-de-1:tenant-team-b infrastructure-eu-de-1:tenant-internal infrastructure-eu-de-1:tenant-finance; do
  a=$(ready_at "flux-system/${pair%:*}") b=$(ready_at "flux-system/${pair#*:}")
  [ -n "$a" ] && [[ ! "$b" < "$a" ]] && pass "${pair#*:} became Ready after ${pair%:*} ($a, $b)" || fail "${pair#*:} Ready at '$b', before ${pair%:*} at '$a'"
done
for t in team-a team-b internal finance; do
  a=$(ready_at "flux-system/tenant-$t") b=$(ready_at "$t/openstack-clusters")
  [ -n "$a" ] && [[ ! "$b" < "$a" ]] && pass "$t's own Kustomization became Ready after the platform's tenant-$t ($a, $b)" || fail "$t/openstack-clusters Ready at '$b', before tenant-$t at '$a'"
done
managers=$( { $K -n infrastructure get controlplaneclusters,hypervisorclusters,storageclusters --show-managed-fields -o json; for t in team-a team-b internal finance; do $K -n "$t" get $OSC --show-managed-fields -o json; done; } |
  /usr/bin/python3 -c 'import json,sys
d=json.JSONDecoder(); s=sys.stdin.read(); i=0
while i < len(s):
  s2=s[i:].lstrip()
  if not s2: break
  o,n=d.raw_decode(s2); i=len(s)-len(s2)+n
  for it in o["items"]:
    m=sorted({f["manager"] for f in it["metadata"].get("managedFields",[])})
    print(it["kind"], it["metadata"]["namespace"]+"/"+it["metadata"]["name"], ",".join(m))')
bad=$(grep -v 'kustomize-controller' <<<"$managers"; grep 'kubectl' <<<"$managers")
[ -n "$managers" ] && [ -z "$bad" ] && pass "every example claim ($(wc -l <<<"$managers")) was applied by Flux, none with kubectl" || fail "example claims not applied by Flux alone: $bad"

# A tenant's commit that reaches beyond its namespace and role: a hypervisor
# pool, a ClusterRole, a cloud in another tenant's namespace. team-a's
# Kustomization applies as team-a's ServiceAccount: refused, saying why,
# and nothing of it is created.
sed -e 's/name: team-a-staging/name: team-a-was-here/' -e 's/namespace: team-a/namespace: team-b/' \
  examples/tenants/team-a/openstack-clusters/team-a-staging.yaml >"$RUN/gitops/tenants/team-a/openstack-clusters/escape.yaml"
cat >>"$RUN/gitops/tenants/team-a/openstack-clusters/escape.yaml" <<'Y'
---
apiVersion: crossplane.c5c3.io/v1alpha1
kind: HypervisorCluster
metadata: {name: hv-pool-team-a, namespace: infrastructure}
spec: {name: hv-pool-team-a, region: eu-de-1, workers: 3, maxWorkers: 3, zones: [eu-de-1a], ironcore: {machinePool: ironcore-standard}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: team-a-everything}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: ["*"]}]
Y
rev=$(gitops_commit "team-a: a pool, a ClusterRole and a cloud in team-b")
if eventually 90 "team-a's commit of a pool, a ClusterRole and a cloud in team-b is refused by its Kustomization" tenant_at team-a "$rev" False forbidden; then
  pass "... which says why: $(ks team-a/openstack-clusters '{.status.conditions[?(@.type=="Ready")].message}' | cut -c1-300)"
fi
case $(ks team-a/openstack-clusters '{.status.conditions[?(@.type=="Ready")].message}') in *'system:serviceaccount:team-a:gitops'*) pass "... applying as team-a's ServiceAccount" ;;
  *) fail "team-a's Kustomization does not name team-a's ServiceAccount" ;; esac
absent hypervisorcluster -n infrastructure hv-pool-team-a && absent clusterrole team-a-everything && absent $OSC -n team-b team-a-was-here &&
  pass "... and none of it was created" || fail "team-a's commit created something beyond its namespace"
gitops rm -q tenants/team-a/openstack-clusters/escape.yaml
rev=$(gitops_commit "team-a: takes it back")
eventually 120 "team-a's next commit is applied: its Kustomization is Ready again" tenant_at team-a "$rev" True

# A tenant's commit that adds a cloud: it provisions while 0-5 run; 5b
# checks it is Ready, then removes it from Git.
# On hv-pool-b, whose nodes 2b, 6d and 9e do not move.
sed -e 's/name: team-a-staging/name: team-a-dev/' -e "s/team-a's staging cloud/team-a's development cloud, added by a commit in e2e/" -e 's/hypervisorClusters: \[hv-pool-a\]/hypervisorClusters: [hv-pool-b]/' \
  examples/tenants/team-a/openstack-clusters/team-a-staging.yaml >"$RUN/gitops/tenants/team-a/openstack-clusters/team-a-dev.yaml"
gitops_rev_dev=$(gitops_commit "team-a: adds team-a-dev")
dev_t0=$(date +%s)
fluxed() { case $($K -n team-a get $OSC team-a-dev --show-managed-fields -o jsonpath='{.metadata.managedFields[*].manager}' 2>/dev/null) in *kustomize-controller*) return 0 ;; esac; return 1; }
tenant_reconciled() { fetched team-a "$gitops_rev_dev" && fluxed; }
eventually 90 "team-a's commit adding team-a-dev creates the claim, applied by Flux" tenant_reconciled
# The later sections change example claims and pools by hand, as an
# operator does to test the product's reactions: Flux would put them back
# from Git. Every Kustomization but team-a's is suspended (as `flux suspend
# kustomization` does); team-a's after 5b.
for k in $($K get $FLUX_KS -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'); do
  [ "$k" = team-a/openstack-clusters ] && continue
  $K -n "${k%/*}" patch $FLUX_KS "${k#*/}" --type=merge -p '{"spec":{"suspend":true}}' >/dev/null || fail "cannot suspend $k"
done

section "0. the C5C3 docs' dedicated pool and the storage its cloud names (provisioning while 1-3 run)"
# hv-pool-compliance as the docs print it: 20 workers of machine pool
# ironcore-dedicated-rack-1, dedicated by its label. Its servers carry the
# dedicated pool's label too, as the platform labels a dedicated rack.
# st-pool-encrypted, which the docs' finance-prod names, is the platform's.
# The tenant's namespace tenant-finance binds the tenant role to its group.
# Its Cinder backend is one the local OpenStack registers (local/openstack/start.sh).
OS_RUN=${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}
OS_CLIENT_CONFIG_FILE=$OS_RUN/clouds.yaml timeout 60 openstack --os-cloud admin volume service list -f value -c Host 2>/dev/null | grep -q '@ceph-st-pool-encrypted$' ||
  fail "the local OpenStack has no cinder-volume backend ceph-st-pool-encrypted: it was started before it knew it; restart it (make openstack-down openstack-up)"
docs_claim 3 | $K apply -f - >/dev/null
$K apply -f - >/dev/null <<Y
apiVersion: crossplane.c5c3.io/v1alpha1
kind: StorageCluster
metadata: {name: st-pool-encrypted, namespace: infrastructure}
spec:
  region: eu-de-1
  name: st-pool-encrypted
  workers: 3
  maxWorkers: 3
  ironcore: {machinePool: e2e-encrypted, machineClass: baremetal-storage-nvme}
  # Room for the docs' finance-prod, a large cloud: 16384 GB × 3 replicas.
  ceph: {osdCount: 1, deviceClass: nvme, targetCapacity: 64Ti, replicationFactor: 3, encrypted: true}
---
apiVersion: v1
kind: Namespace
metadata: {name: tenant-finance, labels: {c5c3.io/tenant: tenant-finance}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cobaltcore-tenant, namespace: tenant-finance}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cobaltcore:tenant}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: tenant-finance}]
Y
for i in $(seq -w 1 20); do server "docs-rack-1-$i" '{"c5c3.io/machine-pool":"ironcore-dedicated-rack-1","c5c3.io/dedicated-pool":"hv-pool-compliance"}' Available; done
for i in 1 2 3; do server "e2e-encrypted-$i" '{"c5c3.io/machine-pool":"e2e-encrypted"}' Available; done

# A cloud in us-east-1, whose catalog has no Nova, Cinder or Neutron (the
# operator stand-in registers them in eu-de-1 only, as an operator that
# deploys compute would): applied now, checked in 4b, gone before 5 deletes
# the pool it consumes.
$K create namespace team-c >/dev/null 2>&1 || true
$K apply -f - >/dev/null <<Y
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: cobaltcore-tenant, namespace: team-c}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cobaltcore:tenant}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: team-c}]
---
apiVersion: crossplane.c5c3.io/v1alpha1
kind: OpenStackCluster
metadata: {name: team-c-us, namespace: team-c}
spec:
  compositionSelector: {matchLabels: {crossplane.c5c3.io/environment: staging}}
  region: us-east-1
  size: small
  hypervisorClusters: [hv-pool-us]
  storageClusters: [st-pool-us]
Y

section "1-4b. in Go (test/e2e TestPlane): 1 the example pools and control-plane clusters; then at once 1a core's RBAC, 1b the Shoots in Gardener, 1c installed as shipped, 2 Server changes through the watches, 2b figures from the agents, 2c least privilege, 3 an under-provisioned pool, 3b long names and the docs' pool, 4 a dedicated pool overlapping, 4b a cloud without compute"
go_sections '^TestPlane$'
# A pool's Shoot cluster, as the operator stand-in runs it.
shoot_k() { $K --kubeconfig "$RUN/shoots/garden-c5c3.$1.kubeconfig" "${@:2}"; }
# derived_shoot NAME: the Shoot name of a cluster: its name up to 17
# characters (project c5c3), else its first 11 characters, a trailing hyphen
# dropped, and five hex digits of the name's SHA-256 (as derivedShootName in
# test/e2e).
derived_shoot() { [ ${#1} -le 17 ] && { printf %s "$1"; return; }; local p="${1:0:11}"; printf '%s-%s' "${p%-}" "$(printf %s "$1" | sha256sum | cut -c1-5)"; }

section "5. deleting a claim"
servers_before=$($K get servers -l c5c3.io/machine-pool=hv-pool-us -o name | wc -l)
others_before=$($K get serverinventories -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}' | tr ' ' '\n' | grep -v hv-pool-us | sort)
$K -n infrastructure delete hypervisorcluster hv-pool-us --wait=false >/dev/null
eventually 60 "hv-pool-us: its composite is gone" sh -c "! $K get xhypervisorclusters -l crossplane.io/claim-name=hv-pool-us -o name | grep -q ."
eventually 60 "hv-pool-us: its ServerInventory is gone" absent serverinventory hypervisor-hv-pool-us
eventually 60 "hv-pool-us: its Shoot is gone" absent shoot -n garden-c5c3 hv-pool-us
eventually 60 "hv-pool-us: its ShootKubeconfig is gone" absent shootkubeconfig hypervisor-hv-pool-us
eventually 60 "hv-pool-us: its HypervisorInventory is gone" absent hypervisorinventory hypervisor-hv-pool-us
eventually 60 "hv-pool-us: its node agents are stopped" sh -c "! pgrep -f '[-]node-name garden-c5c3.hv-pool-us-node-'"
[ "$($K get servers -l c5c3.io/machine-pool=hv-pool-us -o name | wc -l)" = "$servers_before" ] && pass "its Servers are left ($servers_before)" || fail "Servers of hv-pool-us were removed"
others_after=$($K get serverinventories -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid} {end}' | tr ' ' '\n' | grep -v hv-pool-us | sort)
[ "$others_before" = "$others_after" ] && pass "the other pools' inventories are untouched" || fail "other inventories changed: $others_before -> $others_after"
# (st-pool-s, the stretched pool, is deleted after 9f: its arbiter goes with it.)

section "5b. GitOps: the cloud a tenant's commit added is Ready; removed from Git, it is deleted and its data stays"
if eventually 600 "team-a-dev, added by team-a's commit, is Ready, and so is team-a's Kustomization at that commit" tenant_at team-a "$gitops_rev_dev" True; then
  pass "... $(( $(date +%s) - dev_t0 )) s after the commit"
fi
dev_xr=$($K -n team-a get $OSC team-a-dev -o jsonpath='{.spec.resourceRef.name}')
dev_kept=$dev_xr-st-pool-a-volumes
CEPH_RUN=${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}
if [ -n "$dev_xr" ] && timeout 60 rbd -c "$CEPH_RUN/ceph.conf" create --size 64 "$dev_kept/tenant-volume-1" >/dev/null 2>&1; then
  pass "team-a-dev holds an image tenant-volume-1 in $dev_kept"; else fail "cannot create an image in team-a-dev's volume pool '$dev_kept'"; fi
gitops rm -q tenants/team-a/openstack-clusters/team-a-dev.yaml
rev=$(gitops_commit "team-a: removes team-a-dev")
eventually 300 "team-a's commit removing team-a-dev is applied (its Kustomization prunes)" tenant_at team-a "$rev" True
eventually 240 "team-a-dev, removed from Git, is deleted with its managed resources" sh -c "! $K -n team-a get $OSC team-a-dev >/dev/null 2>&1 && [ -z \"\$($K get managed -l crossplane.io/claim-name=team-a-dev -o name 2>/dev/null)\" ]"
timeout 60 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 osd pool ls 2>/dev/null | grep -qx "$dev_kept" &&
  timeout 60 rbd -c "$CEPH_RUN/ceph.conf" ls "$dev_kept" 2>/dev/null | grep -qx tenant-volume-1 &&
  pass "dataPolicy Retain (the default) holds for a claim pruned by Flux: the Ceph pool $dev_kept is kept with the tenant's image" ||
  fail "$dev_kept or its image went with team-a-dev"
timeout 60 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 osd pool rm "$dev_kept" "$dev_kept" --yes-i-really-really-mean-it >/dev/null 2>&1 # the platform team lets it go
$K -n team-a patch $FLUX_KS openstack-clusters --type=merge -p '{"spec":{"suspend":true}}' >/dev/null || fail "cannot suspend team-a's Kustomization"

section "6-6c. in Go (test/e2e TestClouds), at once: 6 the tenants' clouds and their objects in the real services; 6b each tenant logs in with its claim's connection secret, and its shares of the hypervisor pools are named nodes; 6c no published secret value outside its Secrets"
go_sections '^TestClouds$'
# What the later sections read of the real services, as the cloud's admin
# and operator would.
OS_RUN=${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}
CEPH_RUN=${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}
os() { OS_CLIENT_CONFIG_FILE=$OS_RUN/clouds.yaml timeout 120 openstack --os-cloud admin "$@"; }
cephc() { timeout 60 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 "$@"; }
rbdc() { timeout 60 rbd -c "$CEPH_RUN/ceph.conf" "$@"; }
# What the real services hold: one sorted name per line.
real() {
  case $1 in
    projects) os project list -f value -c Name ;;
    aggregates) os aggregate list -f value -c Name ;;
    volumetypes) os volume type list -f value -c Name ;;
    cephpools) cephc osd pool ls ;;
    cephclients) cephc auth ls 2>/dev/null | grep '^client\.openstack-' ;;
    # "group chassis", a line per member of each HA chassis group.
    hagroups) timeout 20 ovn-nbctl --db=tcp:127.0.0.1:6641 --timeout=10 ha-chassis-group-list |
      awk '/^[0-9a-f]/ {g = $2; gsub(/[()]/, "", g); next} /^ +[0-9a-f]/ {c = $2; gsub(/[()]/, "", c); print g, c}' ;;
  esac | sort
}
# osc NAMESPACE CLAIM: the group a claim is in (the docs' c5c3.io or crossplane.c5c3.io).
osc() { if $K -n "$1" get $DOSC "$2" >/dev/null 2>&1; then echo $DOSC; else echo $OSC; fi; }
xr() { $K -n "$1" get "$(osc "$1" "$2")" "$2" -o jsonpath='{.spec.resourceRef.name}'; }
agg_hosts() { os aggregate show "$1" -f json -c hosts 2>/dev/null | /usr/bin/python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["hosts"])))'; }
hosts_are() { [ "$(agg_hosts "$1")" = "$2" ]; }
# In a pool's cluster, each node a cloud holds carries its label
# (c5c3.io/cloud), by which the cloud's compute agents are scheduled.
node_cloud() { $K --kubeconfig "$RUN/shoots/garden-c5c3.$1.kubeconfig" get node "$2" -o jsonpath='{.metadata.labels.c5c3\.io/cloud}'; }
labelled_for() { [ "$(node_cloud "$1" "$2")" = "$3" ]; }

section "6d. a share shrunk or grown in the claim moves the hosts"
# hv-pool-a's 3 nodes are held by three clouds that ask for more (20, 4
# and 4 nodes), whichever came first holding most. Each tenant sets its
# share to 1: each cloud then holds exactly one node of its own, and its
# aggregate (its zone hv-pool-a) exactly that node, a compute host of the
# local Nova. Then team-a-prod asks for 20 again: no node is free, none is
# taken from another cloud, and the pool says what the share waits for.
px=$($K -n infrastructure get hypervisorcluster hv-pool-a -o jsonpath='{.spec.resourceRef.name}')
hv_a="team-a/team-a-prod team-a/team-a-staging team-b/team-b-staging"
# set_share NS/CLAIM POOL NODES|-: the claim's share of POOL, as its tenant
# edits it (-: no entry, the default share).
set_share() {
  local spec
  spec=$($K -n "${1%/*}" get $OSC "${1#*/}" -o jsonpath='{.spec}')
  as_tenant "${1%/*}" patch $OSC "${1#*/}" --type=merge -p "$(/usr/bin/python3 -c 'import json,sys
s=json.loads(sys.argv[1]); pool, n = sys.argv[2], sys.argv[3]
sh=[x for x in s.get("hypervisorShares", []) if x["name"] != pool] + ([{"name": pool, "nodes": int(n)}] if n != "-" else [])
print(json.dumps({"spec": {"hypervisorShares": sh}}))' "$spec" "$2" "$3")" >/dev/null
}
share_nodes() { $K get xhypervisorcluster "$px" -o jsonpath="{.status.shares[?(@.cloud==\"$1\")].nodes[*]}"; }
compute_hosts() { os compute service list --service nova-compute -f value -c Host | sort | paste -sd' '; }
declare -A held_before
for c in $hv_a; do held_before[$c]=$(share_nodes "$(xr "${c%/*}" "${c#*/}")"); done
for c in $hv_a; do set_share "$c" hv-pool-a 1; done
one_each() {
  local c x n all="" hosts
  hosts=" $(compute_hosts) "
  for c in $hv_a; do
    x=$(xr "${c%/*}" "${c#*/}") n=$(share_nodes "$(xr "${c%/*}" "${c#*/}")")
    [ "$(wc -w <<<"$n")" = 1 ] && hosts_are "$x-hv-pool-a" "$n" && [[ $hosts == *" $n "* ]] || return 1
    all="$all $n"
  done
  [ -z "$(tr ' ' '\n' <<<"$all" | grep . | sort | uniq -d)" ]
}
t0=$(date +%s)
if eventually 240 "every cloud of hv-pool-a holds exactly one node of its own, its aggregate that node, a compute host" one_each; then
  for c in $hv_a; do
    pass "... $c: held '${held_before[$c]}', now $(share_nodes "$(xr "${c%/*}" "${c#*/}")") ($(( $(date +%s) - t0 )) s after the edits)"
  done
fi
set_share team-a/team-a-prod hv-pool-a 20
waits_for_nodes() { case $($K -n infrastructure get hypervisorcluster hv-pool-a -o jsonpath='{.status.conditions[?(@.type=="NodesBound")].message}') in
  *"team-a/team-a-prod: 19 node(s) of its share are not free yet"*) return 0 ;; esac; return 1; }
eventually 120 "team-a-prod asks for 20 nodes of hv-pool-a again: the pool says 19 are not free yet" waits_for_nodes
one_each && pass "... and no node moved: every cloud keeps its one" || fail "nodes moved when team-a-prod grew without free nodes"
set_share team-a/team-a-staging hv-pool-a -
set_share team-b/team-b-staging hv-pool-a -

section "7-8. in Go (test/e2e TestShares): 7 shared pools are shared out, not over-committed; 8 the dedicated pool, and a pool of another region"
go_sections '^TestShares$'

section "9. deleting a tenant's claim"
gone=$(xr team-a team-a-staging)
# What every tenant holds in the real services before: afterwards, only
# team-a-staging's are gone.
declare -A before
for what in projects aggregates volumetypes cephpools cephclients hagroups; do before[$what]=$(real "$what"); done
# Its objects in the cloud are deleted through the cloud's APIs, so its
# ControlPlane is in use by the ProviderConfigs they go through (and its
# namespace by the ControlPlane): core's webhook refuses their deletion
# until those objects are gone, whichever goes first.
cp_obj=$gone-control-plane
eventually 30 "team-a-staging's ControlPlane Object is marked in use" sh -c "[ \"\$($K get objects.kubernetes.crossplane.io $cp_obj -o jsonpath='{.metadata.labels.crossplane\.io/in-use}')\" = true ]"
if out=$($K delete objects.kubernetes.crossplane.io "$cp_obj" --wait=false 2>&1); then fail "team-a-staging's ControlPlane Object was deleted while its cloud's objects need it"; else
  case $out in *in-use*ProviderConfig*) pass "deleting team-a-staging's ControlPlane before its cloud's objects is refused: ${out#*denied the request: }" ;;
    *) fail "deleting team-a-staging's ControlPlane Object failed, not naming a ProviderConfig: $out" ;; esac
fi
# Its tenant left an image in its volume pool: under the default
# spec.dataPolicy (Retain) that Ceph pool stays, with the image.
kept=$gone-st-pool-a-volumes
if rbdc create --size 64 "$kept/tenant-volume-1" >/dev/null 2>&1; then pass "team-a-staging holds an image tenant-volume-1 in $kept"; else fail "cannot create an image in $kept"; fi
staging_node=$(share_nodes "$gone")
$K -n team-a delete $OSC team-a-staging --wait=false >/dev/null
eventually 180 "team-a-staging: its managed resources are gone" sh -c "! $K get managed -l crossplane.io/claim-name=team-a-staging -o name 2>/dev/null | grep -q ."
# The node it held of hv-pool-a is free: team-a-prod, waiting for 19 nodes
# there (6d) and first by name of the clouds waiting, grows onto it.
xa=$(xr team-a team-a-prod)
grown() { local n; n=$(share_nodes "$xa" | tr ' ' '\n' | sort | paste -sd' ')
  [[ " $n " == *" $staging_node "* ]] && hosts_are "$xa-hv-pool-a" "$n" && labelled_for hv-pool-a "$staging_node" "$xa"; }
[ -n "$staging_node" ] && eventually 180 "team-a-staging's node $staging_node of hv-pool-a moves to team-a-prod: its aggregate and the node's label follow" grown ||
  fail "team-a-staging held no node of hv-pool-a ('$staging_node')"
# Its OVN gateways went through the ssl: databases with its client
# certificate, which stayed until its ProviderConfig had no users; then
# the Secret went, with no finalizer left behind.
eventually 60 "team-a-staging: its OVN ProviderConfig and client certificate Secret are gone" sh -c "! $K get providerconfigs.ovn.provider.c5c3.io $gone >/dev/null 2>&1 && ! $K -n crossplane-system get secret $gone-ovn-client-tls >/dev/null 2>&1"
for what in projects aggregates volumetypes cephpools cephclients hagroups; do
  now=$(real "$what")
  left=$(grep "$gone" <<<"$now" | grep -vx "$kept" | tr '\n' ' ')
  [ -z "$left" ] && pass "$what: team-a-staging's are gone from the real service" || fail "$what: left behind: $left"
  now=$(grep -vx "$kept" <<<"$now")
  [ "$(grep -v "$gone" <<<"${before[$what]}")" = "$now" ] && pass "$what: every other tenant's are untouched" ||
    fail "$what of other tenants changed: $(diff <(grep -v "$gone" <<<"${before[$what]}") <(echo "$now") | tr '\n' ' ')"
done

cephc osd pool ls 2>/dev/null | grep -qx "$kept" && rbdc ls "$kept" 2>/dev/null | grep -qx tenant-volume-1 &&
  pass "dataPolicy Retain (the default): the Ceph pool $kept is kept, detached, with the tenant's image" || fail "$kept or its image went with team-a-staging"
cephc osd pool rm "$kept" "$kept" --yes-i-really-really-mean-it >/dev/null 2>&1 # the platform team lets it go

# The docs' cloud goes as it came, by its tenant, in its group; then the
# docs' pools, whose Shoots go with them. The platform team let its data go
# first (spec.dataPolicy: Delete), which its tenant may not do.
docs_xr=$(xr tenant-finance finance-prod)
dvol=$docs_xr-st-pool-encrypted-volumes
if out=$(as_tenant tenant-finance patch $DOSC finance-prod --type=merge -p '{"spec":{"dataPolicy":"Delete"}}' 2>&1); then fail "the tenant let its own data go (spec.dataPolicy: Delete)"; else
  case $out in *"spec.dataPolicy is the platform team's choice"*) pass "the tenant may not set spec.dataPolicy: ${out##*: }" ;; *) fail "the tenant setting spec.dataPolicy: $out" ;; esac
fi
$K -n tenant-finance patch $DOSC finance-prod --type=merge -p '{"spec":{"dataPolicy":"Delete"}}' >/dev/null
eventually 120 "the platform team sets dataPolicy Delete on finance-prod: its Ceph pools take it" sh -c "[ \"\$($K get pools.ceph.provider.c5c3.io $dvol -o jsonpath='{.spec.forProvider.dataPolicy}')\" = Delete ]"
if rbdc create --size 64 "$dvol/tenant-volume-1" >/dev/null 2>&1; then pass "finance-prod holds an image tenant-volume-1 in $dvol"; else fail "cannot create an image in $dvol"; fi
as_tenant tenant-finance delete openstackclusters finance-prod --wait=false >/dev/null
eventually 240 "the docs' finance-prod is deleted by its tenant" absent xopenstackclusters.c5c3.io "$docs_xr"
eventually 60 "dataPolicy Delete: its Ceph pool $dvol went with the image" sh -c "! timeout 30 ceph -c $CEPH_RUN/ceph.conf osd pool ls | grep -qx $dvol"
$K -n infrastructure delete hypervisorcluster hv-pool-compliance --wait=false >/dev/null
$K -n infrastructure delete storagecluster st-pool-encrypted --wait=false >/dev/null
eventually 180 "deleting hv-pool-compliance deletes its Shoot $(derived_shoot hv-pool-compliance)" absent shoot -n garden-c5c3 "$(derived_shoot hv-pool-compliance)"
eventually 180 "deleting st-pool-encrypted deletes its Shoot $(derived_shoot st-pool-encrypted)" absent shoot -n garden-c5c3 "$(derived_shoot st-pool-encrypted)"
for i in $(seq -w 1 20); do echo "docs-rack-1-$i"; done | xargs $K delete server --wait=false >/dev/null 2>&1
$K delete server e2e-encrypted-1 e2e-encrypted-2 e2e-encrypted-3 --wait=false >/dev/null 2>&1

section "9b. a pool in use cannot be deleted"
# (9f's cloud on the stretched st-pool-s provisions while 9b-9e run.)
$K apply -f - >/dev/null <<Y
apiVersion: crossplane.c5c3.io/v1alpha1
kind: OpenStackCluster
metadata: {name: internal-stretched, namespace: internal}
spec: {compositionSelector: {matchLabels: {crossplane.c5c3.io/environment: production}}, region: eu-de-1, size: small, dataPolicy: Delete,
  hypervisorClusters: [hv-pool-b], storageClusters: [st-pool-s]}
Y
# Each cloud protects what it consumes with a Crossplane ClusterUsage; core's
# admission webhook refuses to delete a used composite, so deleting a pool's
# claim is held (the claim says why) until the last cloud on it is gone.
fin=$($K get xhypervisorclusters -l crossplane.io/claim-name=hv-pool-fin -o jsonpath='{.items[0].metadata.name}')
fin_cloud=$(xr finance finance-prod)
in_use() { [ "$($K get xhypervisorcluster "$fin" -o jsonpath='{.metadata.labels.crossplane\.io/in-use}')" = true ]; }
eventually 30 "hv-pool-fin's composite is marked in use" in_use
details=$($K get clusterusages -l c5c3.io/used-pool=hv-pool-fin -o jsonpath='{.items[*].metadata.annotations.crossplane\.io/usage-details}')
[[ $details == *"OpenStackCluster finance/finance-prod consumes hypervisor pool hv-pool-fin"* ]] &&
  pass "kubectl get clusterusages -l c5c3.io/used-pool=hv-pool-fin names the cloud: $details" || fail "the usages of hv-pool-fin say: '$details'"
if out=$($K delete xhypervisorcluster "$fin" --wait=false 2>&1); then fail "the composite of hv-pool-fin, used by finance-prod, was deleted"; else
  case $out in *in-use*"XOpenStackCluster/$fin_cloud"*) pass "deleting hv-pool-fin's composite is refused: ${out#*denied the request: }" ;;
    *) fail "deleting hv-pool-fin's composite failed, not naming the cloud: $out" ;; esac
fi
$K -n infrastructure delete hypervisorcluster hv-pool-fin --wait=false >/dev/null
held() { case $($K -n infrastructure get hypervisorcluster hv-pool-fin -o jsonpath='{.status.conditions[?(@.type=="Synced")].message}') in *in-use*"$fin_cloud"*) return 0 ;; esac; return 1; }
eventually 30 "deleting the claim hv-pool-fin is held, and the claim names the cloud that uses it" held
sleep 5
$K get xhypervisorcluster "$fin" >/dev/null 2>&1 && ! absent shoot -n garden-c5c3 hv-pool-fin && pass "... its composite and Shoot are still there" || fail "hv-pool-fin's composite or Shoot went while in use"
for c in finance/finance-prod internal/internal-prod team-a/team-a-prod team-b/team-b-staging; do
  if $K -n "${c%/*}" wait --for=condition=Ready "$OSC/${c#*/}" --timeout=5s >/dev/null 2>&1; then pass "$c is still Ready"; else fail "$c is not Ready while the pool's deletion is held"; fi
done
$K -n finance delete $OSC finance-prod --wait=false >/dev/null
eventually 180 "finance-prod, the pool's last cloud, is gone" sh -c "! $K get $XOSC $fin_cloud >/dev/null 2>&1"
eventually 120 "then hv-pool-fin's held deletion proceeds: its claim is gone" absent -n infrastructure hypervisorcluster hv-pool-fin
eventually 60 "... and its composite and Shoot" sh -c "! $K get xhypervisorcluster $fin >/dev/null 2>&1 && ! $K -n garden-c5c3 get shoot hv-pool-fin >/dev/null 2>&1"

section "9c. a new Composition revision leaves a pinned production cloud where it is"
# team-a-prod's claim sets compositionUpdatePolicy: Manual (the examples'
# production clouds that a platform team moves by hand); internal-prod
# follows the newest revision. A new revision of the production Composition
# (another endpoint domain) reaches internal-prod, not team-a-prod, until
# team-a-prod's claim names it.
comp=production.xopenstackclusters.crossplane.c5c3.io
prod_xr=$(xr team-a team-a-prod); int_xr=$(xr internal internal-prod)
revref() { $K get $XOSC "$1" -o jsonpath='{.spec.compositionRevisionRef.name}{.spec.crossplane.compositionRevisionRef.name}'; }
on_domain() { case $($K get $XOSC "$1" -o jsonpath='{.status.endpoints.keystone}') in *".$2") return 0 ;; esac; return 1; }
pinned=$(revref "$prod_xr")
[ -n "$pinned" ] && on_domain "$prod_xr" cloud.cobaltcore.example && pass "team-a-prod is pinned to CompositionRevision $pinned" || fail "team-a-prod names no CompositionRevision ('$pinned') or is not on cloud.cobaltcore.example"
$K patch composition "$comp" --type=json -p '[{"op":"replace","path":"/spec/pipeline/0/input/endpointDomain","value":"v2.cobaltcore.example"}]' >/dev/null
newest() { $K get compositionrevisions -l crossplane.io/composition-name=$comp --sort-by=.spec.revision -o jsonpath='{.items[-1:].metadata.name}'; }
eventually 60 "the production Composition has a new revision" sh -c "[ \"\$($K get compositionrevisions -l crossplane.io/composition-name=$comp -o name | wc -l)\" -ge 2 ]"
next=$(newest)
eventually 120 "internal-prod (Automatic) takes revision $next: its Keystone endpoint moves to v2.cobaltcore.example" on_domain "$int_xr" v2.cobaltcore.example
[ "$(revref "$prod_xr")" = "$pinned" ] && on_domain "$prod_xr" cloud.cobaltcore.example &&
  pass "team-a-prod (Manual) stays on $pinned, its endpoint unchanged" || fail "team-a-prod left its revision: $(revref "$prod_xr"), $($K get $XOSC "$prod_xr" -o jsonpath='{.status.endpoints.keystone}')"
$K -n team-a patch $OSC team-a-prod --type=merge -p "{\"spec\":{\"compositionRevisionRef\":{\"name\":\"$next\"}}}" >/dev/null
eventually 120 "moved by its claim to $next, team-a-prod follows" on_domain "$prod_xr" v2.cobaltcore.example
if $K -n team-a wait --for=condition=Ready $OSC/team-a-prod --timeout=120s >/dev/null 2>&1; then pass "team-a-prod is Ready on the new revision"; else fail "team-a-prod is not Ready on the new revision"; fi

section "9d. a tenant's data holds its storage pool in the cloud"
# internal-prod's tenant writes an image into its volume pool of st-pool-b,
# then removes st-pool-b from its claim: st-pool-b stays the cloud's (its
# Ceph pools, client and volume type), the claim says which Ceph pool holds
# what, and the cloud stays Ready. Once the image is gone, st-pool-b leaves
# the cloud and its Ceph pools go; put back, they are composed again.
x=$(xr internal internal-prod); vol=$x-st-pool-b-volumes
if rbdc create --size 64 "$vol/tenant-volume-1" >/dev/null 2>&1; then pass "internal-prod holds an image tenant-volume-1 in $vol"; else fail "cannot create an image in $vol"; fi
eventually 90 "the Pool resource $vol reports the image (status.atProvider.images)" sh -c "[ \"\$($K get pools.ceph.provider.c5c3.io $vol -o jsonpath='{.status.atProvider.images}')\" = 1 ]"
as_tenant internal patch $OSC internal-prod --type=merge -p '{"spec":{"storageClusters":["st-pool-a"]}}' >/dev/null
says_kept() {
  case $(as_tenant internal get $OSC internal-prod -o jsonpath='{.status.conditions[?(@.type=="PoolsReady")].message}') in
    *"storage pool st-pool-b, removed from spec.storageClusters, stays the cloud's: Ceph pool $vol holds 1 RBD image(s)"*) return 0 ;; esac
  return 1
}
eventually 60 "st-pool-b removed from the claim: the tenant reads on its claim that st-pool-b stays, $vol holding the image" says_kept
removing=$(as_tenant internal get $OSC internal-prod -o jsonpath='{.status.consumedPools.storage[?(@.name=="st-pool-b")].removing}')
[ -n "$removing" ] && pass "... and status.consumedPools lists st-pool-b as held: $removing" || fail "status.consumedPools does not list st-pool-b as held"
sleep 5
$K get pools.ceph.provider.c5c3.io "$vol" "$x-st-pool-b-images" >/dev/null 2>&1 && rbdc ls "$vol" 2>/dev/null | grep -qx tenant-volume-1 &&
  pass "... its Ceph pools are still the cloud's, with the tenant's image" || fail "st-pool-b's Ceph pools or the image went while it holds data"
if $K -n internal wait --for=condition=Ready $OSC/internal-prod --timeout=5s >/dev/null 2>&1; then pass "internal-prod stays Ready meanwhile"; else fail "internal-prod is not Ready while st-pool-b is held"; fi
rbdc rm "$vol/tenant-volume-1" >/dev/null 2>&1
eventually 180 "the image deleted, st-pool-b leaves the cloud: its Pool resource $vol goes" absent pools.ceph.provider.c5c3.io "$vol"
eventually 60 "... and the empty Ceph pool $vol with it" sh -c "! timeout 30 ceph -c $CEPH_RUN/ceph.conf osd pool ls | grep -qx $vol"
as_tenant internal patch $OSC internal-prod --type=merge -p '{"spec":{"storageClusters":["st-pool-a","st-pool-b"]}}' >/dev/null
eventually 300 "st-pool-b back in the claim: its Pool resource $vol is Ready again" sh -c "$K wait --for=condition=Ready pools.ceph.provider.c5c3.io/$vol --timeout=5s"
if $K -n internal wait --for=condition=Ready $OSC/internal-prod --timeout=300s >/dev/null 2>&1; then pass "internal-prod is Ready again"; else fail "internal-prod is not Ready after st-pool-b came back"; fi

section "9e. a hypervisor pool whose node runs the cloud's instance stays the cloud's"
# team-a-prod holds 2 nodes of hv-pool-a (6d, 9). Its tenant starts an
# instance on one (a domain in the node's libvirt test driver, which the
# node's agent reads when it starts again), then removes hv-pool-a from its
# claim: the pool stays the cloud's while the instance runs — the empty
# node goes back at once, the aggregate keeps the other, and the tenant
# reads why. Once the instance is gone, the pool leaves the cloud. Put
# back, the cloud has hv-pool-a again.
px=$($K -n infrastructure get hypervisorcluster hv-pool-a -o jsonpath='{.spec.resourceRef.name}')
x=$(xr team-a team-a-prod)
read -r node other <<<"$(share_nodes "$x")"
# agent_id NODE: the container of NODE's hypervisor agent (operator-standin).
agent_id() { echo "${1%-node-*}_hypervisor-agent_node-${1##*-node-}"; }
# instance NODE on|off: a tenant's instance starts on NODE, or stops.
instance() {
  local f
  f="$RUN/agents/$(agent_id "$1")/libvirt.xml"
  sed -i '/<domain /d' "$f"
  [ "$2" = off ] || sed -i "s#</node>#  <domain type='test'><name>e2e-tenant-vm</name><memory>1048576</memory><vcpu>1</vcpu><os><type>hvm</type></os></domain>\n</node>#" "$f"
  ctr --address "$RUN/node/containerd.sock" -n shoot-nodes tasks kill -s SIGKILL "$(agent_id "$1")" >/dev/null 2>&1
}
runs() { [ "$(shoot_k hv-pool-a get hypervisor "$1" -o jsonpath='{.status.numInstances}')" = "$2" ]; }
before=$($K -n team-a get $OSC team-a-prod -o jsonpath='{.spec}')
# pools_patch SPEC [DROP]: a merge patch of the spec's pools and shares, without DROP.
pools_patch() { /usr/bin/python3 -c 'import json,sys; s=json.loads(sys.argv[1]); d=sys.argv[2:]
print(json.dumps({"spec":{"hypervisorClusters":[p for p in s["hypervisorClusters"] if p not in d],"hypervisorShares":[x for x in s.get("hypervisorShares",[]) if x["name"] not in d]}}))' "$@"; }
leaves_later() {
  case $(as_tenant team-a get $OSC team-a-prod -o jsonpath='{.status.conditions[?(@.type=="PoolsReady")].message}') in
    *"hypervisor pool hv-pool-a, removed from spec.hypervisorClusters, stays the cloud's: its nodes $node still run the cloud's 1 instance(s)"*) return 0 ;; esac
  return 1
}
if [ -z "$node" ] || [ -z "$other" ]; then fail "team-a-prod holds '$node $other' of hv-pool-a, not 2 nodes"; else
  instance "$node" on
  eventually 90 "team-a-prod's tenant starts an instance on $node: its agent reports it" runs "$node" 1
  as_tenant team-a patch $OSC team-a-prod --type=merge -p "$(pools_patch "$before" hv-pool-a)" >/dev/null
  eventually 90 "hv-pool-a removed from team-a-prod: the tenant reads that it stays while $node runs its instance" leaves_later
  eventually 90 "... its aggregate $x-hv-pool-a keeps $node, and the empty $other went back to the pool" hosts_are "$x-hv-pool-a" "$node"
  if $K -n team-a wait --for=condition=Ready $OSC/team-a-prod --timeout=5s >/dev/null 2>&1; then pass "team-a-prod stays Ready meanwhile"; else fail "team-a-prod is not Ready while hv-pool-a is held"; fi
  instance "$node" off
  left() { ! leaves_later && ! os aggregate show "$x-hv-pool-a" >/dev/null 2>&1 && ! labelled_for hv-pool-a "$node" "$x" &&
    [ -z "$($K get xhypervisorcluster "$px" -o jsonpath="{.status.shares[?(@.cloud==\"$x\")].cloud}")" ]; }
  eventually 180 "the instance stopped: hv-pool-a leaves team-a-prod (no share, no aggregate, $node no longer its)" left
  as_tenant team-a patch $OSC team-a-prod --type=merge -p "$(pools_patch "$before")" >/dev/null
  back() { os aggregate show "$x-hv-pool-a" >/dev/null 2>&1 && $K -n team-a wait --for=condition=Ready $OSC/team-a-prod --timeout=5s >/dev/null 2>&1; }
  eventually 180 "hv-pool-a back in team-a-prod's claim: its aggregate is there again and the cloud is Ready" back
fi

section "9f. a stretched storage pool keeps two replicas in each zone, in Ceph's stretch mode"
# st-pool-s spans eu-de-1a and eu-de-1b with the arbiter's monitor in
# cp-eu-de-1 (#42). Its Ceph here is a local Ceph of its own, laid out as
# Rook lays out a stretched pool cluster (up.sh): its status says where its
# data is and what that survives, Ceph runs in stretch mode (set by the
# provider's StretchMode, each monitor in its node's zone, the arbiter's the
# tiebreaker), and a cloud's Ceph pools are made there with size 4 and
# min_size 2 by the stretch rule.
sp() { $K -n infrastructure get storagecluster st-pool-s -o jsonpath="$1"; }
got=$(sp '{.status.dataPlacement.failureDomain} {.status.dataPlacement.replicas} {.status.dataPlacement.minReplicas} {.status.dataPlacement.stretched} {.status.dataPlacement.crushRule}')
[ "$got" = "zone 4 2 true stretch_zone_nvme" ] && pass "st-pool-s keeps 4 replicas, 2 in each zone, served with 2 ($got): it survives $(sp '{.status.dataPlacement.survives}')" ||
  fail "st-pool-s's status.dataPlacement: '$got'"
STRETCHED_CEPH=(timeout 30 ceph -c "$RUN/ceph-stretched/ceph.conf" --connect-timeout 10)
got=$(sp '{.status.conditions[?(@.type=="StretchMode")].status}: {.status.conditions[?(@.type=="StretchMode")].message}')
[[ $got == "True: Ceph runs in stretch mode: every pool keeps 2 replicas in each zone by rule stretch_zone_nvme; monitor arbiter in cp-eu-de-1 is the tiebreaker" ]] &&
  pass "st-pool-s's claim says: $got" || fail "st-pool-s's StretchMode condition: '$got'"
# mon_state: stretch mode, tiebreaker, election strategy, monitors' locations.
mon_state() { "${STRETCHED_CEPH[@]}" mon dump -f json 2>/dev/null | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["stretch_mode"], d["tiebreaker_mon"], d["election_strategy"], " ".join(m["name"]+m["crush_location"] for m in d["mons"]))'; }
mons=$(mon_state)
[ "$mons" = "True arbiter 3 a{zone=eu-de-1a} b{zone=eu-de-1b} arbiter{zone=cp-eu-de-1}" ] &&
  pass "st-pool-s's Ceph: stretch mode on, each monitor in its node's zone, the arbiter's the tiebreaker, election by connectivity ($mons)" ||
  fail "st-pool-s's Ceph's mon dump: '$mons'"
xs=$(xr internal internal-stretched)
# A cloud's pools there ask the provider for exactly that: size 4, min_size
# 2, the stretch over zones, on the pool's device class; Ceph has them so.
asks() { $K get pools.ceph.provider.c5c3.io "$xs-st-pool-s-$1" -o jsonpath='{.spec.forProvider.size} {.spec.forProvider.minSize} {.spec.forProvider.stretch.zoneType} {.spec.forProvider.deviceClass}' 2>/dev/null; }
stretch_asked() { [ "$(asks volumes)" = "4 2 zone nvme" ] && [ "$(asks images)" = "4 2 zone nvme" ]; }
eventually 240 "internal-stretched's volume and image pools in st-pool-s ask for 4 replicas, min_size 2, stretched over zones, on nvme" stretch_asked
ceph_pool() { $K get pools.ceph.provider.c5c3.io "$xs-st-pool-s-$1" -o jsonpath='{.spec.forProvider.name}'; }
in_ceph() { # USE: the pool as st-pool-s's Ceph has it: size min_size rule
  "${STRETCHED_CEPH[@]}" osd pool ls detail -f json 2>/dev/null | /usr/bin/python3 -c '
import json, subprocess, sys
rules = {r["rule_id"]: r["rule_name"] for r in json.loads(subprocess.run(sys.argv[2:], capture_output=True).stdout)}
for p in json.load(sys.stdin):
    if p["pool_name"] == sys.argv[1]: print(p["size"], p["min_size"], rules.get(p["crush_rule"]))' "$(ceph_pool "$1")" "${STRETCHED_CEPH[@]}" osd crush rule dump -f json; }
made() { [ "$(in_ceph volumes)" = "4 2 stretch_zone_nvme" ] && [ "$(in_ceph images)" = "4 2 stretch_zone_nvme" ] &&
  [ "$($K get pools.ceph.provider.c5c3.io "$xs-st-pool-s-volumes" -o jsonpath='{.status.atProvider.crushRule}')" = stretch_zone_nvme ]; }
eventually 240 "... and st-pool-s's Ceph has them so: size 4, min_size 2, rule stretch_zone_nvme (and the Pool's status says it)" made
$K -n internal delete $OSC internal-stretched --wait=false >/dev/null
vol_pool=$(ceph_pool volumes)
eventually 240 "internal-stretched is deleted with its pools (dataPolicy Delete)" sh -c "! $K get managed -l crossplane.io/claim-name=internal-stretched -o name 2>/dev/null | grep -q ."
"${STRETCHED_CEPH[@]}" osd pool ls 2>/dev/null | grep -qx "$vol_pool" && fail "internal-stretched's volume pool $vol_pool is still in st-pool-s's Ceph" ||
  pass "... its volume pool $vol_pool is gone from st-pool-s's Ceph"
# Deleted, a stretched pool takes its arbiter's identity and monitor out of the
# control-plane cluster with it, and releases that cluster.
$K -n infrastructure delete storagecluster st-pool-s --wait=false >/dev/null
arbiter_gone() { ! shoot_k cp-eu-de-1 get namespace ceph-arbiter-st-pool-s >/dev/null 2>&1; }
eventually 120 "st-pool-s: its composite is gone" sh -c "! $K get xstorageclusters -l crossplane.io/claim-name=st-pool-s -o name | grep -q ."
eventually 60 "st-pool-s: its arbiter's namespace (ServiceAccount, Role, monitor) is gone from cp-eu-de-1" arbiter_gone
eventually 30 "st-pool-s: its arbiter's ShootKubeconfig is gone" absent shootkubeconfig storage-st-pool-s-arbiter
eventually 30 "st-pool-s: its StretchMode is gone" absent stretchmodes.ceph.provider.c5c3.io storage-st-pool-s-stretch-mode
[[ $(mon_state) == "True arbiter "* ]] &&
  pass "... and its Ceph stays in stretch mode: leaving it would lower every pool's placement" || fail "st-pool-s's Ceph left stretch mode when its StretchMode was deleted"
[ -z "$($K get clusterusages -o jsonpath='{.items[?(@.spec.by.kind=="XStorageCluster")].metadata.name}')" ] &&
  pass "... and its usage of cp-eu-de-1 is released" || fail "a storage pool still uses a control-plane cluster: $($K get clusterusages -o jsonpath='{.items[?(@.spec.by.kind=="XStorageCluster")].spec.reason}')"

section "10. no error loops"
# Core runs as a process and logs to a file; every package logs in its pod,
# read as a platform engineer reads it (kubectl logs, through the kubelet).
# A log that cannot be read fails: counting nothing would pass unseen.
pkg_of() { case $1 in provider) echo provider=cobaltcore-provider-cobaltcore ;;
  provider-kubernetes) echo provider=crossplane-contrib-provider-kubernetes ;; *) echo "function=cobaltcore-$1" ;; esac; }
pod_logs() {
  local pod
  pod=$($K -n crossplane-system get pods -l "pkg.crossplane.io/$(pkg_of "$1")" --field-selector=status.phase=Running -o name | head -1)
  [ -n "$pod" ] && $K -n crossplane-system logs "$pod" --all-containers "${@:2}"
}
is_error='ERROR\|"level":"error"'
core_errors() { grep -c "$is_error" "$RUN/crossplane.log" || true; }
pkgs=(provider provider-kubernetes function-controlplane-cluster function-hypervisor-cluster function-storage-cluster function-openstack-cluster)
readable=()
for l in "${pkgs[@]}"; do
  if pod_logs "$l" --tail=1 >/dev/null; then readable+=("$l")
  else fail "$l: its log cannot be read ($K -n crossplane-system logs)"; fi
done
since=$(date -u +%Y-%m-%dT%H:%M:%SZ) core_before=$(core_errors)
sleep 30
n=$(( $(core_errors) - core_before ))
[ "$n" -eq 0 ] && pass "crossplane: no new errors in 30s" || fail "crossplane: $n new errors in 30s: $(grep "$is_error" "$RUN/crossplane.log" | tail -1 | cut -c1-300)"
for l in "${readable[@]}"; do
  out=$(pod_logs "$l" --since-time="$since") || { fail "$l: its log cannot be read ($K -n crossplane-system logs)"; continue; }
  new=$(grep "$is_error" <<<"$out")
  [ -z "$new" ] && pass "$l: no new errors in 30s" || fail "$l: $(wc -l <<<"$new") new errors in 30s: $(tail -1 <<<"$new" | cut -c1-300)"
done

section "memory of the plane's processes"
local/demo/rss.sh

printf '%d\t(end: %d failed)\n' "$SECONDS" "$fails" >>"$SECTIONS"
echo
[ "$fails" -eq 0 ] && { echo "e2e: all passed"; exit 0; }
echo "e2e: $fails failed (logs in $RUN)"; exit 1
exit
}
