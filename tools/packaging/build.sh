#!/usr/bin/env bash
# Builds every package of the project offline, as .xpkg files in OUT
# (default _output/xpkg): the four composition functions and the provider,
# each with its runtime image embedded, and the Configuration.
#
# No Docker and no registry: each binary is put into a one-layer image on an
# empty base by tools/cmd/imgbuild (root-owned read-only files, run as
# user 65532, with this machine's CA bundle so HTTPS to public CAs works);
# the crossplane CLI (`make tools`) wraps image and package metadata into
# the .xpkg. The functions are static (CGO off). The provider is built with
# cgo and the `ceph` tag and carries the librados it links (imgbuild -libs,
# from this machine's Debian librados-dev, which `make ceph-up` installs),
# so its Ceph kinds work, and Ceph's crushtool (imgbuild -tool), which
# compiles stretched pools' CRUSH rules. Only linux/amd64 is built: the cgo images carry
# this machine's libraries, and no other architecture's are at hand.
#
# The node agents (agents/) are images only, for the DaemonSets of
# cluster/agents: the OVS agent static, the libvirt and Ceph ones (cgo) with
# the shared libraries they link from this machine's Debian packages
# (imgbuild -libs). They go to _output/images.
#
# Usage: tools/packaging/build.sh [VERSION]   (default v0.1.0-dev)
set -euo pipefail
cd "$(dirname "$0")/../.."
VERSION=${1:-v0.1.0-dev}
OUT=${OUT:-_output/xpkg}
REGISTRY=${REGISTRY:-xpkg.c5c3.io/cobaltcore}
eval "$(tools/upstream/build.sh --env | sed 's/^/export /')"
# shellcheck source=../../tools/upstream/versions.env
source tools/upstream/versions.env
[ -x "$CROSSPLANE" ] || { echo "no crossplane CLI at $CROSSPLANE: run make tools" >&2; exit 1; }

# What the packages are built from: the checkout (committed, changed and
# new files), the pinned tools, the version, and the machine's libraries and
# CA bundle the images carry. When a build from the same inputs left every
# package (make test, then make e2e or make demo), it is not built again.
images=${IMAGES:-_output/images}
# The images' binaries stay beside them: e2e checks that each package's
# and agent's process runs the binary its image was built with
# (test/e2e/shipped_test.go), so they are outputs like the images.
work=_output/package-build
stamp="$OUT/.inputs"
inputs() {
  {
    echo "$VERSION $REGISTRY $OUT $images"
    cat tools/upstream/versions.env
    go version
    git rev-parse HEAD
    git diff HEAD --binary
    git ls-files -z --others --exclude-standard | xargs -0 -r sha256sum
    sha256sum "$CA_BUNDLE" "$CROSSPLANE" "$PROVIDER_KUBERNETES" /usr/bin/crushtool 2>/dev/null || true
    dpkg-query -W 'librados*' 'librbd*' 'libvirt0' 'ceph-base' 2>/dev/null || true
  } | sha256sum | cut -d' ' -f1
}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
want=$(inputs)
# The stamp: the inputs' hash, then each output's checksum (so that an
# output removed or changed since is built again). outputs_match STAMP
# checks the outputs against a stamp's checksums.
outputs_match() { tail -n +2 "$1" | sha256sum --check --quiet --status 2>/dev/null; }
if [ "$(head -1 "$stamp" 2>/dev/null)" = "$want" ] && outputs_match "$stamp"; then
  echo "the packages in $OUT and the images in $images are built from these inputs already ($stamp)"
  exit 0
fi
rm -f "$stamp"

