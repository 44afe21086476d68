# CobaltCore consumer plane. `make help` lists the targets.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

export GOTOOLCHAIN := local
# One build configuration for every go command (tests, vet, binaries, the
# demo's commands): without -trimpath the go command keys each package of the
# module by its directory, so a fresh clone elsewhere (as CI makes) would
# compile and vet the whole project again instead of hitting the build cache.
# GO_TAGS make cgo and static builds compile the same packages: the pure-Go
# DNS resolver and user lookup (netgo, osusergo) are what a CGO_ENABLED=0
# build has anyway, so the static functions and OVS agent (CGO off) share
# every package with the tests and the cgo provider and agents instead of
# compiling the whole dependency graph a second time (cold, several minutes).
# A command line's -tags replaces GOFLAGS' own, so every -tags below starts
# with them; test/layout fails on one that does not.
export GO_TAGS := netgo,osusergo
export GOFLAGS := $(strip $(filter-out -trimpath -tags=%,$(GOFLAGS)) -trimpath -tags=$(GO_TAGS))

# Where the pinned real binaries live (built by `make tools`, cached outside
# the repository by version): KUBEBUILDER_ASSETS, CROSSPLANE, CROSSPLANE_CORE…
TOOLS_ENV := $(shell tools/upstream/build.sh --env)
$(foreach v,$(TOOLS_ENV),$(eval export $(v)))

# started prints when a phase of make test began, so that a CI log shows
# each phase's share of it (docs/development.md's cost table).
started = @printf '=== [%s] make %s\n' "$$(date +%T)" $@

GO_PACKAGES := ./...
# The provider's Ceph support is cgo (librados, Ceph Pacific on Debian 12):
# built and tested with these tags; `go build ./...` without them works and
# leaves it out.
CEPH_TAGS := $(GO_TAGS),ceph,pacific
# The node agents are a Go module of their own (agents/go.mod: the hypervisor
# operator's API pins a newer Kubernetes). Their libvirt and Ceph code is cgo
# behind these tags (libvirt-dev, librados-dev: `make agents-deps`).
AGENT_TAGS := libvirt,$(CEPH_TAGS)

# Modules whose CRDs the rendered output is validated against (and that the
# local stack will run); their CRDs are copied from the module cache.
VERSION ?= v0.1.0-dev
PROVIDER_KUBERNETES := github.com/crossplane-contrib/provider-kubernetes@v1.0.0
CROSSPLANE_CORE_MODULE := github.com/crossplane/crossplane/v2@v2.4.0
ROOK := github.com/rook/rook@v1.17.8
METAL_OPERATOR := github.com/ironcore-dev/metal-operator@v0.7.0
HYPERVISOR_OPERATOR := github.com/cobaltcore-dev/openstack-hypervisor-operator@v1.2.3
# The version tools/upstream/flux builds (the demo's kustomize-controller).
KUSTOMIZE_CONTROLLER := github.com/fluxcd/kustomize-controller@v1.9.6
PROVIDER_API_GROUPS := gardener ironcore kvm kubernetes openstack keystone nova cinder neutron ceph ovn
GENERATED_PATHS := apis package provider/package cluster/crds provider/internal/clients/ovn/nbdb provider/internal/clients/ovn/sbdb agents/apis agents/internal/ovs/vswitchd internal/agentbundle/manifests examples/clusters/pools examples/clusters/control-plane
GENERATED_CRDS := $(shell mktemp -d -u)/consumer-crds
GARDENER_CRDS := $(shell mktemp -d -u)/gardener-crds

