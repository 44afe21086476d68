#!/usr/bin/env bash
# Drives the running local management plane (local/demo/up.sh) and asserts
# what the product must do there, end to end through Crossplane core, the
# functions, the provider and the stand-ins. Every section but 0 and G's
# commits has moved to the Go suite beside this file (TestGitOps, TestPlane,
# TestRemovals, TestClouds, TestShares, TestDeletes, TestHolds: named
# subtests, waits that watch, independent sections at once); this script
# calls it where they stood, and the others follow them
# there (docs/development.md):
#
#   0. the C5C3 operations docs' dedicated pool hv-pool-compliance, applied as
#      the docs print it, and the storage pool their finance-prod names start
#      provisioning first, while G runs (3b and 6 check them);
#   G. GitOps: every Flux Kustomization of examples/clusters/management and
#      each tenant's own is Ready at the demo's commit, and every example
#      claim was applied by Flux, none with kubectl; a tenant's commit of a
#      hypervisor pool, a ClusterRole and a cloud in another tenant's
#      namespace is refused by its Kustomization (applying as the tenant's
#      ServiceAccount), saying why, with nothing created; a tenant's commit
#      adding a cloud creates it (then every Kustomization but team-a's is
#      suspended: the later sections change claims by hand);
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
#      and its tenant reads on the claim which services it lacks; its pool
#      hv-pool-us's cluster API frozen, the pool says so and the cloud stays
#      as it was, and both recover when it answers again;
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
#      under Delete, which the platform team sets and a tenant may not; all
#      of it while the provider, function-openstack-cluster, Crossplane core
#      and kube-apiserver are killed in turn (each back as a cluster brings
#      it back; 9f checks the cloud created meanwhile holds one object per
#      managed resource);
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
#      of its zones); its local Ceph, laid out as Rook lays out a stretched
#      cluster, runs in Ceph's stretch mode, and a cloud's Ceph pools there
#      are made with size 4 and min_size 2 by the stretch rule;
#  9g. st-pool-us's cluster API frozen: its storage agent's report stops
#      advancing and the pool names it the last (DataAvailable Unknown)
#      within three of the agent's intervals; answering again, it reports;
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
fails=0
# section TITLE: a section's header, with the seconds since e2e started
# (where the time goes).
# Each section's start is also written to _output/e2e-sections.tsv (seconds
# since e2e started, title, and the machine's busy and total CPU jiffies
# from /proc/stat), which .ci/run prints at the end with how busy the two
# cores were in each section: a section that leaves them idle waits on the
# product's clocks, and may run beside another.
SECTIONS=${E2E_SECTIONS:-_output/e2e-sections.tsv}
mkdir -p "$(dirname "$SECTIONS")" && printf 'start_s\tsection\tcpu_busy\tcpu_all\n' >"$SECTIONS"
# shellcheck source=../../tools/test/jiffies.sh
. tools/test/jiffies.sh
cpu_tsv() { local b a; read -r b a < <(jiffies); printf '%d\t%d' "$b" "$a"; }
section() { printf '== %s   [e2e %ds]\n' "$*" "$SECONDS"; printf '%d\t%s\t%s\n' "$SECONDS" "$*" "$(cpu_tsv)" >>"$SECTIONS"; }
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
absent() { ! $K get "$@" >/dev/null 2>&1; }

servers() { # STATE LABELS(json) NAME...: Servers of 32 cores and 512 GiB in STATE, as metal-operator reports them
  local state=$1 labels=$2; shift 2
  local n; for n in "$@"; do
    printf '{"apiVersion":"metal.ironcore.dev/v1alpha1","kind":"Server","metadata":{"name":"%s","labels":%s},"spec":{"systemUUID":"e2e-%s"}}\n' "$n" "$labels" "$n"
  done | $K apply -f - >/dev/null
  $K patch server "$@" --subresource=status --type=merge -p "{\"status\":{\"state\":\"$state\",\"totalSystemMemory\":\"512Gi\",\"processors\":[{\"id\":\"CPU0\",\"totalCores\":32,\"totalThreads\":64}]}}" >/dev/null
}

