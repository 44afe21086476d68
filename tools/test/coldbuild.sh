#!/usr/bin/env bash
# Measures what a cold `make test` and `make xpkg` compile: every go command
# they run, each in its build configuration, from an empty build cache (the
# module cache stays: downloads are not compiles). Prints each step's wall
# and CPU seconds and the total.
#
# usage: tools/test/coldbuild.sh [GO_TAGS]
#   GO_TAGS: the tags every command adds (the Makefile's GO_TAGS,
#   netgo,osusergo, when unset); "none" measures the commands without them,
#   as they were before the Makefile set them, for the side-by-side figure of
#   docs/development.md:
#     tools/test/coldbuild.sh none; tools/test/coldbuild.sh
# Needs agents-deps and ceph-deps (the cgo headers); runs no test (go test
# -exec /bin/true links each test binary and vets it, as make test does).
set -euo pipefail
cd "$(dirname "$0")/../.."

tags=${1:-netgo,osusergo}
[[ $tags == none ]] && tags=
cache=$(mktemp -d) out=$(mktemp -d)
trap 'rm -rf "$cache" "$out"' EXIT
export GOCACHE=$cache GOFLAGS="-trimpath${tags:+ -tags=$tags}" GOTOOLCHAIN=local

total_wall=0 total_cpu=0
step() { # NAME COMMAND...
  local name=$1 f; shift
  f=$(mktemp)
  /usr/bin/time -f '%e %U %S' -o "$f" "$@" >/dev/null
  read -r wall user sys <"$f" && rm -f "$f"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
  printf '%-44s %7.1f s wall %7.1f s CPU\n' "$name" "$wall" "$cpu"
  total_wall=$(awk -v a="$total_wall" -v b="$wall" 'BEGIN { print a + b }')
  total_cpu=$(awk -v a="$total_cpu" -v b="$cpu" 'BEGIN { print a + b }')
}

echo "GO_TAGS: ${tags:-(none)}; GOCACHE empty: $cache"
step "test binaries (make test-unit's go test)" go test -count=1 -exec /bin/true -tags "${tags:+$tags,}ceph,pacific" ./...
step "vet (make lint)" go vet ./...
step "the agents' test binaries" go -C agents test -count=1 -exec /bin/true -tags "${tags:+$tags,}libvirt,ceph,pacific" ./...
step "the functions, static (make xpkg)" env CGO_ENABLED=0 go build -o "$out/" ./functions/...
step "the provider, cgo (make xpkg)" env CGO_ENABLED=1 go build -tags "${tags:+$tags,}ceph,pacific" -o "$out/" ./provider/cmd/provider
step "the OVS agent, static (make xpkg)" env CGO_ENABLED=0 go -C agents build -o "$out/" ./cmd/ovs-agent
step "the cgo agents (make xpkg)" go -C agents build -tags "${tags:+$tags,}libvirt,ceph,pacific" -o "$out/" ./cmd/hypervisor-agent ./cmd/ha-agent ./cmd/storage-agent
step "the local plane's commands (make demo, e2e)" go build -o "$out/" ./local/cmd/... ./tools/cmd/imgbuild
step "the e2e test binary (make e2e-bin)" go test -c -tags "${tags:+$tags,}e2e" -o "$out/e2e.test" ./test/e2e
printf '%-44s %7.1f s wall %7.1f s CPU\n' "total" "$total_wall" "$total_cpu"
