#!/usr/bin/env bash
# Starts a local management plane that runs the product on real Crossplane
# core, with no outside cluster, and composes the example hypervisor pools:
#
#   etcd + kube-apiserver (internal/cmd/apiserver) and kube-controller-manager
#   (garbage collection), Crossplane core v2.4.0
#   (--package-runtime=External, webhooks off, client certs made here), our
#   packages from `make xpkg` installed from core's package cache with
#   packagePullPolicy Never, the four functions as local processes serving
#   core over mTLS, the provider as a local process, and two stand-ins:
#   internal/cmd/gardener-standin (Shoots become ready; shoots/adminkubeconfig)
#   and internal/cmd/metal-standin (the metal-operator Servers of the pools).
#
# It then applies examples/infrastructure/*/hypervisor-pools and waits until
# every HypervisorCluster is Ready. Every wait is bounded; a failure names
# the component or claim and its condition. cluster/demo/down.sh stops
# everything by PID.
#
# A preview of the main job (issue #8): storage and control-plane pools,
# tenant clouds, provider-kubernetes and the local OpenStack/OVN/Ceph are
# not part of it yet.
#
# Usage: cluster/demo/up.sh   (after `make xpkg`; run dir $COBALTCORE_DEMO, default /tmp/cobaltcore-demo)
set -euo pipefail
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
for c in apiserver gardener-standin metal-standin; do go build -o "$RUN/bin/$c" "./internal/cmd/$c"; done
tags=""; [ -f /usr/include/rados/librados.h ] && tags="-tags ceph,pacific"
# shellcheck disable=SC2086 # tags is a word list
go build $tags -o "$RUN/bin/provider" ./provider/cmd/provider
cp _output/package-build/bin/function-* "$RUN/bin/"

# bg NAME COMMAND...: start a process, its log in RUN/NAME.log, its PID in RUN/NAME.pid.
bg() { local n=$1; shift; "$@" >"$RUN/$n.log" 2>&1 & echo $! >"$RUN/$n.pid"; }
alive() { kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null || die "$1 exited: $(tail -3 "$RUN/$1.log")"; }

say "starting etcd and kube-apiserver"
bg apiserver "$RUN/bin/apiserver" -dir "$RUN"
wait_for 60 "kube-apiserver did not start ($RUN/apiserver.log)" test -s "$RUN/kubeconfig"
export KUBECONFIG=$RUN/kubeconfig
[ -x "$KUBE_CONTROLLER_MANAGER" ] || die "no kube-controller-manager at $KUBE_CONTROLLER_MANAGER: run make tools"
# Only the controllers the plane needs: owner-reference garbage collection
# (composed resources go with their composite) and namespace deletion.
bg kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig="$KUBECONFIG" --authentication-kubeconfig="$KUBECONFIG" \
  --authorization-kubeconfig="$KUBECONFIG" --controllers=garbagecollector,namespace --leader-elect=false \
  --bind-address=127.0.0.1 --secure-port=18257