# The C5C3 operations docs' claims, as the docs print them: document N of
# tools/xrd/testdata/c5c3-docs-claims.yaml (3 hv-pool-compliance, 4 finance-prod).
docs_claim() { awk -v n="$1" 'BEGIN {d = 1} /^---$/ {d++; next} d == n' tools/xrd/testdata/c5c3-docs-claims.yaml; }

# The sections moved to Go (test/e2e, docs/development.md maps each check):
# its test binary is $E2E_TEST, else built while G and 0 run; go_sections RUN-REGEX runs the
# tests matching it, prints their checks, and counts each failed subtest.
# Their lines are kept in _output/e2e-go.log, as go test -json in
# _output/e2e-go.json (each subtest's seconds).
# make e2e builds it before the plane starts (E2E_TEST, make e2e-bin).
GO_LOG=${SECTIONS%/*}/e2e-go.log
: >"$GO_LOG"; : >"${GO_LOG%.log}.json"
if [ -z "${E2E_TEST:-}" ]; then
  E2E_TEST=$RUN/bin/e2e.test
  (nice -n 5 go test -c -tags "${GO_TAGS:-netgo,osusergo},e2e" -o "$E2E_TEST" ./test/e2e) >"$RUN/e2e-build.log" 2>&1 &
  e2e_build=$!
fi
go_sections() {
  if [ -n "${e2e_build:-}" ]; then wait "$e2e_build" || { fail "building test/e2e: $(tail -5 "$RUN/e2e-build.log")"; return 1; }; e2e_build=; fi
  local out; out=$(mktemp)
  COBALTCORE_DEMO=$RUN "$E2E_TEST" -test.v -test.run "$1" -test.timeout 30m 2>&1 | tee "$out" | grep --line-buffered -vE '^=== (RUN|PAUSE|CONT|NAME)'
  cat "$out" >>"$GO_LOG"
  go tool test2json -t -p e2e <"$out" >>"${GO_LOG%.log}.json"
  # Each subtest without subtests of its own is a check; a parent fails with
  # its failed checks. A parent that failed with every check under it passed
  # (its own t.Error, or a cleanup's) is a failed check of its own: stop 74's
  # CI counted one as "0 failed".
  local passed failed
  read -r passed failed < <(awk '/--- (PASS|FAIL): / { r[$3] = $2 } END { for (a in r) { leaf = 1; under = 0; for (b in r) if (b != a && index(b, a "/") == 1) { leaf = 0; if (r[b] == "FAIL:") under = 1 } if (leaf) n[r[a]]++; else if (r[a] == "FAIL:" && !under) n["FAIL:"]++ } printf "%d %d\n", n["PASS:"], n["FAIL:"] }' "$out")
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
# reconcile_now NS RESOURCE NAME: asks a Flux object to reconcile now, as
# `flux reconcile` does, at most every 5 s while a wait polls.
reconcile_now() {
  [ $(( $(date +%s) % 5 )) = 0 ] || return 0
  $K -n "$1" annotate --overwrite "$2" "$3" reconcile.fluxcd.io/requestedAt="$(date +%s%N)" >/dev/null
}
# fetched NS REV: the tenant's GitRepository has fetched REV; until then it
# is asked (every 5 s) to fetch now, as `flux reconcile source git` does.
fetched() {
  [ "$($K -n "$1" get $FLUX_GIT gitops -o jsonpath='{.status.artifact.revision}')" = "$2" ] && return 0
  reconcile_now "$1" $FLUX_GIT gitops
  return 1
}
# tenant_at TENANT REV STATUS [TEXT]: the tenant's Kustomization tried REV and
# its Ready is STATUS, its message containing TEXT. Until it has tried REV it
# is asked (every 5 s) to apply now, as `flux reconcile kustomization` does:
# after a failed apply it would wait out its retryInterval (a minute) before
# it looked at the next commit.
tenant_at() {
  fetched "$1" "$2" || return 1
  if [ "$(ks "$1/openstack-clusters" '{.status.lastAttemptedRevision}')" != "$2" ]; then
    reconcile_now "$1" $FLUX_KS openstack-clusters
    return 1
  fi
  [ "$(ks "$1/openstack-clusters" '{.status.conditions[?(@.type=="Ready")].status}')" = "$3" ] || return 1
  case $(ks "$1/openstack-clusters" '{.status.conditions[?(@.type=="Ready")].message}') in *"${4:-}"*) return 0 ;; esac
  return 1
}

section "0. the C5C3 docs' dedicated pool and the storage its cloud names (provisioning while G to 3 run)"
# hv-pool-compliance as the docs print it: 20 workers of machine pool
# ironcore-dedicated-rack-1, dedicated by its label. Its servers carry the
# dedicated pool's label too, as the platform labels a dedicated rack.
# st-pool-encrypted, which the docs' finance-prod names, is the platform's.
# The tenant's namespace tenant-finance binds the tenant role to its group.
# Its Cinder backend is one the local OpenStack registers (local/openstack/start.sh).
# Applied first, before G: they take the longest to provision (20
# workers), and 3b and 6 wait for them. The Servers come first, so that
# the pools' first look finds them: one apply and one status patch for all.
OS_RUN=${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}
(OS_CLIENT_CONFIG_FILE=$OS_RUN/clouds.yaml timeout 60 openstack --os-cloud admin volume service list -f value -c Host 2>/dev/null | grep '@ceph-st-pool-encrypted$' >/dev/null) &
encrypted_backend=$!
docs_servers=() ; for i in $(seq -w 1 20); do docs_servers+=("docs-rack-1-$i"); done
servers Available '{"c5c3.io/machine-pool":"ironcore-dedicated-rack-1","c5c3.io/dedicated-pool":"hv-pool-compliance"}' "${docs_servers[@]}"
servers Available '{"c5c3.io/machine-pool":"e2e-encrypted"}' e2e-encrypted-1 e2e-encrypted-2 e2e-encrypted-3
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
  # Room for the docs' finance-prod, a large cloud with the default quotas:
  # volumes 16384 GB × 3 replicas, images 1024 × 3, ephemeral 8192 × 2,
  # 68608 GB of the 69632 (85 %) this pool shares out.
  ceph: {osdCount: 1, deviceClass: nvme, targetCapacity: 80Ti, replicationFactor: 3, encrypted: true}
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

# A cloud in us-east-1, whose catalog has no Nova, Cinder or Neutron (the
# operator stand-in registers them in eu-de-1 only, as an operator that
# deploys compute would): applied now, checked in 4b, gone before 5 deletes
# the pool it consumes.
# Claimed in crossplane.c5c3.io, the deprecated group clouds were claimed in
# before they moved to the docs' c5c3.io: 4b checks that such a cloud keeps
# working, and that every request to it warns (kubectl prints the warning
# here).
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

section "G. GitOps: the tree came through Flux, and a tenant's Git touches only its own namespace"
# Its reads (every Kustomization Ready at the demo's commit, in their
# dependsOn order; every example claim Flux's) in Go (test/e2e TestGitOps).
go_sections '^TestGitOps$'

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
absent hypervisorcluster -n infrastructure hv-pool-team-a && absent clusterrole team-a-everything && absent openstackclusters -n team-b team-a-was-here &&
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
fluxed() { case $($K -n team-a get openstackclusters team-a-dev --show-managed-fields -o jsonpath='{.metadata.managedFields[*].manager}' 2>/dev/null) in *kustomize-controller*) return 0 ;; esac; return 1; }
tenant_reconciled() { fetched team-a "$gitops_rev_dev" && fluxed; }
eventually 90 "team-a's commit adding team-a-dev creates the claim, applied by Flux" tenant_reconciled
# The later sections change example claims and pools by hand, as an
# operator does to test the product's reactions: Flux would put them back
# from Git. Every Kustomization but team-a's is suspended (as `flux suspend
# kustomization` does); team-a's after 5b. The pools' layers (crossplane-system,
# composed by the pool functions) hold no claim and stay: 2d commits to one.
for k in $($K get $FLUX_KS -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}{"\n"}{end}'); do
  { [ "$k" = team-a/openstack-clusters ] || [ "${k%/*}" = crossplane-system ]; } && continue
  $K -n "${k%/*}" patch $FLUX_KS "${k#*/}" --type=merge -p '{"spec":{"suspend":true}}' >/dev/null || fail "cannot suspend $k"