##@ General

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} \
	  /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } \
	  /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: ## Regenerate every generated file (deepcopy, XRDs, input and provider CRDs, external schemas).
	$(started)
	go tool controller-gen object paths=./apis/...
	@# Managed-resource, ProviderConfig and usage accessors crossplane-runtime
	@# needs, by Crossplane's own generator (crossplane-tools' angryjet, pinned
	@# in go.mod). It type-checks each package as it is, so it runs over its
	@# own earlier output; the hand-written reference resolvers (referencers.go)
	@# need those methods.
	$(foreach g,$(PROVIDER_API_GROUPS),go tool angryjet generate-methodsets ./apis/$(g)/... &&) true
	go tool controller-gen crd:crdVersions=v1 paths=./apis/consumer/... output:crd:dir=$(GENERATED_CRDS)
	go run ./tools/cmd/xrdgen --crds $(GENERATED_CRDS) --out package/xrds --compositions package/compositions
	rm -rf $(GENERATED_CRDS)
	go tool controller-gen crd:crdVersions=v1 paths=./apis/input/... output:crd:dir=package/input
	@# The provider's managed resources and ProviderConfigs. (apis/controlplane
	@# mirrors an external CRD: its CRD goes to cluster/crds/c5c3.)
	rm -rf provider/package/crds
	go tool controller-gen crd:crdVersions=v1 $(foreach g,$(PROVIDER_API_GROUPS),paths=./apis/$(g)/...) output:crd:dir=provider/package/crds
	@# The c5c3 ControlPlane, from the local mirror of the real CRD.
	go tool controller-gen crd:crdVersions=v1 paths=./apis/controlplane/... output:crd:dir=cluster/crds/c5c3
	@# libovsdb models of the OVN databases, from the schemas the provider is
	@# tested against (Debian's ovn-common; the NB/SB schema versions are in them).
	cd provider/internal/clients/ovn && rm -rf nbdb sbdb && \
	  go tool modelgen -p nbdb -o nbdb schema/ovn-nb.ovsschema && go tool modelgen -p sbdb -o sbdb schema/ovn-sb.ovsschema
	@# The external-arbiter-operator's RemoteCluster and RemoteArbiter, from their local mirror.
	go tool controller-gen crd:crdVersions=v1 paths=./apis/arbiter/... output:crd:dir=cluster/crds/arbiter
	@# Gardener serves Shoots from an aggregated API, not a CRD. A CRD derived
	@# from the pinned Go types lets render output be validated offline
	@# (crossplane resource validate); the demo and the tests serve Shoots
	@# from the real gardener-apiserver (local/garden).
	go tool controller-gen crd:crdVersions=v1,allowDangerousTypes=true paths=github.com/gardener/gardener/pkg/apis/core/v1beta1 output:crd:dir=$(GARDENER_CRDS)
	mkdir -p cluster/crds/gardener && cp $(GARDENER_CRDS)/core.gardener.cloud_shoots.yaml $(GARDENER_CRDS)/core.gardener.cloud_cloudprofiles.yaml cluster/crds/gardener/
	@# Gardener marks CloudProfile cluster-scoped with +genclient:nonNamespaced,
	@# which controller-gen does not read: the CRD must say so itself.
	sed -i 's/^  scope: Namespaced$$/  scope: Cluster/' cluster/crds/gardener/core.gardener.cloud_cloudprofiles.yaml
	rm -rf $(GARDENER_CRDS)
	@# provider-kubernetes places objects in Shoots; its ProviderConfig and Object schemas.
	dir=$$(GOFLAGS= go mod download -json $(PROVIDER_KUBERNETES) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	  mkdir -p cluster/crds/provider-kubernetes && \
	  for k in objects providerconfigs; do install -m 0644 $$dir/package/crds/kubernetes.crossplane.io_$$k.yaml cluster/crds/provider-kubernetes/; done
	@# Crossplane's ClusterUsage, which the OpenStackCluster function composes
	@# (core serves it; render output is validated against it offline).
	dir=$$(GOFLAGS= go mod download -json $(CROSSPLANE_CORE_MODULE) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	  mkdir -p cluster/crds/crossplane && install -m 0644 $$dir/cluster/crds/protection.crossplane.io_clusterusages.yaml cluster/crds/crossplane/
	@# The metal-operator's Server CRD, for the ServerInventory tests and the demo's metal cluster.
	dir=$$(GOFLAGS= go mod download -json $(METAL_OPERATOR) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	  mkdir -p cluster/crds/metal-operator && \
	  for k in servers serverclaims; do install -m 0644 $$dir/config/crd/bases/metal.ironcore.dev_$$k.yaml cluster/crds/metal-operator/; done
	@# The openstack-hypervisor-operator's Hypervisor and Eviction, which the hypervisor and HA agents write.
	dir=$$(GOFLAGS= go mod download -json $(HYPERVISOR_OPERATOR) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	  mkdir -p cluster/crds/hypervisor-operator && \
	  for k in hypervisors evictions; do install -m 0644 $$dir/charts/openstack-hypervisor-operator/crds/kvm.cloud.sap_$$k.yaml cluster/crds/hypervisor-operator/; done
	@# The agents' APIs (OVSNode, CephStatus) and the Open_vSwitch models, with
	@# the consumer plane's pinned tools run inside the agents' module.
	cg=$$(go tool -n controller-gen); mg=$$(go tool -n modelgen); cd agents && \
	  $$cg object paths=./apis/... && rm -rf ../cluster/crds/agents && \
	  $$cg crd:crdVersions=v1 paths=./apis/... output:crd:dir=../cluster/crds/agents && \
	  cd internal/ovs && rm -rf vswitchd && $$mg -p vswitchd -o vswitchd schema/vswitch.ovsschema
	@# The pool functions carry the agents' manifests and CRDs (internal/agentbundle).
	rm -rf internal/agentbundle/manifests && mkdir -p internal/agentbundle/manifests && \
	  cp cluster/agents/*.yaml cluster/crds/agents/*.yaml internal/agentbundle/manifests/
	@# Flux's Kustomization, which the pool functions compose per pool (for crossplane render's validation).
	dir=$$(GOFLAGS= go mod download -json $(KUSTOMIZE_CONTROLLER) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	  mkdir -p cluster/crds/flux && install -m 0644 $$dir/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml cluster/crds/flux/
	@# Rook's CRDs, for the CephCluster and pools the storage functions place in pool clusters.
	dir=$$(GOFLAGS= go mod download -json $(ROOK) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
	  mkdir -p cluster/crds/rook && install -m 0644 $$dir/deploy/examples/crds.yaml cluster/crds/rook/ceph.rook.io_crds.yaml
	@# Each kind of cluster's layer (the operators' CRDs above and the agents),
	@# as each cluster's Flux Kustomization applies it.
	go run ./tools/cmd/layers cluster/crds examples/clusters

.PHONY: check-generate
check-generate: ## Fail when generated files differ from what make generate makes of the committed inputs (a check that passed is remembered by the content of those files in ~/.cache/cobaltcore-generate, as go keeps builds).
	$(started)
	tools/generate/check.sh $(GENERATED_PATHS)

.PHONY: build
build: agents-deps ## Build every binary into bin/ (functions, the provider, the agents, the local landscape's and the build tooling's commands).
	go build -o bin/ ./functions/... ./local/cmd/... ./tools/cmd/...
	@# With librados' headers the provider gets its Ceph support.
	go build $(if $(wildcard /usr/include/rados/librados.h),-tags $(CEPH_TAGS)) -o bin/ ./provider/cmd/...
	@# The agents: the OVS agent always; the libvirt and Ceph ones with their headers.
	cd agents && go build -tags '$(AGENT_TAGS)' -o ../bin/ ./cmd/...

.PHONY: lint
lint: agents-deps ## gofmt, go vet (with the cgo tags: agents-deps installs their headers), the shell scripts' syntax, and the layout checks (no shipped binary links local/, tools/ or test/; every documentation link resolves; README ≤ 200 lines; every target depends on what installs the commands it runs).
	$(started)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet $(GO_PACKAGES)
	go vet -tags $(CEPH_TAGS) ./provider/...
	go vet -tags $(GO_TAGS),e2e ./test/e2e/
	cd agents && go vet ./... && go vet -tags '$(AGENT_TAGS)' ./...
	@for f in $$(git ls-files '*.sh' .ci/run); do bash -n "$$f"; done
	go test -count=1 ./test/layout/

.PHONY: tools
tools: ## Build every pinned upstream binary (cached by version): what tools-test builds, and kube-controller-manager, kube-scheduler, kube-proxy and kubelet, which only the local management plane runs.
	tools/upstream/build.sh all

.PHONY: tools-test
tools-test: ## Build the pinned binaries make test needs (cached by version): the crossplane CLI and core, kube-apiserver, etcd, kubectl, gardener-apiserver, provider-kubernetes, Flux's controllers.
	tools/upstream/build.sh test

##@ Test

.PHONY: test
test: tools-test agents-deps check-generate ## The test suite: unit tests and integration tests against the real components.
	@# The lint and the unit tests run niced beside the integration tests,
	@# which wait on the local OpenStack, Ceph and OVN much of their time:
	@# they take the CPU those leave idle instead of a turn of their own.
	$(MAKE) --no-print-directory -j2 --output-sync=line test-beside test-integration

.PHONY: test-beside
test-beside: agents-deps ## lint and test-unit at the lowest CPU priority: what make test runs beside test-integration.
	nice -n 19 $(MAKE) --no-print-directory lint test-unit

.PHONY: test-unit
test-unit: agents-deps ## Unit tests only (no external services), built with the cgo tags the integration tests and the binaries use, so that all of them share one build.
	$(started)
	@# Linked without DWARF, as tools/test/integration.sh says why. Without
	@# -count=1: a package whose test binary and the files and environment
	@# its tests read are unchanged is not linked and run again (go test's
	@# cache, which -trimpath keys by content, so a fresh clone hits it too).
	@# Unit tests reach no service; the integration tests always run.
	go test -ldflags=-w -short -tags $(CEPH_TAGS) $(GO_PACKAGES)
	cd agents && go test -ldflags=-w -short -tags '$(AGENT_TAGS)' ./...

.PHONY: test-integration
test-integration: openstack-up ceph-up agents-deps xpkg ## Integration tests against the real crossplane CLI/core, kube-apiserver + etcd, the local OpenStack, OVN (started by the tests), Ceph, libvirtd and ovsdb-server, and of the built packages.
	$(started)
	tools/test/integration.sh $(CEPH_TAGS) $(GO_PACKAGES)
	cd agents && REQUIRE_INTEGRATION=1 go test -ldflags=-w -tags '$(AGENT_TAGS)' -count=1 -timeout 15m -run 'Integration' ./...

.PHONY: faults
faults: tools-test ceph-up openstack-up ## The fault suite: each case causes a fault on the real components and fails unless the product keeps its promise (docs/operations.md). Today a stretched pool's zone lost and a single-site pool's host lost (I/O back within 120 s, recovered after), a cloud's Keystone or Nova unreachable (the provider backs off, says why, converges after). make test runs them too; make e2e causes the plane's own faults (9: the provider, a function, core and kube-apiserver killed mid-reconcile; 4b and 9g: a hypervisor and a storage pool's cluster API frozen).
	REQUIRE_INTEGRATION=1 go test -count=1 -tags $(CEPH_TAGS) -timeout 20m -run '^TestFault' -v ./provider/integration/

.PHONY: bench-provider
bench-provider: tools-test openstack-up ## The provider's convergence benchmark: 500 resources against the local OpenStack beside a plain gophercloud loop (docs/benchmarks.md).
	REQUIRE_INTEGRATION=1 go test -run '^$$' -bench BenchmarkConverge500 -benchtime=1x -timeout 60m ./provider/integration/

.PHONY: bench-scale
bench-scale: tools-test ceph-deps $(if $(filter-out 0,$(CEPH)),ceph-up) ## The provider at landscape scale: the provider binary against CLOUDS stub clouds (default 500; 5000 for #55's landscape), each its own OpenStack (address, CA, Keystone) and OVN databases (OVN=0 leaves them out), 14 managed resources each, the first CEPH clouds (default none) also their pools and client in the local Ceph (started), with PROVIDER_FLAGS (default: the binary's defaults) and PROVIDER_ENV (variables of the provider's process, e.g. GOMEMLIMIT=1GiB); prints memory, CPU, reconcile rate, staleness, a new cloud's time to Ready, drift repair and restart catch-up (docs/benchmarks.md). CONVERGE_WITHIN (e.g. 40m) ends a landscape not Ready by then with how far it got and a new cloud's wait beside the backlog.
	cd provider/scale && REQUIRE_INTEGRATION=1 COBALTCORE_SCALE_CLOUDS='$(CLOUDS)' COBALTCORE_SCALE_FLAGS='$(PROVIDER_FLAGS)' COBALTCORE_SCALE_ENV='$(PROVIDER_ENV)' COBALTCORE_SCALE_OVN='$(OVN)' \
		COBALTCORE_SCALE_CEPH='$(CEPH)' COBALTCORE_SCALE_CEPH_TAGS='$(CEPH_TAGS)' COBALTCORE_SCALE_CONVERGE_WITHIN='$(CONVERGE_WITHIN)' \
		go test -run '^$$' -bench BenchmarkLandscape -benchtime=1x -count=1 -timeout 240m -v . | grep --line-buffered -vE '^(=== RUN|goos|goarch|pkg|cpu):'

.PHONY: bench-shards
bench-shards: tools-test ## The provider split in two shards (--shards=2), two replicas against CLOUDS stub clouds (default 500) with PROVIDER_FLAGS: each replica holds only its shard, every resource Ready and read each poll, one replica killed while the other's resources go on, its shard taken back on restart (docs/benchmarks.md).
	cd provider/scale && REQUIRE_INTEGRATION=1 COBALTCORE_SCALE_CLOUDS='$(CLOUDS)' COBALTCORE_SCALE_FLAGS='$(PROVIDER_FLAGS)' COBALTCORE_SCALE_ENV='$(PROVIDER_ENV)' COBALTCORE_SCALE_OVN='$(OVN)' \
		go test -run '^$$' -bench BenchmarkShards -benchtime=1x -count=1 -timeout 120m -v . | grep --line-buffered -vE '^(=== RUN|goos|goarch|pkg|cpu):'

.PHONY: bench-provider-ovn-ceph
bench-provider-ovn-ceph: tools-test ceph-up ## The provider's OVN and Ceph benchmarks: 200 OVN rows on a 3-member Raft Northbound, 20 Ceph pools, each beside a plain client loop (docs/benchmarks.md).
	REQUIRE_INTEGRATION=1 go test -tags $(CEPH_TAGS) -run '^$$' -bench 'BenchmarkConverge(OVN200|Ceph20)' -benchtime=1x -timeout 30m ./provider/integration/

.PHONY: bench-agents
bench-agents: tools-test ceph-up agents-deps ## The agents' benchmarks: one introspection cycle of 1,000 domains (test driver and libvirtd side by side) and each agent binary's peak RSS (docs/benchmarks.md).
	cd agents && REQUIRE_INTEGRATION=1 go test -tags '$(AGENT_TAGS)' -run '^$$' -bench Introspect1000 -benchtime=20x -count=1 ./internal/hypervisor/
	cd agents && REQUIRE_INTEGRATION=1 go test -tags '$(AGENT_TAGS)' -run '^$$' -bench AgentsRSS -benchtime=1x -count=1 -v ./internal/bench/ | grep -E 'peak RSS|^Benchmark|^ok'

##@ Local backends (OpenStack: Keystone, Placement, nova-api, cinder-api, neutron-server with OVN and MariaDB; Ceph; all on 127.0.0.1)

.PHONY: openstack-deps
openstack-deps: ## Install the local OpenStack's Debian packages (as root, once).
	local/openstack/install.sh

.PHONY: openstack-up
openstack-up: openstack-deps ## Start the local OpenStack, unless it already runs. Left running; stop with openstack-down.
	@# One start at a time: .ci/run starts it beside make test, whose
	@# test-integration asks for it too; the second waits, then finds it
	@# running. The services it starts must not hold the lock (9>&-).
	@exec 9>$${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}.lock; flock 9; \
	ca=$${COBALTCORE_OPENSTACK_RUN:-/tmp/cobaltcore-openstack}/tls/ca.crt; \
	if curl -sf --cacert $$ca https://127.0.0.1:5000/v3 >/dev/null 2>&1 && timeout 5 bash -c '</dev/tcp/127.0.0.1/6643' 2>/dev/null; then echo "local OpenStack: already running"; \
	elif curl -sfk https://127.0.0.1:5000/v3 >/dev/null 2>&1 || curl -sf http://127.0.0.1:5000/v3 >/dev/null 2>&1; then echo "local OpenStack: an earlier one runs without TLS everywhere (plain HTTP, or OVN without ssl:); restarting it"; \
	  local/openstack/stop.sh && local/openstack/start.sh 9>&-; \
	else local/openstack/start.sh 9>&-; fi

.PHONY: ceph-deps
ceph-deps: ## Install the local Ceph's Debian packages (ceph, crushtool, librados-dev; as root, once).
	local/ceph/install.sh

.PHONY: ceph-up
ceph-up: ceph-deps ## Start the local Ceph (1 mon, 1 mgr, 1 memstore OSD), unless it runs.
	@# One start at a time, as openstack-up.
	@exec 9>$${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}.lock; flock 9; \
	if timeout 10 ceph -c $${COBALTCORE_CEPH_RUN:-/tmp/cobaltcore-ceph}/ceph.conf status >/dev/null 2>&1; then echo "local Ceph: already running"; \
	  else local/ceph/start.sh 9>&-; fi

.PHONY: agents-deps
agents-deps: ## Install what the agents build and test with (as root, once): libvirtd and libvirt-dev, Open vSwitch's ovsdb-server, librados-dev.
	local/agents/install.sh

.PHONY: demo-deps
demo-deps: ## Install the local OCI registry the demo pushes the packages to (Debian's docker-registry) and what its node runs on (containerd, runc, CNI plugins, iptables, conntrack); as root, once.
	local/registry/install.sh
	local/node/install.sh

.PHONY: ceph-down
ceph-down: ## Stop the local Ceph (by the PIDs its daemons wrote; its data is in memory and goes).
	local/ceph/stop.sh

.PHONY: openstack-down
openstack-down: ## Stop the local OpenStack (by the PIDs start.sh recorded).
	local/openstack/stop.sh

##@ Run

.PHONY: xpkg
xpkg: tools-test agents-deps ceph-deps ## Build every package offline into _output/xpkg: the four functions and the provider (runtime images embedded, no Docker), provider-kubernetes from its pinned module, and the Configuration; and the node agents' images into _output/images.
	$(started)
	tools/packaging/build.sh $(VERSION)

.PHONY: demo
demo: tools xpkg demo-deps openstack-up ceph-up ## The main job: a local management plane on real Crossplane core (the packages of make xpkg pushed to a local registry; core installs the Configuration and resolves its dependencies; core's Deployment runtime runs each package as a pod on a real local node (kubelet, containerd), pulled from the registry; Gardener, operator and metal stand-ins; the local OpenStack and Ceph) applying the examples/ GitOps tree until every claim is Ready, then showing what exists. Left running; stop with demo-down.
	local/demo/up.sh

.PHONY: demo-down
demo-down: ## Stop everything make demo started, by PID.
	local/demo/down.sh

# The end-to-end checks' test binary, built before the plane starts: built
# by e2e.sh itself it competed with the plane for the two cores and the
# first checks waited for it.
E2E_TEST := _output/e2e.test

.PHONY: e2e
e2e: tools xpkg demo-deps openstack-up ceph-up e2e-bin ## Start the local management plane, drive it headless (test/e2e/e2e.sh), stop it.
	local/demo/down.sh >/dev/null
	rc=0; local/demo/up.sh && E2E_TEST=$(abspath $(E2E_TEST)) test/e2e/e2e.sh || rc=$$?; local/demo/down.sh; exit $$rc

.PHONY: e2e-bin
e2e-bin: ## Build the end-to-end checks' test binary (test/e2e) into _output/e2e.test.
	go test -c -tags $(GO_TAGS),e2e -o $(E2E_TEST) ./test/e2e

.PHONY: render
render: tools-test ## Render every example claim through the functions with the real CLI and validate the output offline.
	go run ./tools/cmd/render --examples examples --out _output/render
