#!/usr/bin/env bash
# Builds, once, the pinned real binaries the tests and the local stack use, from
# the Go module proxy only, and caches them outside the repository under a
# directory named by version:
#
#   $TOOLS_DIR/k8s-v1.35.8/{kube-apiserver,kubectl,kube-controller-manager,kube-scheduler,kube-proxy,kubelet}
#   $TOOLS_DIR/etcd-v3.6.16/etcd
#   $TOOLS_DIR/crossplane-cli-v2.5.0/crossplane
#   $TOOLS_DIR/crossplane-core-v2.4.0/crossplane
#   $TOOLS_DIR/validate-cache-core-v2.4.0/   (Crossplane's own CRDs for offline `resource validate`)
#   $TOOLS_DIR/provider-kubernetes-v1.0.0/provider   (packaged by make xpkg for the local management plane)
#   $TOOLS_DIR/gardener-v1.138.0/gardener-apiserver   (serves core.gardener.cloud in the local garden)
#   $TOOLS_DIR/flux-v1.9.6/{source-controller,kustomize-controller,crds/}   (the demo's GitOps)
#
# Each tool is built from a committed throwaway module beside this script
# (go.mod + go.sum pin every dependency), because `go install pkg@version` needs
# version lists that the filtered proxy refuses. A flock serialises concurrent
# runs; a finished tool is never rebuilt, so a second run takes seconds.
#
# usage: tools/upstream/build.sh [all|test|plane|k8s|etcd|crossplane|validate-cache|provider-kubernetes|gardener|flux]...
#   test: what make test needs (all but plane); plane: the Kubernetes binaries
#   only the local management plane runs (kube-controller-manager,
#   kube-scheduler, kube-proxy, kubelet); all: both.
# prints nothing on stdout but `export` lines when called with --env.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"

TOOLS_DIR=${TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cobaltcore-tools}
K8S_DIR=$TOOLS_DIR/k8s-$K8S_VERSION
ETCD_DIR=$TOOLS_DIR/etcd-$ETCD_VERSION
XP_CLI_DIR=$TOOLS_DIR/crossplane-cli-$CROSSPLANE_CLI_VERSION
XP_CORE_DIR=$TOOLS_DIR/crossplane-core-$CROSSPLANE_CORE_VERSION
VALIDATE_CACHE=$TOOLS_DIR/validate-cache-core-$CROSSPLANE_CORE_VERSION
PK_DIR=$TOOLS_DIR/provider-kubernetes-$PROVIDER_KUBERNETES_VERSION
GARDENER_DIR=$TOOLS_DIR/gardener-$GARDENER_VERSION
FLUX_DIR=$TOOLS_DIR/flux-$FLUX_VERSION

start=$SECONDS
log() { printf '[tools %4ds] %s\n' "$((SECONDS - start))" "$*" >&2; }

if [[ ${1:-} == --env ]]; then
  # Consumed by the Makefile: where each tool lives, whether or not it is built yet.
  cat <<EOF
KUBEBUILDER_ASSETS=$TOOLS_DIR/envtest-$K8S_VERSION
KUBE_APISERVER=$K8S_DIR/kube-apiserver
KUBECTL=$K8S_DIR/kubectl
KUBE_CONTROLLER_MANAGER=$K8S_DIR/kube-controller-manager
KUBE_SCHEDULER=$K8S_DIR/kube-scheduler
KUBE_PROXY=$K8S_DIR/kube-proxy
KUBELET=$K8S_DIR/kubelet
ETCD=$ETCD_DIR/etcd
CROSSPLANE=$XP_CLI_DIR/crossplane
CROSSPLANE_CORE=$XP_CORE_DIR/crossplane
CROSSPLANE_VALIDATE_CACHE=$VALIDATE_CACHE
PROVIDER_KUBERNETES=$PK_DIR/provider
GARDENER_APISERVER=$GARDENER_DIR/gardener-apiserver
FLUX_DIR=$FLUX_DIR
EOF
  exit 0
fi

# The module proxy now and then stalls a transfer for good; go would wait
# forever. Download each throwaway module's dependencies under a timeout first
# and retry, so a stalled transfer costs minutes, not the whole CI run.
declare -A fetched=()
fetch() { # module-dir
  local mod=$1 try
  [[ -n ${fetched[$mod]:-} ]] && return 0
  for try in 1 2 3; do
    log "downloading modules of $mod (attempt $try)"
    if (cd "$here/$mod" && GOFLAGS= GOTOOLCHAIN=local timeout "${FETCH_TIMEOUT:-900}" go mod download); then
      fetched[$mod]=1
      return 0
    fi
  done
  log "FAILED: could not download the modules of $mod from the Go module proxy"
  return 1
}