done

wait "$encrypted_backend" ||
  fail "the local OpenStack has no cinder-volume backend ceph-st-pool-encrypted: it was started before it knew it; restart it (make openstack-down openstack-up)"
section "1-4b. in Go (test/e2e TestPlane): 1 the example pools and control-plane clusters; then at once 1a core's RBAC, 1b the Shoots in Gardener, 1c installed as shipped, 2 Server changes through the watches, 2b figures from the agents, 2c least privilege, 2d the pools' layers from Flux, 3 an under-provisioned pool, 3b long names and the docs' pool, 4 a dedicated pool overlapping, 4b a cloud without compute"
go_sections '^TestPlane$'

section "5-5b. in Go (test/e2e TestRemovals), at once: 5 deleting a claim; 5b GitOps: the cloud a tenant's commit added is Ready; removed from Git, it is deleted and its data stays"
go_sections '^TestRemovals$'

section "6-6c. in Go (test/e2e TestClouds), at once: 6 the tenants' clouds and their objects in the real services; 6b each tenant logs in with its claim's connection secret, and its shares of the hypervisor pools are named nodes; 6c no published secret value outside its Secrets"
go_sections '^TestClouds$'
section "6d-8. in Go (test/e2e TestShares): 6d a share shrunk or grown in the claim moves the hosts; 7 shared pools are shared out, not over-committed; 8 the dedicated pool, and a pool of another region"
go_sections '^TestShares$'

