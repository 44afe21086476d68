#!/usr/bin/env bash
# Starts a local management plane that runs the product on real Crossplane
# core, with no outside cluster, and applies the example GitOps tree:
#
#   etcd + kube-apiserver (internal/cmd/apiserver) and kube-controller-manager
#   (garbage collection), the real gardener-apiserver v1.138.0 aggregated
#   into it as in a garden cluster (Shoots, CloudProfiles, Projects: the
#   garden's objects of cluster/garden applied as Gardener's operator
#   would), Crossplane core v2.4.0
#   (--package-runtime=External; initialized by `crossplane core init` as
#   its chart's init container does: CRDs, TLS secrets and the usage
#   webhook, which the API server reaches through an ExternalName Service), our
#   packages from `make xpkg` installed from core's package cache with
#   packagePullPolicy Never, the four functions as local processes serving
#   core over mTLS, our provider and provider-kubernetes v1.0.0 (pinned,
#   built by cluster/tools/build.sh) as local processes, the local OpenStack
#   and Ceph (make openstack-up ceph-up, started before this script), and
#   three stand-ins, each saying in its doc what it does not simulate:
#     internal/cmd/gardener-standin  gardenlet's part: Shoots become ready,
#                                    each with a local kube-apiserver of its
#                                    own, whose CAs and address it publishes
#                                    so that Gardener's shoots/adminkubeconfig
#                                    issues kubeconfigs for it;
#     internal/cmd/operator-standin  what the operators inside Shoots report:
#                                    the c5c3-operator (ControlPlane Ready, an
#                                    admin clouds.yaml for the local
#                                    Keystone, the local OVN as the cloud's
#                                    ovn-databases, ssl: with a client
#                                    certificate per cloud), Rook (CephCluster Ready with
#                                    the local Ceph's health, its monitors and
#                                    admin key), the Ceph arbiter, and a
#                                    kubelet for one node per pool: the
#                                    hypervisor agent (libvirt test driver)
#                                    and the storage agent (local Ceph), with
#                                    the node's Hypervisor the operator makes,
#                                    and the node's chassis in the local OVN
#                                    Southbound in its pool's zone;
#     internal/cmd/metal-standin     the metal-operator Servers of the pools.
#
# It then applies examples/infrastructure (control-plane clusters,
# hypervisor and storage pools), waits until every pool claim is Ready, then
# examples/tenants and waits until every OpenStackCluster is Ready, and
# prints what exists. Every wait is bounded; a failure names the component
# or claim and its conditions. cluster/demo/down.sh stops everything by PID.
#
# Usage: cluster/demo/up.sh   (after `make xpkg openstack-up ceph-up`; run dir $COBALTCORE_DEMO, default /tmp/cobaltcore-demo)
set -euo pipefail
# One compound command: bash reads all of it before running any, so editing
# this file while it runs cannot derail it.
{
cd "$(dirname "$0")/../.."
ROOT=$PWD
RUN=${COBALTCORE_DEMO:-/tmp/cobaltcore-demo}
XPKG=${XPKG:-_output/xpkg}
eval "$(cluster/tools/build.sh --env | sed 's/^/export /')"
K=$KUBECTL
start=$(date +%s)
say() { printf '[demo %4ss] %s\n' $(( $(date +%s) - start )) "$*"; }
die() { say "FAILED: $*"; echo "logs: $RUN/*.log; stop with cluster/demo/down.sh" >&2; exit 1; }

# wait_for SECONDS WHAT COMMAND...: retry until COMMAND succeeds.
wait_for() {
  local bound=$1 what=$2; shift 2
  for _ in $(seq "$bound"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  die "$what (waited ${bound}s)"
}

functions=(function-controlplane-cluster function-hypervisor-cluster function-storage-cluster function-openstack-cluster)
[ -e "$RUN/apiserver.pid" ] && die "a demo already runs in $RUN: stop it with cluster/demo/down.sh"
for p in "${functions[@]}" provider-cobaltcore configuration-cobaltcore; do
  [ -f "$XPKG/$p.xpkg" ] || die "no package $XPKG/$p.xpkg: run make xpkg"
done
rm -rf "$RUN" && mkdir -p "$RUN/bin" "$RUN/cache" "$RUN/certs"

say "building the local binaries"
for c in apiserver gardener-standin metal-standin operator-standin; do go build -o "$RUN/bin/$c" "./internal/cmd/$c"; done
tags=""; [ -f /usr/include/rados/librados.h ] && tags="-tags ceph,pacific"
# shellcheck disable=SC2086 # tags is a word list
go build $tags -o "$RUN/bin/provider" ./provider/cmd/provider
cp _output/package-build/bin/function-* "$RUN/bin/"

# bg NAME COMMAND...: start a process, its log in RUN/NAME.log, its PID in RUN/NAME.pid.
bg() { local n=$1; shift; "$@" >"$RUN/$n.log" 2>&1 & echo $! >"$RUN/$n.pid"; }
alive() { kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null || die "$1 exited: $(tail -3 "$RUN/$1.log")"; }

say "starting etcd, kube-apiserver and gardener-apiserver"
[ -x "${GARDENER_APISERVER:-}" ] || die "no gardener-apiserver at ${GARDENER_APISERVER:-}: run make tools"
bg apiserver "$RUN/bin/apiserver" -dir "$RUN" -garden
wait_for 120 "kube-apiserver with gardener-apiserver did not start ($RUN/apiserver.log, $RUN/garden/gardener-apiserver.log)" test -s "$RUN/kubeconfig"
export KUBECONFIG=$RUN/kubeconfig
[ -x "$KUBE_CONTROLLER_MANAGER" ] || die "no kube-controller-manager at $KUBE_CONTROLLER_MANAGER: run make tools"
# Only the controllers the plane needs: owner-reference garbage collection
# (composed resources go with their composite), namespace deletion, and
# the aggregation of ClusterRoles (core's role is aggregated, below).
bg kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
  --authorization-kubeconfig="$KUBECONFIG" --controllers=garbagecollector,namespace,clusterrole-aggregation --leader-elect=false \
  --bind-address=127.0.0.1 --secure-port=18257

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
# core's ClusterRole; examples/clusters/management/crossplane-rbac.yaml adds
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
$K apply -f "$RUN/crossplane-rbac.yaml" -f examples/clusters/management/crossplane-rbac.yaml -f cluster/demo/provider-kubernetes-rbac.yaml >/dev/null
# The aggregation controller fills core's role from the labelled ones.
wait_for 60 "core's aggregated ClusterRole was not filled (kube-controller-manager's clusterrole-aggregation)" \
  sh -c "[ \"\$($K auth can-i get secrets -n crossplane-system --as=system:serviceaccount:crossplane-system:crossplane)\" = yes ]"
sa_kubeconfig() { # SERVICEACCOUNT FILE: the admin's kubeconfig, logging in as the ServiceAccount
  local token; token=$($K -n crossplane-system create token "$1" --duration=168h) || die "no token for ServiceAccount $1"
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

say "TLS: core's certificates from the Secrets core init made; the functions' server certificates signed by core's CA"
c=$RUN/certs
# In a cluster these Secrets are mounted into core's pod; core signs each
# function's server certificate with the same CA (crossplane-root-ca).
secret_files() { # SECRET DIR
  mkdir -p "$2"
  for k in tls.crt tls.key ca.crt; do
    $K -n crossplane-system get secret "$1" -o jsonpath="{.data.${k//./\\.}}" | base64 -d >"$2/$k"
  done
}
secret_files crossplane-tls-server "$c/core-server"
secret_files crossplane-tls-client "$c/core"
$K -n crossplane-system get secret crossplane-root-ca -o jsonpath='{.data.tls\.crt}' | base64 -d >"$c/ca.crt"
$K -n crossplane-system get secret crossplane-root-ca -o jsonpath='{.data.tls\.key}' | base64 -d >"$c/ca.key"
cert() { # DIR CN EXTENSIONS
  mkdir -p "$c/$1" && printf '%s\n' "$3" >"$c/$1.ext"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$c/$1/tls.key" -out "$c/$1.csr" 2>/dev/null
  openssl x509 -req -in "$c/$1.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial -days 7 -extfile "$c/$1.ext" -out "$c/$1/tls.crt" 2>/dev/null
  cp "$c/ca.crt" "$c/$1/"
}
cert functions functions "$(printf 'extendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1')"
# provider-kubernetes serves its conversion webhook on :9443, which the API
# server calls as the Service provider-kubernetes.crossplane-system.svc.
cert provider-kubernetes provider-kubernetes "$(printf 'extendedKeyUsage = serverAuth\nsubjectAltName = DNS:provider-kubernetes.crossplane-system.svc, IP:127.0.0.1')"
# provider-kubernetes runs as a plain local process, not as a package, so
# its CRDs are applied here as core's package manager would install them:
# the Object kinds convert between v1alpha1 and v1alpha2 through the
# provider's webhook (:9443), reached like core's through an ExternalName
# Service, its server certificate signed by the CA in the CRDs' caBundle.
[ -x "$PROVIDER_KUBERNETES" ] || die "no provider-kubernetes at $PROVIDER_KUBERNETES: run make tools"
ca_bundle=$(base64 -w0 "$c/ca.crt")
for f in "$PROVIDER_KUBERNETES_CRDS"/*.yaml; do
  sed -e 's|^          path: /convert$|          name: provider-kubernetes\n          namespace: crossplane-system\n          port: 9443\n          path: /convert|' \
    -e "s|^      clientConfig:\$|      clientConfig:\n        caBundle: $ca_bundle|" "$f"
  echo ---
done >"$RUN/provider-kubernetes-crds.yaml"
$K apply -f - >/dev/null <<Y
apiVersion: v1
kind: Service
metadata: {name: provider-kubernetes, namespace: crossplane-system}
spec: {type: ExternalName, externalName: localhost, ports: [{port: 9443}]}
Y
$K apply --server-side -f "$RUN/provider-kubernetes-crds.yaml" >/dev/null
$K wait --for=condition=Established crd --all --timeout=60s >/dev/null || die "CRDs not established"
$K -n crossplane-system create secret generic functions-tls-server --from-file="$c/functions/tls.crt" --from-file="$c/functions/tls.key" --from-file="$c/ca.crt" >/dev/null

say "seeding Crossplane's package cache from $XPKG"
# Core finds a package in its cache by a digest reference (no registry is
# asked) under a name derived from the reference (crossplane-runtime's
# xpkg.FriendlyID); the file is the package's gzipped package.yaml.
friendly() { # SOURCE DIGEST
  local id; id=$(printf '%s-%s' "${1:0:50}" "${2:0:12}" | tr -c 'a-z0-9\n' '-' | cut -c1-63 | sed 's/^-*//; s/-*$//')
  echo "$id.gz"
}
declare -A ref
for f in "$XPKG"/*.xpkg; do
  n=$(basename "$f" .xpkg); d=sha256:$(sha256sum "$f" | cut -d' ' -f1)
  ref[$n]=xpkg.c5c3.io/cobaltcore/$n@$d
  "$CROSSPLANE" xpkg extract --from-xpkg "$f" -o "$RUN/cache/$(friendly "xpkg.c5c3.io/cobaltcore/$n" "$d")" >/dev/null
done

say "starting Crossplane core v2.4.0"
# The circuit breaker's bucket (default 100 events, 1/s) is too small for a
# hypervisor pool: its ~25 composed resources (17 of them the node agents'
# Objects) send well over 100 watch events while they are created, and once
# open, core v2.4.0 kept the breaker open and skipped even the polls, so the
# pool never saw its agents' reports again. 1,000 at 10/s still stops a
# runaway loop (docs/installing.md: the same for a real management cluster).
KUBECONFIG=$RUN/crossplane.kubeconfig bg crossplane "$CROSSPLANE_CORE" core start --package-runtime=External --webhook-port=$WEBHOOK_PORT \
  --tls-server-certs-dir="$c/core-server" --tls-client-certs-dir="$c/core" --xpkg-cache-dir="$RUN/cache" --metrics-port=18080 --health-probe-port=18081 --poll-interval=30s \
  --circuit-breaker-burst=1000 --circuit-breaker-refill-rate=10
wait_for 60 "Crossplane core is not healthy ($RUN/crossplane.log)" curl -fs http://127.0.0.1:18081/healthz
alive crossplane
alive rbac-manager

say "installing the functions, the provider and the Configuration from the cache"
install_pkg() { # KIND NAME PACKAGE [EXTRA-SPEC-LINE]
  printf 'apiVersion: pkg.crossplane.io/v1\nkind: %s\nmetadata:\n  name: %s\nspec:\n  package: %s\n  packagePullPolicy: Never\n%s\n' \
    "$1" "$2" "${ref[$3]}" "${4:-}" | $K apply -f - >/dev/null
}
# A Function gets the name core gives it when it installs it as a
# dependency of the Configuration (its repository, xpkg.c5c3.io/cobaltcore/
# function-x, as a DNS label): the Compositions call it by that name.
installed() { echo "cobaltcore-$1"; }
# External runtime: core deploys nothing, so the revision's status says
# where the function listens and that its runtime is healthy.
external() { # KIND-REVISION NAME [ENDPOINT]
  local rev
  wait_for 60 "no $1 for package $2" sh -c "$K get $1 -l pkg.crossplane.io/package=$2 -o name | grep -q ."
  rev=$($K get "$1" -l "pkg.crossplane.io/package=$2" -o jsonpath='{.items[0].metadata.name}')
  local ep=""; [ -n "${3:-}" ] && ep="\"endpoint\":\"dns:///$3\","
  $K patch "$1" "$rev" --subresource=status --type=merge -p "{\"status\":{$ep\"tlsServerSecretName\":\"functions-tls-server\",
    \"conditions\":[{\"type\":\"RuntimeHealthy\",\"status\":\"True\",\"reason\":\"ExternalRuntime\",\"message\":\"runs as a local process (cluster/demo)\",\"lastTransitionTime\":\"$(date -u +%FT%TZ)\"}]}}" >/dev/null
}
port=9501
for fn in "${functions[@]}"; do
  install_pkg Function "$(installed "$fn")" "$fn"
  external functionrevision "$(installed "$fn")" "127.0.0.1:$port"
  TLS_SERVER_CERTS_DIR=$c/functions bg "$fn" "$RUN/bin/$fn" --address="127.0.0.1:$port" --metrics-address=
  port=$((port + 1))
done
install_pkg Provider provider-cobaltcore provider-cobaltcore
external providerrevision provider-cobaltcore
install_pkg Configuration configuration-cobaltcore configuration-cobaltcore "  skipDependencyResolution: true"
for p in "${functions[@]/#/function/cobaltcore-}" provider/provider-cobaltcore configuration/configuration-cobaltcore; do
  $K wait --for=condition=Healthy "$p" --timeout=120s >/dev/null 2>&1 ||
    die "package $p is not healthy: $($K get "$p" -o jsonpath='{.status.conditions}' 2>&1)"
done
for fn in "${functions[@]}"; do alive "$fn"; done
# The RBAC manager has done its part once core may manage every XRD's and
# the provider's kinds; it stops here, because provider-kubernetes (started
# next) binds the same metrics port, :8080, and neither has a flag to move
# it (in a cluster each is its own pod). The roles it made stay.
wait_for 60 "the RBAC manager did not grant core the XRDs' and the provider's kinds ($RUN/rbac-manager.log)" \
  sh -c "[ \"\$($K auth can-i create xopenstackclusters.crossplane.c5c3.io --as=system:serviceaccount:crossplane-system:crossplane)\" = yes ] &&
    [ \"\$($K auth can-i create shootkubeconfigs.gardener.provider.c5c3.io --as=system:serviceaccount:crossplane-system:crossplane)\" = yes ]"
kill "$(cat "$RUN/rbac-manager.pid")" && rm "$RUN/rbac-manager.pid"

say "starting the providers and the stand-ins"
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
# The RBAC of examples/clusters/management/provider-cobaltcore.yaml (its
# Provider and DeploymentRuntimeConfig stand for the process started here)
# and the NetworkPolicies a landscape applies (accepted by the API server;
# nothing enforces them without a CNI).
$K apply -f <(awk 'BEGIN { RS = "---\n" } /\nkind: ClusterRole(Binding)?\n/ { printf "---\n%s", $0 }' examples/clusters/management/provider-cobaltcore.yaml) >/dev/null
$K apply -f examples/clusters/management/network-policies.yaml >/dev/null
# Metrics over HTTPS to callers allowed to get /metrics, as shipped.
bg provider "$RUN/bin/provider" -kubeconfig "$KUBECONFIG" -metrics-bind-address 127.0.0.1:18090 -health-probe-bind-address 127.0.0.1:18091 -poll 30s
wait_for 60 "the provider is not healthy ($RUN/provider.log)" curl -fs http://127.0.0.1:18091/healthz
# provider-kubernetes runs with the arguments of the DeploymentRuntimeConfig
# a landscape applies (examples/clusters/management/provider-kubernetes.yaml:
# --sanitize-secrets, --enable-watches, --poll=5m), applied here and read
# back; its Provider is not applied, as the process stands in for it.
$K apply -f <(sed '/^---$/,$d' examples/clusters/management/provider-kubernetes.yaml) >/dev/null
read -ra pk_args <<<"$($K get deploymentruntimeconfig provider-kubernetes -o jsonpath='{.spec.deploymentTemplate.spec.template.spec.containers[0].args[*]}')"
[[ " ${pk_args[*]} " == *" --sanitize-secrets "* ]] || die "the DeploymentRuntimeConfig of provider-kubernetes lacks --sanitize-secrets: ${pk_args[*]}"
TLS_SERVER_CERTS_DIR=$c/provider-kubernetes bg provider-kubernetes "$PROVIDER_KUBERNETES" "${pk_args[@]}"
mkdir -p "$RUN/shoots"
# The stand-ins run at a lower CPU priority (nice 10, inherited by the
# Shoots' kube-apiservers and the node agents they start): in a landscape
# those clusters and nodes are other machines, and on 2 cores their dozen API
# servers starved the management plane and the local OpenStack (Keystone
# answered in 7-38 s and the provider's calls timed out).
bg gardener-standin nice -n 10 "$RUN/bin/gardener-standin" -kubeconfig "$KUBECONFIG" -shoot-clusters "$RUN/shoots" \
  -shoot-crds cluster/crds/rook -shoot-crds cluster/crds/c5c3 -shoot-crds cluster/crds/arbiter -shoot-crds cluster/crds/hypervisor-operator \
  -shoot-namespaces rook-ceph,arbiter-operator
wait_for 60 "the Gardener stand-in does not run ($RUN/gardener-standin.log)" grep -q "watching the Shoots" "$RUN/gardener-standin.log"
# It also runs one node's hypervisor and storage agents per pool (the binaries
# of their images, from make xpkg) where the pool functions placed them.
mkdir -p "$RUN/agents"
# -compute-regions: the real ControlPlane deploys no Nova, Cinder or Neutron
# yet; here eu-de-1 stands in for a landscape whose operator deploys them
# (every example cloud), us-east-1 for one that does not (e2e's team-c-us).
bg operator-standin nice -n 10 "$RUN/bin/operator-standin" -shoot-clusters "$RUN/shoots" -clouds-yaml "$OS_RUN/clouds.yaml" -compute-regions eu-de-1 \
  -ceph-conf "$CEPH_RUN/ceph.conf" -ceph-key "$CEPH_RUN/admin.key" -agents-bin _output/package-build/bin -agent-logs "$RUN/agents" \
  -ovn-nb ssl:127.0.0.1:6643 -ovn-sb ssl:127.0.0.1:6644 -ovn-ca-cert "$OS_RUN/tls/ca.crt" -ovn-ca-key "$OS_RUN/tls/ca.key"
alive provider-kubernetes
pools=(examples/infrastructure/*/hypervisor-pools/*.yaml examples/infrastructure/*/storage-pools/*.yaml)
"$RUN/bin/metal-standin" -kubeconfig "$KUBECONFIG" "${pools[@]}" >"$RUN/metal-standin.log" 2>&1 || die "metal stand-in: $(cat "$RUN/metal-standin.log")"

say "landscape: the garden's project, CloudProfile, extensions and Seeds; the garden and metal cluster ProviderConfigs"
# What Gardener's operator has set up in a landscape's garden, applied to the
# real gardener-apiserver (which admits a Shoot only within them).
# Retried: Gardener's admission plugins read what was just applied
# (extensions a Seed uses) from informers that follow within a second.
wait_for 30 "the garden's objects of cluster/garden are refused" $K apply -f cluster/garden/project.yaml -f cluster/garden/cloudprofile.yaml \
  -f cluster/garden/controllerregistrations.yaml -f cluster/garden/seeds.yaml
# Here the garden is the management cluster itself (its aggregated API).
$K -n crossplane-system create secret generic garden-kubeconfig --from-file=kubeconfig="$KUBECONFIG" >/dev/null
$K -n crossplane-system create secret generic ironcore-metal-kubeconfig --from-file=kubeconfig="$KUBECONFIG" >/dev/null
$K apply -f cluster/demo/providerconfigs.yaml >/dev/null
# The policy a landscape applies before any claim: only core (its chart's
# ServiceAccount, the policy's default) may set a composite's claim labels.
$K apply -f examples/clusters/management/claim-labels-policy.yaml >/dev/null

# wait_claims BOUND KINDS: poll until every claim of KINDS (comma-separated)
# is Ready, saying every 15s how many are; fail after BOUND seconds naming
# each claim that is not and its conditions, or at once when a process of
# the plane has exited.
wait_claims() {
  local bound=$1 kinds=$2 t0 ready total last=0 f
  t0=$(date +%s)
  while :; do
    for f in "$RUN"/*.pid; do alive "$(basename "$f" .pid)"; done
    read -r ready total < <($K get "$kinds" -A -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
      awk '{n++; if ($1 == "True") r++} END {print r + 0, n + 0}')
    [ "$total" -gt 0 ] && [ "$ready" = "$total" ] && return 0
    if [ $(( $(date +%s) - t0 )) -ge "$bound" ]; then
      $K get "$kinds" -A -o jsonpath='{range .items[*]}{.kind} {.metadata.namespace}/{.metadata.name}: {range .status.conditions[?(@.status!="True")]}{.type}={.reason}: {.message}; {end}{"\n"}{end}' |
        grep ': [A-Z]' >&2 || true
      die "$((total - ready)) of $total claims ($kinds) are not Ready after ${bound}s (their conditions above)"
    fi
    if [ $(( $(date +%s) - last )) -ge 15 ]; then say "  $ready of $total claims Ready"; last=$(date +%s); fi
    sleep 2
  done
}

say "applying examples/infrastructure: control-plane clusters, hypervisor and storage pools"
applied=$(date +%s)
$K apply -f examples/infrastructure/namespace.yaml -f examples/infrastructure/tenant-role.yaml >/dev/null
cps=(examples/infrastructure/*/control-plane/*.yaml)
hvs=(examples/infrastructure/*/hypervisor-pools/*.yaml)
sts=(examples/infrastructure/*/storage-pools/*.yaml)
for f in "${cps[@]}" "${hvs[@]}" "${sts[@]}"; do $K apply -f "$f" >/dev/null; done
wait_claims 300 controlplaneclusters,hypervisorclusters,storageclusters
infra_ready=$(( $(date +%s) - applied ))
say "every pool and control-plane cluster is Ready, ${infra_ready}s after kubectl apply"

say "applying examples/tenants: the tenants' OpenStackClusters"
tenants=(examples/tenants/*/openstack-clusters/*.yaml)
for f in examples/tenants/*/namespace.yaml examples/tenants/*/access.yaml "${tenants[@]}"; do $K apply -f "$f" >/dev/null; done
wait_claims 900 openstackclusters
all_ready=$(( $(date +%s) - applied ))
say "every claim is Ready, ${all_ready}s after the first kubectl apply"
printf 'infrastructure %s\nall %s\n' "$infra_ready" "$all_ready" >"$RUN/timings"

cluster/demo/show.sh
echo "KUBECONFIG=$KUBECONFIG   stop with: make demo-down"
exit
}