# The heartbeat of the build in progress; killed on any exit.
heartbeat=
stop_heartbeat() {
  if [[ -n $heartbeat ]]; then kill "$heartbeat" 2>/dev/null || true; fi
  heartbeat=
}
trap stop_heartbeat EXIT

# go build in a throwaway module, with a heartbeat so a 10-minute compile is
# visibly alive. GOFLAGS from the caller (for example -mod=vendor) must not leak in.
build() { # module-dir output package ldflags
  local mod=$1 out=$2 pkg=$3 ldflags=$4 tmp
  tmp=$out.partial.$$
  fetch "$mod"
  log "building $pkg -> $out"
  # The heartbeat must not hold the lock (fd 9) should it outlive us.
  ( while sleep 60; do log "  ... still compiling $(basename "$out")"; done ) 9>&- &
  heartbeat=$!
  # Every tool is linked without DWARF (-s -w in its ldflags), so the
  # compiler need not write it either: 8-13 % less CPU for the same binary
  # (etcd from an empty build cache, twice each way: 108 and 120 CPU-s
  # against 95 and 111).
  if ! (cd "$here/$mod" && GOFLAGS= GOTOOLCHAIN=local CGO_ENABLED=0 \
        go build -trimpath -gcflags=all=-dwarf=false -ldflags="$ldflags" -o "$tmp" "$pkg"); then
    stop_heartbeat; rm -f "$tmp"; log "FAILED: $pkg"; return 1
  fi
  stop_heartbeat
  mkdir -p "$(dirname "$out")"; mv -f "$tmp" "$out"
  log "built $(basename "$out") ($(du -h "$out" | cut -f1))"
}

k8s_ldflags() {
  local minor ldflags=-s\ -w p
  minor=$(cut -d. -f2 <<<"$K8S_VERSION")
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  echo "$ldflags"
}

# What the tests need of Kubernetes: the API server (envtest) and kubectl.
k8s() {
  local ldflags; ldflags=$(k8s_ldflags)
  [[ -x $K8S_DIR/kube-apiserver ]] || build k8s "$K8S_DIR/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
  [[ -x $K8S_DIR/kubectl ]] || build k8s "$K8S_DIR/kubectl" k8s.io/kubernetes/cmd/kubectl "$ldflags"
}

# What only the local management plane runs (make demo, make e2e).
k8s_plane() {
  local ldflags; ldflags=$(k8s_ldflags)
  # Owner-reference garbage collection and namespace deletion.
  [[ -x $K8S_DIR/kube-controller-manager ]] ||
    build k8s "$K8S_DIR/kube-controller-manager" k8s.io/kubernetes/cmd/kube-controller-manager "$ldflags"
  # The local node (local/node): Crossplane core's Deployment runtime
  # runs the packages as pods, scheduled, started and given their Services as
  # in a cluster.
  [[ -x $K8S_DIR/kube-scheduler ]] || build k8s "$K8S_DIR/kube-scheduler" k8s.io/kubernetes/cmd/kube-scheduler "$ldflags"
  [[ -x $K8S_DIR/kube-proxy ]] || build k8s "$K8S_DIR/kube-proxy" k8s.io/kubernetes/cmd/kube-proxy "$ldflags"
  [[ -x $K8S_DIR/kubelet ]] || build k8s "$K8S_DIR/kubelet" k8s.io/kubernetes/cmd/kubelet "$ldflags"
}

etcd() {
  [[ -x $ETCD_DIR/etcd ]] || build etcd "$ETCD_DIR/etcd" go.etcd.io/etcd/server/v3 "-s -w"
}

crossplane() {
  local v=github.com/crossplane/crossplane-runtime/v2/pkg/version.version
  [[ -x $XP_CORE_DIR/crossplane ]] ||
    build crossplane "$XP_CORE_DIR/crossplane" github.com/crossplane/crossplane/v2/cmd/crossplane "-s -w -X $v=$CROSSPLANE_CORE_VERSION"
  [[ -x $XP_CLI_DIR/crossplane ]] ||
    build crossplane "$XP_CLI_DIR/crossplane" github.com/crossplane/cli/v2/cmd/crossplane "-s -w -X $v=$CROSSPLANE_CLI_VERSION"
}