section "9-9c. in Go (test/e2e TestDeletes): 9 deleting a tenant's claim; 9b a pool in use cannot be deleted; 9c a new Composition revision leaves a pinned production cloud where it is"
go_sections '^TestDeletes$'

section "9d-9g. in Go (test/e2e TestHolds), at once: 9d a tenant's data holds its storage pool in the cloud; 9e a hypervisor pool whose node runs the cloud's instance stays the cloud's, out of service too; 9f a stretched storage pool keeps two replicas in each zone, in Ceph's stretch mode; 9g a storage pool's cluster API frozen"
go_sections '^TestHolds$'

section "10. no error loops"
# Core runs as a process and logs to a file; every package logs in its pod,
# read as a platform engineer reads it (kubectl logs, through the kubelet).
# A log that cannot be read fails: counting nothing would pass unseen.
pkg_of() { case $1 in provider) echo provider=cobaltcore-provider-cobaltcore ;;
  provider-kubernetes) echo provider=crossplane-contrib-provider-kubernetes ;; *) echo "function=cobaltcore-$1" ;; esac; }
pod_logs() {
  local pod
  pod=$($K -n crossplane-system get pods -l "pkg.crossplane.io/$(pkg_of "$1")" --field-selector=status.phase=Running -o jsonpath='{.items[0].metadata.name}' 2>/dev/null)
  [ -n "$pod" ] && $K -n crossplane-system logs "pod/$pod" --all-containers "${@:2}"
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

printf '%d\t(end: %d failed)\t%s\n' "$SECONDS" "$fails" "$(cpu_tsv)" >>"$SECTIONS"
echo
[ "$fails" -eq 0 ] && { echo "e2e: all passed"; exit 0; }
echo "e2e: $fails failed (logs in $RUN)"; exit 1
exit
}
