#!/usr/bin/env bash
# Starts a local management plane that runs the product on real Crossplane
# core, with no outside cluster, and applies the example GitOps tree:
#
#   etcd + kube-apiserver (local/cmd/apiserver), kube-controller-manager
#   and kube-scheduler, the real gardener-apiserver v1.138.0 aggregated
#   into it as in a garden cluster (Shoots, CloudProfiles, Projects: the
#   garden's objects of local/garden applied as Gardener's operator
#   would), a real node (local/node: containerd, kubelet,
#   kube-proxy), Crossplane core v2.4.0 with its Deployment runtime
#   (initialized by `crossplane core init` as its chart's init container
#   does: CRDs, TLS secrets and the usage webhook, which the API server
#   reaches through an ExternalName Service; the functions' Service names
#   resolved by local/cmd/dns-standin, also the pods' cluster DNS), a local OCI registry (Debian's
#   docker-registry, TLS) holding every package of `make xpkg` (ours and
#   provider-kubernetes v1.0.0, pinned) and the node agents' images,
#   relocated to by an ImageConfig (core) and a mirror (the node);
#   CobaltCore installed as a landscape installs it (examples/crossplane:
#   the providers with their DeploymentRuntimeConfigs, then the
#   Configuration, whose dependencies core resolves), each package a pod on
#   the node from the image containerd pulled, the local OpenStack
#   and Ceph (make openstack-up ceph-up, started before this script), and
#   three stand-ins, each saying in its doc what it does not simulate:
#     local/cmd/gardener-standin  gardenlet's part: Shoots become ready,
#                                    each with a local kube-apiserver of its
#                                    own, whose CAs and address it publishes
#                                    so that Gardener's shoots/adminkubeconfig
#                                    issues kubeconfigs for it;
#     local/cmd/operator-standin  what the operators inside Shoots report:
#                                    the c5c3-operator (ControlPlane Ready, an
#                                    admin clouds.yaml for the local
#                                    Keystone, served at the cloud's public
#                                    endpoint too, the local OVN as the cloud's
#                                    ovn-databases, ssl: with a client
#                                    certificate per cloud), Rook (CephCluster Ready with
#                                    the local Ceph's health, its monitors and
#                                    admin key), the Ceph arbiter, and a
#                                    kubelet for each of a pool's 3 nodes:
#                                    the hypervisor agent (libvirt test
#                                    driver) on each, the storage agent (local
#                                    Ceph) on the first, with each node's
#                                    Hypervisor the operator makes and
#                                    chassis in the local OVN Southbound in
#                                    its pool's zone; nova-compute on the
#                                    nodes bound to a cloud (a compute host
#                                    of the local Nova);
#     local/cmd/metal-standin     the metal-operator Servers of the pools.
#
# The GitOps tree (examples/) reaches the cluster only through Flux v1.9.6
# (source- and kustomize-controller as processes, locked down for tenants)
# from a local Git server: the demo commits examples/ with its package
# versions and applies the Kustomizations of examples/clusters/management,
# which apply the install layer, the pools (examples/infrastructure), and
# each tenant's onboarding, whose own Kustomization applies the tenant's
# clouds as the tenant (examples/tenants). It waits until every pool claim,
# every OpenStackCluster and every Kustomization is Ready, and prints what
# exists. Every wait is bounded; a failure names the component
# or claim and its conditions. local/demo/down.sh stops everything by PID.
#
# Usage: local/demo/up.sh   (after `make xpkg demo-deps openstack-up ceph-up`; run dir $COBALTCORE_DEMO, default /tmp/cobaltcore-demo)
set -euo pipefail
# One compound command: bash reads all of it before running any, so editing
# this file while it runs cannot derail it.
{
cd "$(dirname "$0")/../.."
ROOT=$PWD
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
XPKG=${XPKG:-_output/xpkg}
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
K=$KUBECTL
start=$(date +%s)
say() { printf '[demo %4ss] %s\n' $(( $(date +%s) - start )) "$*"; }
# A start still running in the background finishes first, so that
# down.sh finds every PID it wrote.
die() {
  say "FAILED: $*"
  [ -n "${stretched:-}" ] && wait "$stretched" 2>/dev/null
  echo "logs: $RUN/*.log; stop with local/demo/down.sh" >&2
  exit 1
}

# wait_for SECONDS WHAT COMMAND...: retry until COMMAND succeeds.
wait_for() {
  local bound=$1 what=$2; shift 2
  for _ in $(seq "$bound"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  die "$what (waited ${bound}s)"
}

functions=(function-controlplane-cluster function-hypervisor-cluster function-storage-cluster function-openstack-cluster)
[ -e "$RUN/apiserver.pid" ] && die "a demo already runs in $RUN: stop it with local/demo/down.sh"
for p in "${functions[@]}" provider-cobaltcore provider-kubernetes configuration-cobaltcore; do
  [ -f "$XPKG/$p.xpkg" ] || die "no package $XPKG/$p.xpkg: run make xpkg"
done
[ -s "$XPKG/VERSION" ] || die "no $XPKG/VERSION: run make xpkg"
VERSION=$(cat "$XPKG/VERSION")
command -v docker-registry >/dev/null || die "no docker-registry (the local OCI registry): run make demo-deps"
# A node that was killed rather than stopped leaves its pods' mounts.
NODE_DIR=$RUN/node local/node/stop.sh
rm -rf "$RUN" && mkdir -p "$RUN/bin" "$RUN/cache" "$RUN/certs" "$RUN/runtime"

# st-pool-s, the stretched storage pool, gets a Ceph of its own, laid out
# as Rook lays out a pool cluster over eu-de-1a and eu-de-1b: a monitor on a
# node of each zone, two nodes of nvme OSDs in each, and a third monitor on
# a node of cp-eu-de-1 standing in for the arbiter's. The provider's
# StretchMode finds each monitor's zone by its node, as in a landscape, and
# sets Ceph's stretch mode there; the clouds' pools on st-pool-s are made
# there, with 2 replicas in each zone. Its data is in memory; down.sh stops
# it. It needs nothing of the plane, so it starts now, beside it (it took
# ~25 s of the stand-ins' start); the stand-ins wait for it. Its four OSDs
# report 48 TiB each (memstore holds what is written): st-pool-s asks for
# 200Ti of a Ceph of 192Ti, and shares out 85 % of what Ceph has (e2e 2b).
CEPH_STRETCHED_RUN=$RUN/ceph-stretched
(
  COBALTCORE_CEPH_RUN=$CEPH_STRETCHED_RUN CEPH_MON_PORT=3401 CEPH_MON_V1_PORT=6901 CEPH_DEVICE_CLASS=nvme OSD_BYTES=$((48 << 40)) \
    CEPH_MONS="a=st-pool-s-eu-de-1a-0 b=st-pool-s-eu-de-1b-0 arbiter=cp-eu-de-1-0" \
    CEPH_OSD_HOSTS="eu-de-1a/st-pool-s-eu-de-1a-0 eu-de-1a/st-pool-s-eu-de-1a-1 eu-de-1b/st-pool-s-eu-de-1b-0 eu-de-1b/st-pool-s-eu-de-1b-1" \
    local/ceph/start.sh >"$RUN/ceph-stretched.log" 2>&1
) &
stretched=$!

say "building the local binaries (the plane and the stand-ins; the packages run from their images)"
# One go build for all of them: it compiles their packages in parallel and
# links each binary once (-trimpath, as make sets it, shares the build cache
# with make test).
GOFLAGS="${GOFLAGS:-} -trimpath" go build -tags "${GO_TAGS:-netgo,osusergo}" -o "$RUN/bin/" ./local/cmd/... ./tools/cmd/imgbuild

# bg NAME COMMAND...: start a process, its log in RUN/NAME.log, its PID in RUN/NAME.pid.
bg() { local n=$1; shift; "$@" >"$RUN/$n.log" 2>&1 & echo $! >"$RUN/$n.pid"; }
alive() { kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null || die "$1 exited: $(tail -3 "$RUN/$1.log")"; }
# supervised NAME COMMAND...: as bg, and started again a second after it
# exits, however it exits: what a cluster does for the Deployment's pod
# that runs it there. The fault checks kill it mid-reconcile (e2e 9).
# RUN/NAME.pid is the running process, RUN/NAME.supervisor the loop's PID;
# down.sh stops the loop first.
supervised() {
  local n=$1; shift
  : >"$RUN/$n.log"
  (
    trap 'exit 0' TERM
    while :; do
      "$@" >>"$RUN/$n.log" 2>&1 &
      echo $! >"$RUN/$n.pid"
      rc=0; wait $! || rc=$?
      echo "supervised: $n exited ($rc): starting it again in 1 s" >>"$RUN/$n.log"
      sleep 1
    done
  ) 2>>"$RUN/$n.log" &
  echo $! >"$RUN/$n.supervisor"
}

# The local node: its bridge holds the node's address, which the API
# server advertises (local/node).
export NODE=node-1 NODE_IP=10.244.0.1 POD_CIDR=10.244.0.0/24 NODE_DIR=$RUN/node
for b in "$KUBELET" "$KUBE_PROXY" "$KUBE_SCHEDULER" "$KUBE_CONTROLLER_MANAGER"; do [ -x "$b" ] || die "no $b: run make tools"; done
command -v containerd >/dev/null && command -v runc >/dev/null && [ -x /usr/lib/cni/bridge ] ||
  die "no containerd, runc or CNI plugins (the local node): run make demo-deps"
local/node/start.sh bridge || die "cannot create the node's bridge cni0"

say "starting etcd, kube-apiserver and gardener-apiserver"
[ -x "${GARDENER_APISERVER:-}" ] || die "no gardener-apiserver at ${GARDENER_APISERVER:-}: run make tools"
bg apiserver "$RUN/bin/apiserver" -dir "$RUN" -garden -node-ip "$NODE_IP" -node "$NODE"
wait_for 120 "kube-apiserver with gardener-apiserver did not start ($RUN/apiserver.log, $RUN/garden/gardener-apiserver.log)" test -s "$RUN/kubeconfig"
export KUBECONFIG=$RUN/kubeconfig
# The control plane's controllers, each under its own identity as in a
# cluster: every controller of kube-controller-manager (Deployments,
# ReplicaSets, EndpointSlices, ServiceAccount tokens' CA, garbage
# collection, namespace deletion, ClusterRole aggregation) and the scheduler.
bg kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig="$RUN/kube-controller-manager.kubeconfig" \
  --authentication-kubeconfig="$RUN/kube-controller-manager.kubeconfig" --authorization-kubeconfig="$RUN/kube-controller-manager.kubeconfig" \
  --use-service-account-credentials --service-account-private-key-file="$RUN/pki/sa-signer.key" --root-ca-file="$RUN/pki/ca.crt" \
  --leader-elect=false --bind-address=127.0.0.1 --secure-port=18257
bg kube-scheduler "$KUBE_SCHEDULER" --kubeconfig="$RUN/kube-scheduler.kubeconfig" --authentication-kubeconfig="$RUN/kube-scheduler.kubeconfig" \
  --authorization-kubeconfig="$RUN/kube-scheduler.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 --secure-port=18259

say "starting the Gardener stand-in, with a spare Shoot cluster for each of the landscape's pools"
mkdir -p "$RUN/shoots"
# The stand-ins run at a lower CPU priority (nice 10, inherited by the
# Shoots' kube-apiservers and the node agents they start): in a landscape
# those clusters and nodes are other machines, and on 2 cores their dozen API
# servers starved the management plane and the local OpenStack (Keystone
# answered in 7-38 s and the provider's calls timed out).
# The Shoots' API servers listen on the node's address (the bridge holds it
# from the start): provider-kubernetes' pod reaches them there.
# A Shoot's cluster starts empty, as Gardener's does: the CRDs of the
# operators its kind of cluster runs (Rook's and the external arbiter's in
# a storage pool, the hypervisor operator's in a hypervisor pool, the
# c5c3-operator's in a control-plane cluster) and their namespaces come with
# the cluster's layer, which Flux applies through the Kustomization the
# cluster's function composes (examples/clusters, #53 §7).
# -spare-shoots: a cluster per pool of the example landscape starts now,
# right after the API server, while core, the registry, the node, Flux and
# the packages install (started after the node, 40 s before Flux applied
# the pools, three hypervisor pools' spares were not ready and their
# Shoots took 28-52 s), in this order: the
# control-plane clusters' (two, quick; the stretched pool's arbiter runs in
# cp-eu-de-1, and waited minutes when its cluster came last), then the
# storage pools' (their Ceph is the longest chain after), then the
# hypervisor pools';
# each Shoot the pools make later takes one (with the admission plugin every pool's Shoot enables,
# internal/gardener) and is ready in seconds. Started when Flux applied the
# pools, their dozen starts took 150 s, two at a time (docs/benchmarks.md).
spares() { find examples/infrastructure/*/"$1" -name '*.yaml' | wc -l; }
bg gardener-standin nice -n 10 "$RUN/bin/gardener-standin" -kubeconfig "$KUBECONFIG" -shoot-clusters "$RUN/shoots" -shoot-address "$NODE_IP" \
  -shoot-nodes 3 \
  -spare-shoots "control-plane=$(spares control-plane)" -spare-shoots "storage=$(spares pools/storage)" \
  -spare-shoots "hypervisor=$(spares pools/hypervisor)" -spare-shoot-plugins DenyServiceExternalIPs
wait_for 60 "the Gardener stand-in does not run ($RUN/gardener-standin.log)" grep -q "watching the Shoots" "$RUN/gardener-standin.log"


say "initializing Crossplane core v2.4.0 as its chart's init container does"
# `core init`: Crossplane's CRDs, its CA, server and client certificates in
# Secrets of crossplane-system, and the ValidatingWebhookConfiguration of
# usage protection (deleting a resource a Usage protects is refused). The
# chart's Service for the webhook selects core's pod; here core is a local
# process, so the Service is an ExternalName for localhost, which the API
# server resolves as it does for an aggregated API (no cluster DNS needed).
XP_SRC=$(GOFLAGS= go mod download -json github.com/crossplane/crossplane/v2@v2.4.0 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
WEBHOOK_PORT=19443
$K create namespace crossplane-system >/dev/null
say "core's RBAC as its chart (v2.4.0) gives it, the RBAC manager, and what CobaltCore ships"
# Core and the RBAC manager run under the ServiceAccounts and ClusterRoles of
# `helm install crossplane -n crossplane-system` with the chart's default
# values (rendered from the pinned chart: its few template directives are
# names, the namespace and branches those values take), not as the API
# server's admin: a permission core lacks in a cluster fails here too. The
# RBAC manager aggregates each XRD's and provider revision's kinds into
# core's ClusterRole; examples/crossplane/crossplane-rbac.yaml adds
# the Gardener kinds CobaltCore composes.
chart_rbac() {
  local t=$XP_SRC/cluster/charts/crossplane/templates f
  for f in serviceaccount clusterrole clusterrolebinding rbac-manager-serviceaccount rbac-manager-clusterrole \
    rbac-manager-clusterrolebinding rbac-manager-managed-clusterroles rbac-manager-allowed-provider-permissions; do
    echo ---
    sed -e '/{{-* *include "crossplane.labels"/d' \
      -e '/{{-* *if not \.Values\.serviceAccount\.create *}}/,/{{-* *else *}}/d' \
      -e '/{{-* *with \.Values\./,/{{-* *end *}}/d' \
      -e '/^ *{{-* *\(if\|else\|end\)\b[^}]*}}$/d' \
      -e 's/{{ template "crossplane\.name" \. }}/crossplane/g' -e 's/{{ \.Release\.Namespace }}/crossplane-system/g' "$t/$f.yaml"
  done
}
chart_rbac >"$RUN/crossplane-rbac.yaml"
! grep -n '{{' "$RUN/crossplane-rbac.yaml" || die "the chart's RBAC has template directives this script does not render (above)"
$K apply -f "$RUN/crossplane-rbac.yaml" -f examples/crossplane/crossplane-rbac.yaml >/dev/null
# The aggregation controller fills core's role from the labelled ones.
wait_for 60 "core's aggregated ClusterRole was not filled (kube-controller-manager's clusterrole-aggregation)" \
  sh -c "[ \"\$($K auth can-i get secrets -n crossplane-system --as=system:serviceaccount:crossplane-system:crossplane)\" = yes ]"
sa_kubeconfig() { # SERVICEACCOUNT FILE [NAMESPACE]: the admin's kubeconfig, logging in as the ServiceAccount
  local token; token=$($K -n "${3:-crossplane-system}" create token "$1" --duration=168h) || die "no token for ServiceAccount $1"
  cp "$KUBECONFIG" "$2"
  $K --kubeconfig "$2" config set-credentials "$1" --token="$token" >/dev/null
  $K --kubeconfig "$2" config set-context --current --user="$1" >/dev/null
}
sa_kubeconfig crossplane "$RUN/crossplane.kubeconfig"
sa_kubeconfig rbac-manager "$RUN/rbac-manager.kubeconfig"

# The environment is the one the chart gives its init container. A first
# run can fail right after it applied the CRDs ("no matches for kind Lock":
# not discovered yet); in a cluster the pod restarts, here it runs again.
core_init() {
  CRDS_PATH=$XP_SRC/cluster/crds WEBHOOK_CONFIGS_PATH=$XP_SRC/cluster/webhookconfigurations \
    WEBHOOK_SERVICE_NAME=crossplane-webhooks WEBHOOK_SERVICE_NAMESPACE=crossplane-system WEBHOOK_SERVICE_PORT=$WEBHOOK_PORT \
    TLS_CA_SECRET_NAME=crossplane-root-ca TLS_SERVER_SECRET_NAME=crossplane-tls-server TLS_CLIENT_SECRET_NAME=crossplane-tls-client \
    KUBECONFIG=$RUN/crossplane.kubeconfig "$CROSSPLANE_CORE" core init >>"$RUN/crossplane-init.log" 2>&1
}
for i in 1 2 3 4 5; do core_init && break; [ "$i" = 5 ] && die "crossplane core init failed: $(tail -3 "$RUN/crossplane-init.log")"; sleep 2; done
# The RBAC manager, as the chart's second Deployment (its init container
# only waits for the CRDs core init applied).
KUBECONFIG=$RUN/rbac-manager.kubeconfig bg rbac-manager "$CROSSPLANE_CORE" rbac start --provider-clusterrole=crossplane:allowed-provider-permissions
$K apply -f - >/dev/null <<Y
apiVersion: v1
kind: Service
metadata: {name: crossplane-webhooks, namespace: crossplane-system}
spec: {type: ExternalName, externalName: localhost, ports: [{port: $WEBHOOK_PORT}]}
Y
say "installing the external schemas"
# core.gardener.cloud is gardener-apiserver's (aggregated); the metal
# operator's kinds are CRDs.
$K apply --server-side -f cluster/crds/metal-operator >/dev/null
$K wait --for=condition=Established crd --all --timeout=60s >/dev/null || die "CRDs not established"

say "TLS: core's certificates from the Secrets core init made"
c=$RUN/certs
# In a cluster these Secrets are mounted into core's pod; core's runtime
# signs each package's server certificate with the same CA
# (crossplane-root-ca), as the runtime stand-in does here.
secret_files() { # SECRET DIR
  mkdir -p "$2"
  for k in tls.crt tls.key ca.crt; do
    $K -n crossplane-system get secret "$1" -o jsonpath="{.data.${k//./\\.}}" | base64 -d >"$2/$k"
  done
}
secret_files crossplane-tls-server "$c/core-server"
secret_files crossplane-tls-client "$c/core"

say "a local OCI registry on 127.0.0.1:5050 (TLS, local CA), and every package pushed to it"
# Debian's docker-registry (the CNCF distribution registry), as a landscape's
# registry or mirror. Core trusts its CA through --ca-bundle-path, the
# crossplane CLI (which pushes) through SSL_CERT_FILE.
r=$c/registry && mkdir -p "$r" "$RUN/registry"
openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=cobaltcore demo registry CA" -keyout "$r/ca.key" -out "$r/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$r/tls.key" -out "$r/tls.csr" 2>/dev/null
printf 'extendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1, DNS:localhost\n' >"$r/tls.ext"
openssl x509 -req -in "$r/tls.csr" -CA "$r/ca.crt" -CAkey "$r/ca.key" -CAcreateserial -days 7 -extfile "$r/tls.ext" -out "$r/tls.crt" 2>/dev/null
cat >"$r/config.yml" <<Y
version: 0.1
log: {level: warn}
storage: {filesystem: {rootdirectory: $RUN/registry}, delete: {enabled: true}}
http: {addr: 127.0.0.1:5050, tls: {certificate: $r/tls.crt, key: $r/tls.key}}
Y
bg registry docker-registry serve "$r/config.yml"
wait_for 30 "the local registry does not answer on https://127.0.0.1:5050 ($RUN/registry.log)" curl -fs --cacert "$r/ca.crt" https://127.0.0.1:5050/v2/
# Each package under the repository its references name, relocated by the
# ImageConfigs of local/demo/image-config.yaml: ours as
# xpkg.c5c3.io/cobaltcore/<package>:<VERSION>, provider-kubernetes as
# xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:<its version>.
push() { # XPKG REPOSITORY:TAG
  SSL_CERT_FILE=$r/ca.crt "$CROSSPLANE" xpkg push -f "$1" "127.0.0.1:5050/$2" >>"$RUN/push.log" 2>&1 ||
    die "crossplane xpkg push $1 127.0.0.1:5050/$2: $(tail -3 "$RUN/push.log")"
}
for p in "${functions[@]}" provider-cobaltcore configuration-cobaltcore; do push "$XPKG/$p.xpkg" "cobaltcore/$p:$VERSION"; done
# shellcheck source=../../tools/upstream/versions.env
pk_version=$(. tools/upstream/versions.env && echo "$PROVIDER_KUBERNETES_VERSION")
push "$XPKG/provider-kubernetes.xpkg" "crossplane-contrib/provider-kubernetes:$pk_version"

say "starting the local node (containerd, kubelet, kube-proxy), which pulls from the registry"
"$RUN/bin/imgbuild" -bin "$RUN/bin/pause" -entrypoint /pause -tag registry.k8s.io/pause:3.10 -out "$RUN/pause.tar" >/dev/null
KUBECONFIGS=$RUN CLIENT_CA=$RUN/pki/ca.crt PAUSE_TAR=$RUN/pause.tar REGISTRY=127.0.0.1:5050 REGISTRY_CA=$r/ca.crt KUBECTL=$K \
  MIRRORED=xpkg.c5c3.io local/node/start.sh >"$RUN/node-start.log" 2>&1 || die "the local node did not start: $(tail -3 "$RUN/node-start.log")"
# The node agents' images (make xpkg: images, not packages) go to the
# registry too, under the names the pool functions give them
# (xpkg.c5c3.io/cobaltcore/<agent>:<VERSION>), which the node's mirror
# configuration pulls from there.
for a in hypervisor-agent storage-agent ha-agent ovs-agent; do
  ctr --address "$NODE_DIR/containerd.sock" -n push images import "_output/images/$a.tar" >>"$RUN/push.log" 2>&1 &&
    ctr --address "$NODE_DIR/containerd.sock" -n push images push --hosts-dir "$NODE_DIR/certs.d" \
      "127.0.0.1:5050/cobaltcore/$a:$VERSION" "xpkg.c5c3.io/cobaltcore/$a:$VERSION" >>"$RUN/push.log" 2>&1 ||
    die "cannot push the image of $a to the registry: $(tail -3 "$RUN/push.log")"
done

say "starting Crossplane core v2.4.0"
# Core dials each function at its Service's cluster DNS name. In a cluster
# core is a pod and asks CoreDNS; here it is a process, in a mount
# namespace of its own whose /etc/hosts the DNS stand-in keeps with the
# Services' ClusterIPs (local/cmd/dns-standin), which kube-proxy routes
# to the functions' pods.
# It is also the pods' cluster DNS (the kubelet's clusterDNS, 10.96.0.10,
# a Service whose endpoint it is), where every name under cobaltcore.example
# (the Compositions' endpointDomains) resolves to the clouds' public Keystone
# endpoints, which the operator stand-in serves on 127.0.0.44:443: the
# provider logs in there only, whatever a control plane's clouds.yaml says.
cp /etc/hosts "$RUN/hosts"
bg dns-standin "$RUN/bin/dns-standin" -kubeconfig "$KUBECONFIG" -hosts "$RUN/hosts" \
  -dns "$NODE_IP:53" -cluster-dns 10.96.0.10 -public-domain cobaltcore.example=127.0.0.44
wait_for 30 "the DNS stand-in does not run ($RUN/dns-standin.log)" grep -q "keeping" "$RUN/dns-standin.log"
# The circuit breaker's bucket (default 100 events, 1/s) was too small for a
# hypervisor pool when it composed ~28 resources (20 of them the node agents'
# Objects, which Flux's layer Kustomization replaces since stop 74): they sent
# well over 100 watch events while they were created, and once open, core
# v2.4.0 kept the breaker open and skipped even the polls, so the pool never
# saw its agents' reports again. 1,000 at 10/s still stops a
# runaway loop (docs/installing.md: the same for a real management cluster).
KUBECONFIG=$RUN/crossplane.kubeconfig supervised crossplane unshare --mount --propagation private \
  sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$RUN/hosts" \
  "$CROSSPLANE_CORE" core start --package-runtime=Deployment --webhook-port=$WEBHOOK_PORT \
  --tls-server-certs-dir="$c/core-server" --tls-client-certs-dir="$c/core" --xpkg-cache-dir="$RUN/cache" --ca-bundle-path="$r/ca.crt" --metrics-port=18080 --health-probe-port=18081 --poll-interval=30s \
  --circuit-breaker-burst=1000 --circuit-breaker-refill-rate=10
wait_for 60 "Crossplane core is not healthy ($RUN/crossplane.log)" curl -fs http://127.0.0.1:18081/healthz
alive crossplane
alive rbac-manager

say "starting Flux v1.9.6 (source- and kustomize-controller) and the local Git server with the GitOps repository"
# The landscape's GitOps repository is examples/, committed as the demo
# installs it into a repository the local Git server (local/cmd/git-server)
# serves over HTTP. Flux applies Git as it is, so the demo's changes are
# commits, all in crossplane/ and the sources' URLs: the package versions
# make xpkg built ($VERSION) instead of the releases the examples pin, the
# relocation to the local registry (local/demo/image-config.yaml) instead of
# a mirror, provider-cobaltcore's DeploymentRuntimeConfig as
# local/demo/install changes it, and every GitRepository pointed at the
# local server. Nothing under infrastructure/ or tenants/ changes.
[ -x "$FLUX_DIR/kustomize-controller" ] && [ -x "$FLUX_DIR/source-controller" ] || die "no Flux controllers in $FLUX_DIR: run make tools"
GITOPS_URL=http://127.0.0.1:18480/cobaltcore-gitops.git
mkdir -p "$RUN/git" "$RUN/flux-storage"
git init -q --bare -b main "$RUN/git/cobaltcore-gitops.git"
cp -r examples "$RUN/gitops"
gitops_rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
pin() { # FILE: the file with the versions make xpkg built
  sed -i -e "s|\(xpkg\.c5c3\.io/cobaltcore/[a-z-]*\):v[0-9][^ ]*|\1:$VERSION|" \
    -e "s|\(crossplane-contrib/provider-kubernetes\):v[0-9][^ ]*|\1:$pk_version|" "$1"
}
cp local/demo/image-config.yaml "$RUN/gitops/crossplane/image-config.yaml"
# The demo's one change of the install layer (local/demo/install says why).
$K kustomize --load-restrictor=LoadRestrictionsNone local/demo/install >"$RUN/gitops/crossplane/provider-cobaltcore.yaml"
for f in provider-kubernetes provider-cobaltcore configuration; do pin "$RUN/gitops/crossplane/$f.yaml"; done
grep -rl 'url: https://git.example.org/platform/cobaltcore-gitops.git' "$RUN/gitops" |
  xargs sed -i "s|url: https://git.example.org/platform/cobaltcore-gitops.git|url: $GITOPS_URL|"
gitops() { git -C "$RUN/gitops" -c user.name=cobaltcore-demo -c user.email=demo@cobaltcore.invalid "$@"; }
gitops init -q -b main && gitops add -A &&
  gitops commit -qm "examples/ at $gitops_rev as the local demo installs it: packages $VERSION from 127.0.0.1:5050, sources at $GITOPS_URL" &&
  gitops remote add origin "$RUN/git/cobaltcore-gitops.git" && gitops push -q origin main || die "cannot commit the GitOps repository in $RUN/gitops"
bg git-server "$RUN/bin/git-server" -root "$RUN/git" -listen 127.0.0.1:18480
# Flux's install (local/demo/flux-install.yaml: what `flux install` makes
# for these two controllers), its CRDs from the controllers' modules, and
# each controller as its own ServiceAccount. kustomize-controller is locked
# down as Flux's multi-tenancy guidance does: no cross-namespace references,
# and a Kustomization naming no ServiceAccount impersonates its namespace's
# default one. --concurrent: each region's infrastructure Kustomization
# holds a worker while it waits for its pools, and the dozen clusters'
# layers (a storage pool's Ceph waits for its layer) queued behind the
# default 4 (docs/installing.md).
$K apply --server-side -f "$FLUX_DIR/crds" >/dev/null
$K apply -f local/demo/flux-install.yaml >/dev/null
sa_kubeconfig source-controller "$RUN/source-controller.kubeconfig" flux-system
sa_kubeconfig kustomize-controller "$RUN/kustomize-controller.kubeconfig" flux-system
KUBECONFIG=$RUN/source-controller.kubeconfig bg source-controller "$FLUX_DIR/source-controller" --enable-leader-election=false \
  --storage-path="$RUN/flux-storage" --storage-addr=127.0.0.1:18491 --storage-adv-addr=127.0.0.1:18491 \
  --metrics-addr=127.0.0.1:18492 --health-addr=127.0.0.1:18493
KUBECONFIG=$RUN/kustomize-controller.kubeconfig bg kustomize-controller "$FLUX_DIR/kustomize-controller" --enable-leader-election=false \
  --no-cross-namespace-refs=true --default-service-account=default --no-remote-bases=true --requeue-dependency=5s --concurrent=16 \
  --metrics-addr=127.0.0.1:18494 --health-addr=127.0.0.1:18495
wait_for 60 "the local Git server does not serve the repository ($RUN/git-server.log)" git ls-remote "$GITOPS_URL" main
wait_for 60 "source-controller is not healthy ($RUN/source-controller.log)" curl -fs http://127.0.0.1:18493/healthz
wait_for 60 "kustomize-controller is not healthy ($RUN/kustomize-controller.log)" curl -fs http://127.0.0.1:18495/healthz

say "installing CobaltCore as a landscape does: Flux applies the install layer, core installs the Configuration from the registry"
# The relocation to the local registry first, by hand (it is in Git too):
# core must not look for a package before it knows the mirror. Then Flux's
# source and its Kustomization crossplane: the install layer as a landscape
# applies it, the two providers with their DeploymentRuntimeConfigs (and
# provider-cobaltcore's RBAC), the policies, the Configuration. Core
# resolves the Configuration's dependencies: it checks the providers'
# versions against its constraints and installs the four functions, each at
# the newest version in the registry within the constraint.
$K apply -f local/demo/image-config.yaml >/dev/null
$K apply -f "$RUN/gitops/clusters/management/source.yaml" -f "$RUN/gitops/clusters/management/crossplane.yaml" >/dev/null

# Core's Deployment runtime creates each package's ServiceAccount, TLS
# Secrets, Service and Deployment, as in a cluster; kube-controller-manager,
# the scheduler and the node's kubelet run its pod from the image core
# resolved, pulled from the registry. The RBAC manager (a process here, the
# chart's second Deployment in a cluster) grants core each XRD's and
# provider's kinds and each provider revision its system role.
wait_for 180 "the RBAC manager did not grant core the XRDs' and the providers' kinds ($RUN/rbac-manager.log)" \
  sh -c "[ \"\$($K auth can-i create xopenstackclusters.c5c3.io --as=system:serviceaccount:crossplane-system:crossplane)\" = yes ] &&
    [ \"\$($K auth can-i create shootkubeconfigs.gardener.provider.c5c3.io --as=system:serviceaccount:crossplane-system:crossplane)\" = yes ] &&
    [ \"\$($K auth can-i create objects.kubernetes.crossplane.io --as=system:serviceaccount:crossplane-system:crossplane)\" = yes ]"
for p in "${functions[@]/#/function/cobaltcore-}" provider/cobaltcore-provider-cobaltcore provider/crossplane-contrib-provider-kubernetes configuration/configuration-cobaltcore; do
  $K wait --for=condition=Healthy "$p" --timeout=180s >/dev/null 2>&1 ||
    die "package $p is not healthy: $($K get "$p" -o jsonpath='{.status.conditions}' 2>&1)"
done
wait_for 60 "the provider is not healthy ($K -n crossplane-system logs deploy/cobaltcore-provider-cobaltcore)" curl -fs http://127.0.0.1:18091/healthz
# wait_kustomization BOUND NAMESPACE/NAME: until Flux says the Kustomization is
# Ready (applied, and its health checks pass); fail naming its condition.
wait_kustomization() {
  local ns=${2%/*} n=${2#*/}
  $K -n "$ns" wait --for=condition=Ready "kustomizations.kustomize.toolkit.fluxcd.io/$n" --timeout="$1s" >/dev/null 2>&1 ||
    die "Flux's Kustomization $2 is not Ready after $1s: $($K -n "$ns" get kustomizations.kustomize.toolkit.fluxcd.io "$n" -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}' 2>&1 | cut -c1-600)"
}
wait_kustomization 120 flux-system/crossplane

say "starting the stand-ins"
OS_RUN=${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}
CEPH_RUN=${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}
curl -fs --cacert "$OS_RUN/tls/ca.crt" https://127.0.0.1:5000/v3 >/dev/null || die "the local OpenStack does not answer on https://127.0.0.1:5000: run make openstack-up"
timeout 20 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 health >/dev/null 2>&1 || die "the local Ceph does not answer: run make ceph-up"
# A demo that was killed rather than stopped (down.sh deletes the clouds
# first) leaves its tenants' Ceph pools and clients behind; the single
# memstore OSD has room for only so many placement groups, so they go.
# Only names of the example clouds' composites (<claim>-<5 chars>-...).
demo_names='^(client\.openstack-)?(finance-prod|internal-prod|team-a-prod|team-a-staging|team-b-staging|team-c-big|team-c-us|team-b-on-fin)-[a-z0-9]{5}-'
for p in $(timeout 30 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 osd pool ls 2>/dev/null | grep -E "$demo_names"); do
  timeout 30 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 osd pool delete "$p" "$p" --yes-i-really-really-mean-it >/dev/null 2>&1
done
for e in $(timeout 30 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 auth ls 2>/dev/null | grep -E "$demo_names"); do
  timeout 30 ceph -c "$CEPH_RUN/ceph.conf" --connect-timeout 10 auth del "$e" >/dev/null 2>&1
done
# The stretched pool's own Ceph, started at the beginning.
rc=0 && wait "$stretched" || rc=$?
stretched=
[ "$rc" -eq 0 ] || die "the stretched pool's local Ceph did not start: $(tail -5 "$RUN/ceph-stretched.log")"
# It also runs the pools' node agents where Flux applied each pool's layer
# (a hypervisor agent per node, a storage agent per pool): the images their
# DaemonSets name, pulled from the registry by the node's containerd.
mkdir -p "$RUN/agents"
# -compute-regions: the real ControlPlane deploys no Nova, Cinder or Neutron
# yet; here eu-de-1 stands in for a landscape whose operator deploys them
# (every example cloud), us-east-1 for one that does not (e2e's team-c-us).
# -register-compute: each node a cloud's nova-compute DaemonSet selects
# (the c5c3-operator's part, deployed with the kubeconfig the cloud was
# given for the pool) becomes a compute host of the local Nova (a row in its
# database, no nova-compute), so that the nodes a pool gives a cloud can be
# its aggregate's hosts; -deregister-compute removes it when the pool takes
# the node back.
bg operator-standin nice -n 10 "$RUN/bin/operator-standin" -shoot-clusters "$RUN/shoots" -clouds-yaml "$OS_RUN/clouds.yaml" -compute-regions eu-de-1 \
  -register-compute "/usr/bin/python3 $PWD/local/openstack/fake-services.py --compute" -deregister-compute "/usr/bin/python3 $PWD/local/openstack/fake-services.py --delete-compute" \
  -ceph-conf "$CEPH_RUN/ceph.conf" -ceph-key "$CEPH_RUN/admin.key" \
  -stretched-ceph-conf "$CEPH_STRETCHED_RUN/ceph.conf" -stretched-ceph-key "$CEPH_STRETCHED_RUN/admin.key" -stretched-ceph-mon a=127.0.0.1:6901,b=127.0.0.1:6902,arbiter=127.0.0.1:6903 \
  -containerd "$NODE_DIR/containerd.sock" -containerd-hosts "$NODE_DIR/certs.d" -agent-logs "$RUN/agents" \
  -ovn-nb ssl:127.0.0.1:6643 -ovn-sb ssl:127.0.0.1:6644 -ovn-ca-cert "$OS_RUN/tls/ca.crt" -ovn-ca-key "$OS_RUN/tls/ca.key" \
  -public-endpoints 127.0.0.44:443 -public-domain cobaltcore.example -public-ca-cert "$OS_RUN/tls/ca.crt" -public-ca-key "$OS_RUN/tls/ca.key"
pools=(examples/infrastructure/*/pools/hypervisor/*.yaml examples/infrastructure/*/pools/storage/*.yaml)
"$RUN/bin/metal-standin" -kubeconfig "$KUBECONFIG" "${pools[@]}" >"$RUN/metal-standin.log" 2>&1 || die "metal stand-in: $(cat "$RUN/metal-standin.log")"

say "landscape: the garden's project, CloudProfile, extensions and Seeds; the garden and metal cluster ProviderConfigs"
# What Gardener's operator has set up in a landscape's garden, applied to the
# real gardener-apiserver (which admits a Shoot only within them).
# Retried: Gardener's admission plugins read what was just applied
# (extensions a Seed uses) from informers that follow within a second.
wait_for 30 "the garden's objects of local/garden are refused" $K apply -f local/garden/project.yaml -f local/garden/cloudprofile.yaml \
  -f local/garden/controllerregistrations.yaml -f local/garden/seeds.yaml
# Here the garden is the management cluster itself (its aggregated API).
$K -n crossplane-system create secret generic garden-kubeconfig --from-file=kubeconfig="$KUBECONFIG" >/dev/null
$K -n crossplane-system create secret generic ironcore-metal-kubeconfig --from-file=kubeconfig="$KUBECONFIG" >/dev/null
$K apply -f local/demo/providerconfigs.yaml >/dev/null

# wait_claims BOUND KINDS: poll until every claim of KINDS (comma-separated)
# is Ready, saying every 15s how many are; fail after BOUND seconds naming
# each claim that is not and its conditions, or at once when a process of
# the plane has exited.
wait_claims() {
  local bound=$1 kinds=$2 t0 ready total last=0 f
  t0=$(date +%s)
  while :; do
    for f in "$RUN"/*.pid; do alive "$(basename "$f" .pid)"; done
    for f in "$NODE_DIR"/*.pid; do kill -0 "$(cat "$f")" 2>/dev/null || die "the node's $(basename "$f" .pid) exited ($NODE_DIR/logs)"; done
    read -r ready total < <($K get "$kinds" -A -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
      awk '{n++; if ($1 == "True") r++} END {print r + 0, n + 0}')
    [ "$total" -gt 0 ] && [ "$ready" = "$total" ] && return 0
    if [ $(( $(date +%s) - t0 )) -ge "$bound" ]; then
      $K get "$kinds" -A -o jsonpath='{range .items[*]}{.kind} {.metadata.namespace}/{.metadata.name}: {range .status.conditions[?(@.status!="True")]}{.type}={.reason}: {.message}; {end}{"\n"}{end}' |
        grep ': [A-Z]' >&2 || true
      # And what each of them waits on, down to the composed resource and
      # its own condition: the claim's conditions name only the first.
      $K get "$kinds" -A -o jsonpath='{range .items[*]}{.kind} {.apiVersion} {.metadata.namespace} {.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
        while read -r kind version ns name st; do
          [ "$st" = True ] && continue
          kind=$(tr '[:upper:]' '[:lower:]' <<<"$kind").${version%/*}
          printf '=== crossplane resource trace %s %s -n %s -o wide\n' "$kind" "$name" "$ns" >&2
          timeout 60 "$CROSSPLANE" resource trace "$kind" "$name" -n "$ns" -o wide 2>&1 | cut -c1-400 >&2 || true
        done
      die "$((total - ready)) of $total claims ($kinds) are not Ready after ${bound}s (their conditions above)"
    fi
    if [ $(( $(date +%s) - last )) -ge 15 ]; then say "  $ready of $total claims Ready"; last=$(date +%s); fi
    sleep 2
  done
}

say "Flux applies the control-plane clusters and pools, each tenant's onboarding, then the tenants' clouds as the tenants"
# The platform's Kustomizations of clusters/management, in their dependsOn
# order: infrastructure-<region>-control-plane (the control-plane cluster)
# and infrastructure-<region> (hypervisor and storage pools) side by side,
# each Ready when its claims are; each tenant-<team> waits for its region's
# control-plane cluster, then applies the tenant's namespace, access and
# Flux objects; the tenant's own Kustomization applies its clouds as the
# tenant, which make their control planes while the pools are still being
# made. (The install layer, crossplane, is Ready above.)
applied=$(date +%s)
$K apply -f "$RUN/gitops/clusters/management/infrastructure.yaml" -f "$RUN/gitops/clusters/management/tenants.yaml" >/dev/null
wait_claims 480 controlplaneclusters,hypervisorclusters,storageclusters
infra_ready=$(( $(date +%s) - applied ))
say "every pool and control-plane cluster is Ready, ${infra_ready}s after Flux was given the Kustomizations"
for k in infrastructure-namespace infrastructure-{eu-de-1,us-east-1}{-control-plane,}; do wait_kustomization 120 "flux-system/$k"; done
wait_claims 900 openstackclusters
all_ready=$(( $(date +%s) - applied ))
say "every claim is Ready, ${all_ready}s after Flux was given the Kustomizations"
for t in team-a team-b internal finance; do wait_kustomization 120 "flux-system/tenant-$t"; wait_kustomization 120 "$t/openstack-clusters"; done
printf 'infrastructure %s\nall %s\napplied_at %s\n' "$infra_ready" "$all_ready" "$applied" >"$RUN/timings"

say "how long each claim took, from Flux applying it to Ready"
local/demo/convergence.sh "$applied"
local/demo/show.sh
echo "KUBECONFIG=$KUBECONFIG   stop with: make demo-down"
exit
}