# A build of the same inputs in another checkout on this machine (CI's
# fresh clone of a commit built before) is taken from the user's cache,
# checked against its checksums, instead of built again: on two cores the
# build is about 75 s of make test's critical path (make test-integration
# waits for it). The inputs' hash names the checkout's paths relative to its
# root, so a clone elsewhere finds the same entry.
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cobaltcore-xpkg
if [[ -f $cache/$want/stamp ]]; then
  mkdir -p "$OUT" "$images" "$work/bin"
  # A build kept before the binaries were (no bin/) is built again.
  if cp "$cache/$want/xpkg/"* "$OUT/" && cp "$cache/$want/images/"* "$images/" && cp "$cache/$want/bin/"* "$work/bin/" 2>/dev/null &&
    outputs_match "$cache/$want/stamp"; then
    cp "$cache/$want/stamp" "$stamp"
    echo "the packages in $OUT and the images in $images are copied from a build of these inputs ($cache/$want)"
    exit 0
  fi
  echo "the cached build in $cache/$want is incomplete or does not match its checksums: building again" >&2
  rm -rf "${cache:?}/$want"
fi

# The build tags every go command of the Makefile uses (GO_TAGS there): with
# them the static and the cgo builds compile the same packages, so these
# binaries reuse what make test compiled instead of compiling it again.
tags=${GO_TAGS:-netgo,osusergo}

rm -rf "$work" && mkdir -p "$work/bin" "$OUT"
go build -tags "$tags" -o "$work/imgbuild" ./tools/cmd/imgbuild

# image NAME MAINPKG ENTRYPOINT PORTS: a static binary and its image tarball.
# The pool functions place the node agents tagged with the version they were
# built as (internal/agentbundle.Version), so a release places its own agents.
[ -s "$CA_BUNDLE" ] || { echo "no CA bundle at $CA_BUNDLE: apt-get install ca-certificates, or set CA_BUNDLE" >&2; exit 1; }
image() {
  CGO_ENABLED=0 go build -tags "$tags" -trimpath -ldflags "-s -w -X github.com/c5c3/consumer-plane/internal/agentbundle.Version=$VERSION" -o "$work/bin/$1" "$2"
  "$work/imgbuild" -bin "$work/bin/$1" -entrypoint "$3" -tag "$REGISTRY/$1:$VERSION" -ports "$4" -ca-bundle "$CA_BUNDLE" -out "$work/$1.tar" >/dev/null
}

# Functions: package metadata plus the CRD of the input their Compositions give them.
declare -A input=(
  [controlplanecluster]=shootsettings [hypervisorcluster]=shootsettings
  [storagecluster]=shootsettings [openstackcluster]=cloudsettings
)
for dir in controlplanecluster hypervisorcluster storagecluster openstackcluster; do
  name=$(sed -n 's/^  name: //p;T;q' "functions/$dir/package/crossplane.yaml")
  image "$name" "./functions/$dir" /function 9443/tcp
  root="$work/$name" && mkdir -p "$root"
  cp "functions/$dir/package/crossplane.yaml" "package/input/input.crossplane.c5c3.io_${input[$dir]}.yaml" "$root/"
  "$CROSSPLANE" xpkg build --package-root="$root" --embed-runtime-image-tarball="$work/$name.tar" -o "$OUT/$name.xpkg"
done

# The provider: its metadata and CRDs.
[ -e /usr/include/rados/librados.h ] || { echo "the provider links librados: apt-get install librados-dev (make ceph-up does)" >&2; exit 1; }
CGO_ENABLED=1 go build -tags "$tags,ceph,pacific" -trimpath -ldflags "-s -w" -o "$work/bin/provider-cobaltcore" ./provider/cmd/provider
# The provider compiles stretched pools' CRUSH rules with Ceph's crushtool
# (ceph-base), which its image carries at the same path.
[ -x /usr/bin/crushtool ] || { echo "the provider's image carries /usr/bin/crushtool: apt-get install ceph-base (make ceph-up does)" >&2; exit 1; }
"$work/imgbuild" -bin "$work/bin/provider-cobaltcore" -entrypoint /provider -tag "$REGISTRY/provider-cobaltcore:$VERSION" -ports 8080/tcp \
  -ca-bundle "$CA_BUNDLE" -libs -tool /usr/bin/crushtool -out "$work/provider-cobaltcore.tar" >/dev/null
"$CROSSPLANE" xpkg build --package-root=provider/package --embed-runtime-image-tarball="$work/provider-cobaltcore.tar" \
  -o "$OUT/provider-cobaltcore.xpkg"