say "installing Crossplane's CRDs and the external schemas"
XP_SRC=$(GOFLAGS= go mod download -json github.com/crossplane/crossplane/v2@v2.4.0 | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
$K apply --server-side -f "$XP_SRC/cluster/crds" >/dev/null
$K apply --server-side -f cluster/crds/gardener -f cluster/crds/metal-operator -f cluster/crds/provider-kubernetes/kubernetes.crossplane.io_providerconfigs.yaml >/dev/null
$K wait --for=condition=Established crd --all --timeout=60s >/dev/null || die "CRDs not established"
$K create namespace crossplane-system >/dev/null

say "making the TLS certificates (a CA, core's client certificate, the functions' server certificate)"
c=$RUN/certs
openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=cobaltcore-demo-ca" -keyout "$c/ca.key" -out "$c/ca.crt" 2>/dev/null
cert() { # DIR CN EXTENSIONS
  mkdir -p "$c/$1" && printf '%s\n' "$3" >"$c/$1.ext"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=$2" -keyout "$c/$1/tls.key" -out "$c/$1.csr" 2>/dev/null
  openssl x509 -req -in "$c/$1.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial -days 7 -extfile "$c/$1.ext" -out "$c/$1/tls.crt" 2>/dev/null
  cp "$c/ca.crt" "$c/$1/"
}
cert core crossplane "extendedKeyUsage = clientAuth"
cert functions functions "$(printf 'extendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1')"
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
bg crossplane "$CROSSPLANE_CORE" core start --enable-webhooks=false --package-runtime=External \
  --tls-client-certs-dir="$c/core" --xpkg-cache-dir="$RUN/cache" --metrics-port=18080 --health-probe-port=18081 --poll-interval=30s
wait_for 60 "Crossplane core is not healthy ($RUN/crossplane.log)" curl -fs http://127.0.0.1:18081/healthz
alive crossplane

say "installing the functions, the provider and the Configuration from the cache"
install_pkg() { # KIND NAME [EXTRA-SPEC-LINE]
  printf 'apiVersion: pkg.crossplane.io/v1\nkind: %s\nmetadata:\n  name: %s\nspec:\n  package: %s\n  packagePullPolicy: Never\n%s\n' \
    "$1" "$2" "${ref[$2]}" "${3:-}" | $K apply -f - >/dev/null
}
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
  install_pkg Function "$fn"
  external functionrevision "$fn" "127.0.0.1:$port"
  TLS_SERVER_CERTS_DIR=$c/functions bg "$fn" "$RUN/bin/$fn" --address="127.0.0.1:$port" --metrics-address=
  port=$((port + 1))
done
install_pkg Provider provider-cobaltcore
external providerrevision provider-cobaltcore
install_pkg Configuration configuration-cobaltcore "  skipDependencyResolution: true"
for p in "${functions[@]/#/function/}" provider/provider-cobaltcore configuration/configuration-cobaltcore; do
  $K wait --for=condition=Healthy "$p" --timeout=120s >/dev/null 2>&1 ||
    die "package $p is not healthy: $($K get "$p" -o jsonpath='{.status.conditions}' 2>&1)"
done
for fn in "${functions[@]}"; do alive "$fn"; done

say "starting the provider and the stand-ins"
bg provider "$RUN/bin/provider" -kubeconfig "$KUBECONFIG" -metrics-bind-address 127.0.0.1:18090 -health-probe-bind-address 127.0.0.1:18091 -poll 30s
wait_for 60 "the provider is not healthy ($RUN/provider.log)" curl -fs http://127.0.0.1:18091/healthz
cat >"$RUN/garden-kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: garden, cluster: {server: "http://127.0.0.1:18443"}}]
users: [{name: standin, user: {}}]
contexts: [{name: garden, context: {cluster: garden, user: standin}}]
current-context: garden
KC
# The Shoots' clusters are stood in for by the management cluster itself.
bg gardener-standin "$RUN/bin/gardener-standin" -kubeconfig "$KUBECONFIG" -shoot-kubeconfig "$KUBECONFIG" -listen 127.0.0.1:18443
wait_for 30 "the Gardener stand-in does not serve ($RUN/gardener-standin.log)" curl -fs http://127.0.0.1:18443/version
pools=(examples/infrastructure/*/hypervisor-pools/*.yaml)
"$RUN/bin/metal-standin" -kubeconfig "$KUBECONFIG" "${pools[@]}" >"$RUN/metal-standin.log" 2>&1 || die "metal stand-in: $(cat "$RUN/metal-standin.log")"

say "landscape: the CloudProfile, the garden and metal cluster ProviderConfigs"
$K create namespace garden-c5c3 >/dev/null
$K apply -f internal/render/testdata/required/cloudprofile.yaml >/dev/null
$K -n crossplane-system create secret generic garden-kubeconfig --from-file=kubeconfig="$RUN/garden-kubeconfig" >/dev/null
$K -n crossplane-system create secret generic ironcore-metal-kubeconfig --from-file=kubeconfig="$KUBECONFIG" >/dev/null
$K apply -f cluster/demo/providerconfigs.yaml >/dev/null

say "applying the hypervisor pools of examples/infrastructure"
applied=$(date +%s)
$K apply -f examples/infrastructure/namespace.yaml >/dev/null
for f in "${pools[@]}"; do $K apply -f "$f" >/dev/null; done
for f in "${pools[@]}"; do
  n=$(sed -n 's/^  name: //p' "$f" | head -1)
  if ! $K -n infrastructure wait --for=condition=Ready "hypervisorcluster/$n" --timeout=180s >/dev/null 2>&1; then
    die "HypervisorCluster $n is not Ready: $($K -n infrastructure get hypervisorcluster "$n" -o jsonpath='{range .status.conditions[?(@.status!="True")]}{.type}={.reason}: {.message}; {end}')"
  fi
done
say "every hypervisor pool is Ready, $(( $(date +%s) - applied ))s after kubectl apply"
$K get hypervisorclusters -A
$K get serverinventories
echo "KUBECONFIG=$KUBECONFIG   stop with: cluster/demo/down.sh"
