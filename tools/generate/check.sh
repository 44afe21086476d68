#!/usr/bin/env bash
# Fails when the generated files differ from what `make generate` makes of
# the committed inputs (make check-generate).
#
# make generate takes 80 s and 140 CPU-s on two cores (2026-11-30): it
# type-checks the APIs and Gardener's types several times over. Its output
# depends only on the inputs below (the APIs, the generators' code and
# pins, the schemas and manifests it copies) and on the generated files
# themselves, so a check that passed is kept by the content of all of them
# (a git tree hash) in the user's cache, as go keeps a build: the same
# content checked again on this machine (a fresh clone of a commit checked
# before, as CI's) is not generated again. Any change to any of those files,
# committed or not, has another hash and is generated and checked in full.
#
# usage: tools/generate/check.sh GENERATED_PATHS...
set -euo pipefail
cd "$(dirname "$0")/../.."
generated=("$@")
# What make generate reads beside the generated paths: the Makefile's
# recipe, the module pins (go.mod, go.sum, the agents' own), the XRD
# generator and its one in-module dependency (tools/xrd; the APIs import
# nothing else of the module: `go list -deps ./apis/...`), the OVSDB
# schemas, the agents' manifests (cluster/), the layers' writer (tools/cmd/layers
# and the bundle code it runs), and this script.
inputs=(Makefile go.mod go.sum agents/go.mod agents/go.sum tools/cmd/xrdgen tools/xrd tools/generate
  tools/cmd/layers internal/agentbundle/bundle.go
  provider/internal/clients/ovn/schema agents/internal/ovs/schema cluster)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/cobaltcore-generate

stale() { [[ -n $(git status --porcelain -- "${generated[@]}") ]]; }

# key is the content of every input and generated file, as one git tree
# (read through a scratch index: the checkout's own index is not touched),
# with the Go toolchain's version.
key() {
  local index
  index=$(mktemp -u)
  GIT_INDEX_FILE=$index git add -A -- "${inputs[@]}" "${generated[@]}"
  echo "$(GIT_INDEX_FILE=$index git write-tree)-$(go env GOVERSION)"
  rm -f "$index"
}

k=$(key)
if ! stale && [[ -e $cache/$k ]]; then
  echo "generated files: checked before for these inputs and outputs (tree $k, $cache), not generated again"
  exit 0
fi
make --no-print-directory generate
if stale; then
  echo "generated files are stale; run 'make generate' and commit:"
  git status --porcelain -- "${generated[@]}"
  git --no-pager diff --stat -- "${generated[@]}"
  exit 1
fi
mkdir -p "$cache" && touch "$cache/$(key)"