# provider-kubernetes, the Configuration's dependency, packaged from its
# pinned module (make tools builds the binary; its metadata and CRDs come
# from the same module version) as upstream's image lays it out
# (/usr/local/bin/crossplane-kubernetes-provider): the local registry of
# local/demo serves it where the demo's ImageConfig relocates
# xpkg.crossplane.io/crossplane-contrib to.
[ -x "$PROVIDER_KUBERNETES" ] || { echo "no provider-kubernetes at $PROVIDER_KUBERNETES: run make tools" >&2; exit 1; }
pk_root="$work/provider-kubernetes" && mkdir -p "$pk_root"
pk_mod=$(GOFLAGS= go mod download -json "github.com/crossplane-contrib/provider-kubernetes@$PROVIDER_KUBERNETES_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
cp "$pk_mod/package/crossplane.yaml" "$pk_root/" && cp -r "$pk_mod/package/crds" "$pk_root/" && chmod -R u+w "$pk_root"
"$work/imgbuild" -bin "$PROVIDER_KUBERNETES" -entrypoint /usr/local/bin/crossplane-kubernetes-provider \
  -tag "xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:$PROVIDER_KUBERNETES_VERSION" -ports 8080/tcp \
  -ca-bundle "$CA_BUNDLE" -out "$work/provider-kubernetes.tar" >/dev/null
"$CROSSPLANE" xpkg build --package-root="$pk_root" --embed-runtime-image-tarball="$work/provider-kubernetes.tar" \
  -o "$OUT/provider-kubernetes.xpkg"

# The Configuration: the XRDs and Compositions (its dependencies are the
# packages above and provider-kubernetes).
root="$work/configuration" && mkdir -p "$root"
cp crossplane.yaml "$root/" && cp -r package/xrds package/compositions "$root/"
"$CROSSPLANE" xpkg build --package-root="$root" -o "$OUT/configuration-cobaltcore.xpkg"

# The node agents' images.
mkdir -p "$images"
CGO_ENABLED=0 go -C agents build -tags "$tags" -trimpath -ldflags "-s -w" -o "$PWD/$work/bin/ovs-agent" ./cmd/ovs-agent
"$work/imgbuild" -bin "$work/bin/ovs-agent" -entrypoint /ovs-agent -tag "$REGISTRY/ovs-agent:$VERSION" -ports 8080/tcp,8081/tcp \
  -ca-bundle "$CA_BUNDLE" -out "$images/ovs-agent.tar" >/dev/null
for agent in hypervisor-agent ha-agent storage-agent; do
  go -C agents build -tags "$tags,libvirt,ceph,pacific" -trimpath -ldflags "-s -w" -o "$PWD/$work/bin/$agent" "./cmd/$agent"
  "$work/imgbuild" -bin "$work/bin/$agent" -entrypoint "/$agent" -tag "$REGISTRY/$agent:$VERSION" -ports 8080/tcp,8081/tcp \
    -ca-bundle "$CA_BUNDLE" -libs -out "$images/$agent.tar" >/dev/null
done

# The version the packages were built as, for the demo to push them under.
echo "$VERSION" >"$OUT/VERSION"
{ echo "$want"; sha256sum "$OUT"/*.xpkg "$OUT/VERSION" "$images"/*.tar "$work"/bin/*; } >"$stamp.new" && mv "$stamp.new" "$stamp"
# Kept for another checkout of the same inputs (above): the three newest
# builds, about 280 MB each.
mkdir -p "$cache"
keep=$(mktemp -d "$cache/.new-XXXXXX")
mkdir "$keep/xpkg" "$keep/images" "$keep/bin"
cp "$OUT"/*.xpkg "$OUT/VERSION" "$keep/xpkg/" && cp "$images"/*.tar "$keep/images/" && cp "$work"/bin/* "$keep/bin/" && cp "$stamp" "$keep/stamp"
rm -rf "${cache:?}/$want" && mv "$keep" "$cache/$want"
ls -1dt "$cache"/*/ | tail -n +4 | xargs -r rm -rf
ls -l "$OUT" "$images"