# provider-kubernetes pins crossplane-runtime v2.0.0-rc.1 and controller-runtime
# v0.19, which do not build beside the project's v2.4.0/v0.24, so it has its own
# throwaway module. make xpkg packages the binary with the metadata and CRDs
# of the same module version (tools/packaging/build.sh), and the demo
# installs that package from its local registry.
provider_kubernetes() {
  [[ -x $PK_DIR/provider ]] ||
    build provider-kubernetes "$PK_DIR/provider" github.com/crossplane-contrib/provider-kubernetes/cmd/provider "-s -w"
}

# The real gardener-apiserver serves core.gardener.cloud (Shoots, CloudProfiles,
# Projects) in the local garden, aggregated into the local kube-apiserver, so
# Shoots meet Gardener's own validation, defaulting and admission.
gardener() {
  local minor
  minor=$(cut -d. -f2 <<<"$GARDENER_VERSION")
  [[ -x $GARDENER_DIR/gardener-apiserver ]] ||
    build gardener "$GARDENER_DIR/gardener-apiserver" github.com/gardener/gardener/cmd/gardener-apiserver \
      "-s -w -X k8s.io/component-base/version.gitVersion=$GARDENER_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
}

# Flux's source- and kustomize-controller run the demo's GitOps repository
# (local/gitops). Both resolve in one throwaway module with their own replace
# lines copied (see flux/go.mod); their CRDs ship in the module zips.
flux() {
  local m d
  [[ -x $FLUX_DIR/source-controller ]] ||
    build flux "$FLUX_DIR/source-controller" github.com/fluxcd/source-controller "-s -w"
  [[ -x $FLUX_DIR/kustomize-controller ]] ||
    build flux "$FLUX_DIR/kustomize-controller" github.com/fluxcd/kustomize-controller "-s -w"
  [[ -e $FLUX_DIR/crds/.complete ]] && return 0
  mkdir -p "$FLUX_DIR/crds"
  for m in source-controller kustomize-controller; do
    d=$(cd "$here/flux" && GOFLAGS= GOTOOLCHAIN=local go list -m -f '{{.Dir}}' "github.com/fluxcd/$m")
    cp "$d"/config/crd/bases/*.yaml "$FLUX_DIR/crds/"
  done
  chmod u+w "$FLUX_DIR"/crds/*.yaml
  touch "$FLUX_DIR/crds/.complete"
}

# envtest wants one directory holding kube-apiserver, etcd and kubectl.
envtest_assets() {
  local d=$TOOLS_DIR/envtest-$K8S_VERSION
  mkdir -p "$d"
  ln -sf "$K8S_DIR/kube-apiserver" "$d/kube-apiserver"
  ln -sf "$K8S_DIR/kubectl" "$d/kubectl"
  ln -sf "$ETCD_DIR/etcd" "$d/etcd"
}

# `crossplane resource validate` always resolves Crossplane's own CRDs as the
# package xpkg.crossplane.io/crossplane/crossplane:<version>, which needs a
# registry. Seeding its cache with the CRDs of the pinned core (from the module
# cache) makes validation work offline and against exactly the core we run.
validate_cache() {
  local marker=$VALIDATE_CACHE/.complete moddir tag dir f
  [[ -e $marker ]] && return 0
  log "seeding the offline validate cache from crossplane/v2@$CROSSPLANE_CORE_VERSION"
  fetch crossplane
  moddir=$(cd "$here/crossplane" && GOFLAGS= GOTOOLCHAIN=local go list -m -f '{{.Dir}}' github.com/crossplane/crossplane/v2)
  for tag in "$CROSSPLANE_CORE_VERSION" stable; do
    dir=$VALIDATE_CACHE/xpkg.crossplane.io/crossplane/crossplane@$tag
    mkdir -p "$dir"
    : >"$dir/package.yaml"
    for f in "$moddir"/cluster/crds/*.yaml; do
      cat "$f" >>"$dir/package.yaml"
      printf -- '\n---\n' >>"$dir/package.yaml"
    done
  done
  touch "$marker"
}

# Every tool, in two lanes: Kubernetes's six binaries in one, the rest in
# the other. On two cores a single go build leaves a core idle while it links
# or waits on the module proxy; the second lane fills those gaps. The lanes
# share no module versions (each tool pins its own k8s.io), so they do not
# compile the same packages twice.
# Both lanes run as background jobs so that set -e holds inside them (it
# does not in a subshell whose status a || tests).
#
# `test` is what make test needs; `all` adds what only the local management
# plane runs (`plane`), so that CI can build those beside make test.
lanes() { # K8S-TOOLS...: the Kubernetes binaries named in one lane, the rest in the other
  local k8s_lane other_lane prefetch rc=0 t
  # The later tools' modules download at once, beside the compile, in the
  # order the second lane needs them (each lane fetches its first itself):
  # fetched inside a lane, each module's download left that lane's compile
  # idle (cold, minutes of a CI run). A lane's own fetch still runs, and
  # finds them there or retries.
  ( for t in crossplane provider-kubernetes gardener flux; do
      (cd "$here/$t" && GOFLAGS= GOTOOLCHAIN=local timeout "${FETCH_TIMEOUT:-900}" go mod download) >/dev/null 2>&1 || true
    done ) 9>&- &
  prefetch=$!
  ( trap stop_heartbeat EXIT; for t in "$@"; do "$t"; done ) &
  k8s_lane=$!
  ( trap stop_heartbeat EXIT; etcd; crossplane; validate_cache; provider_kubernetes; gardener; flux ) &
  other_lane=$!
  wait "$k8s_lane" || rc=$?
  wait "$other_lane" || rc=$?
  # Both lanes fetched what they built: a download still under way is for
  # nothing now.
  kill "$prefetch" 2>/dev/null || true
  wait "$prefetch" 2>/dev/null || true
  [[ $rc -eq 0 ]] || { log "FAILED: a tool did not build (above)"; return "$rc"; }
  envtest_assets
}
all() { lanes k8s k8s_plane; }
test_tools() { lanes k8s; }

# built TARGET...: every file the targets make is there, so nothing needs the
# lock (a run that only checks must not wait for another that builds what it
# does not need: make test's check beside CI's build of the plane's binaries).
built() {
  local t f files=()
  local plane=("$K8S_DIR/kube-controller-manager" "$K8S_DIR/kube-scheduler" "$K8S_DIR/kube-proxy" "$K8S_DIR/kubelet")
  local test=("$K8S_DIR/kube-apiserver" "$K8S_DIR/kubectl" "$TOOLS_DIR/envtest-$K8S_VERSION/etcd" "$ETCD_DIR/etcd"
    "$XP_CORE_DIR/crossplane" "$XP_CLI_DIR/crossplane" "$VALIDATE_CACHE/.complete" "$PK_DIR/provider"
    "$GARDENER_DIR/gardener-apiserver" "$FLUX_DIR/source-controller" "$FLUX_DIR/kustomize-controller" "$FLUX_DIR/crds/.complete")
  for t in "$@"; do
    case $t in
      all) files+=("${test[@]}" "${plane[@]}") ;;
      test) files+=("${test[@]}") ;;
      plane) files+=("${plane[@]}") ;;
      *) return 1 ;;
    esac
  done
  for f in "${files[@]}"; do [[ -e $f ]] || return 1; done
}

# Everything runs from main, called on the last line: bash has then read the
# whole file before it acts, so editing the script never derails a running build.
main() {
  targets=("$@")
  [[ ${#targets[@]} -gt 0 ]] || targets=(all)

  if built "${targets[@]}"; then
    log "tools ready in $TOOLS_DIR"
    return 0
  fi
  mkdir -p "$TOOLS_DIR"
  exec 9>"$TOOLS_DIR/.lock"
  if ! flock -n 9; then
    log "another build holds $TOOLS_DIR/.lock; waiting for it"
    flock 9
  fi

  for t in "${targets[@]}"; do
    case $t in
      all) all ;;
      test) test_tools ;;
      plane) k8s_plane ;;
      k8s) k8s; k8s_plane ;;
      etcd) etcd ;;
      crossplane) crossplane ;;
      validate-cache) validate_cache ;;
      provider-kubernetes) provider_kubernetes ;;
      gardener) gardener ;;
      flux) flux ;;
      *) echo "unknown target $t (want all|test|plane|k8s|etcd|crossplane|validate-cache|provider-kubernetes|gardener|flux)" >&2; exit 2 ;;
    esac
  done
  log "tools ready in $TOOLS_DIR"
}

main "$@"
