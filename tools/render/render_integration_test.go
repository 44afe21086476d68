package render

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the render golden files with what the functions compose now")

const root = "../.."

// Where the schemas of everything the Compositions compose are.
var schemas = []string{
	filepath.Join(root, "package"),
	filepath.Join(root, "cluster", "crds"),
	filepath.Join(root, "provider", "package", "crds"),
}

// tools returns the real crossplane CLI and core, or skips when they are
// absent and integration tests were not required.
func tools(t *testing.T) Tools {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	tl, err := ToolsFromEnv()
	if err != nil {
		if os.Getenv("REQUIRE_INTEGRATION") != "" {
			t.Fatalf("integration test needs the crossplane CLI and core: %v", err)
		}
		t.Skipf("needs the crossplane CLI and core (%v): run `make test-integration`, which builds them with `make tools`", err)
	}
	return tl
}

// The functions the render tests render through: built and started once
// for all of them (each build links four binaries), stopped by TestMain.
var (
	functionsOnce sync.Once
	functions     *Functions
	functionsErr  error
	stopFunctions = func() {}
)

// setup loads the package's catalog and starts the functions it calls, once.
func setup(t *testing.T) (context.Context, Tools, *Catalog, *Functions) {
	t.Helper()
	tl := tools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cat, err := LoadCatalog(filepath.Join(root, "package"))
	if err != nil {
		t.Fatal(err)
	}
	functionsOnce.Do(func() {
		fctx, stop := context.WithCancel(context.Background())
		functions, functionsErr = StartFunctions(fctx, root, cat.FunctionNames())
		stopFunctions = func() {
			if functions != nil {
				functions.Stop()
			}
			stop()
		}
	})
	if functionsErr != nil {
		t.Fatalf("StartFunctions: %v", functionsErr)
	}
	return ctx, tl, cat, functions
}

// validated collects rendered outputs, as `crossplane resource validate`
// should see them (validatable), in one directory: one validate loads the
// schemas once for every render of a test.
type validated struct{ dir string }

func (v validated) add(t *testing.T, name string, rendered []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(v.dir, strings.ReplaceAll(name, "/", "_")), validatable(rendered), 0o600); err != nil {
		t.Fatal(err)
	}
}

// check is a check of its own: every rendered output collected is valid
// against the XRDs and CRDs (the failure names each invalid object).
func (v validated) check(ctx context.Context, t *testing.T, tl Tools) {
	t.Helper()
	t.Run("every rendered output is valid", func(t *testing.T) {
		files, err := os.ReadDir(v.dir)
		if err != nil || len(files) == 0 {
			t.Fatalf("nothing was rendered to validate (%v)", err)
		}
		if out, err := tl.ValidateFile(ctx, v.dir, schemas...); err != nil {
			t.Fatalf("rendered output is invalid: %v\n%s", err, out)
		}
	})
}

// TestRenderExamplesIntegration validates every example claim offline with the
// real `crossplane resource validate`, renders it with the real crossplane CLI
// v2.5 and Crossplane core v2.4 through the functions running locally,
// validates the output, has the real gardener-apiserver admit every Shoot in
// it (admitShoots), and compares it with its golden file. Claims whose
// Composition calls a function this repository does not have yet are only
// validated, and the test says which.
func TestRenderExamplesIntegration(t *testing.T) {
	ctx, tl, cat, fns := setup(t)
	claims, err := FindClaims(filepath.Join(root, "examples"), cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) == 0 {
		t.Fatal("no example claims found below examples/")
	}

	files := make([]string, 0, len(claims))
	for _, cl := range claims {
		files = append(files, cl.File)
	}
	t.Run("every example claim is valid", func(t *testing.T) {
		if out, err := tl.ValidateFile(ctx, strings.Join(files, ","), filepath.Join(root, "package")); err != nil {
			t.Fatalf("an example claim is invalid: %v\n%s", err, out)
		}
	})

	shoots := 0
	t.Cleanup(func() {
		if shoots == 0 && !t.Failed() {
			t.Error("no rendered example composed a Shoot: nothing was submitted to Gardener")
		}
	})
	rendered := validated{dir: t.TempDir()}
	for _, cl := range claims {
		rel, _ := filepath.Rel(filepath.Join(root, "examples"), cl.File)
		name := OutputName(rel, cl.Object)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			res, err := cat.Resolve(cl.Object)
			if err != nil {
				t.Fatal(err)
			}
			if missing := fns.Runs(cat.FunctionsOf(res.Composition)...); len(missing) > 0 {
				t.Logf("valid claim, not rendered: %s calls %v, which this repository does not have yet", res.Composition, missing)
				return
			}
			// The landscape's CloudProfile, as a cluster has it: pools
			// without spec.zones take their region's zones from it.
			got, err := tl.Render(ctx, fns, Request{File: cl.File, Resolution: res, Required: filepath.Join("testdata", "required", "cloudprofile.yaml")})
			if err != nil {
				t.Fatal(err)
			}
			rendered.add(t, name, got)
			shoots += admitShoots(t, got)
			compareGolden(t, filepath.Join("testdata", "golden", "examples", name), got)
		})
	}
	rendered.check(ctx, t, tl)
}

// TestDocsClaimsValidIntegration validates the claims as the C5C3 docs
// write them (pools by name, no shares, no zones) with the real `crossplane
// resource validate` against the XRDs: accepted as written.
func TestDocsClaimsValidIntegration(t *testing.T) {
	tl := tools(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := tl.ValidateFile(ctx, filepath.Join(root, "tools", "xrd", "testdata", "c5c3-docs-claims.yaml"), filepath.Join(root, "package")); err != nil {
		t.Fatalf("the docs' claims are refused: %v\n%s", err, out)
	}
}

// TestRenderObservedIntegration renders later reconciles of example claims,
// with what Crossplane would observe then (testdata/observed) and the
// resources it would supply (testdata/required), and validates and compares
// them like the first. A case with wantErr expects the render to fail with
// the function's Fatal result.
func TestRenderObservedIntegration(t *testing.T) {
	ctx, tl, cat, fns := setup(t)
	const (
		cloudProfile = "cloudprofile.yaml"
		landscape    = "landscape-eu-de-1.yaml"
	)
	cases := []struct {
		name, claim, observed, required, wantErr, wantOutput string
		// check is what else the case must show of the rendered output.
		check func(t *testing.T, rendered []byte)
	}{
		{name: "hypervisorcluster-shoot-failed", claim: "examples/infrastructure/eu-de-1/pools/hypervisor/hv-pool-a.yaml", required: cloudProfile},
		{name: "hypervisorcluster-shoot-ready", claim: "examples/infrastructure/eu-de-1/pools/hypervisor/hv-pool-a.yaml", required: cloudProfile},
		{name: "hypervisorcluster-access-ready", claim: "examples/infrastructure/eu-de-1/pools/hypervisor/hv-pool-a.yaml", required: cloudProfile},
		// The IronCore inventory cannot provide the pool: no Shoot, and a
		// condition saying by how much it falls short or whose servers overlap.
		{name: "hypervisorcluster-under-provisioned", claim: "examples/infrastructure/eu-de-1/pools/hypervisor/hv-pool-a.yaml", required: cloudProfile},
		{name: "hypervisorcluster-dedicated-overlap", claim: "examples/infrastructure/eu-de-1/pools/hypervisor/hv-pool-fin.yaml", required: cloudProfile},
		{name: "controlplanecluster-shoot-ready", claim: "examples/infrastructure/eu-de-1/control-plane/controlplanecluster.yaml", required: cloudProfile},
		{name: "controlplanecluster-access-ready", claim: "examples/infrastructure/eu-de-1/control-plane/controlplanecluster.yaml", required: cloudProfile},
		{name: "storagecluster-access-ready", claim: "examples/infrastructure/eu-de-1/pools/storage/st-pool-a.yaml", required: cloudProfile},
		{name: "storagecluster-ceph-ready", claim: "examples/infrastructure/eu-de-1/pools/storage/st-pool-a.yaml", required: cloudProfile},
		// The stretched pool places its arbiter's identity in the arbiter
		// cluster, allowed only what the arbiter operator does there.
		{name: "storagecluster-stretched-ceph-ready", claim: "examples/infrastructure/eu-de-1/pools/storage/st-pool-s.yaml", required: "stretched",
			check: func(t *testing.T, rendered []byte) { arbiterDoesOnlyItsJob(t, rendered, "controlplane-cp-eu-de-1") }},
		// The docs' multi-tenant scenario: team-a and team-b share hv-pool-a
		// and st-pool-a (team-b-staging already holds 5 nodes in the
		// landscape), finance runs on its dedicated pools.
		{name: "openstackcluster-team-a-prod-pools-ready", claim: "examples/tenants/team-a/openstack-clusters/team-a-prod.yaml", required: landscape},
		{name: "openstackcluster-team-a-prod-storage-ready", claim: "examples/tenants/team-a/openstack-clusters/team-a-prod.yaml", required: landscape},
		{name: "openstackcluster-team-a-prod-control-plane-ready", claim: "examples/tenants/team-a/openstack-clusters/team-a-prod.yaml", required: landscape},
		{name: "openstackcluster-team-a-prod-cloud-ready", claim: "examples/tenants/team-a/openstack-clusters/team-a-prod.yaml", required: landscape},
		{name: "openstackcluster-team-a-prod-ready", claim: "examples/tenants/team-a/openstack-clusters/team-a-prod.yaml", required: landscape},
		// Admitted while hv-pool-b and st-pool-a are still being made: the
		// cloud starts in the control-plane cluster (its namespace), and
		// nothing goes into a pool before it is Ready.
		{
			name: "openstackcluster-team-a-prod-pools-provisioning", claim: "examples/tenants/team-a/openstack-clusters/team-a-prod.yaml", required: "landscape-eu-de-1-pools-provisioning.yaml",
			wantOutput: "the tenant's Ceph pools in st-pool-a wait for the storage pool to be Ready",
			check: func(t *testing.T, rendered []byte) {
				flat := strings.Join(strings.Fields(string(rendered)), " ")
				// hv-pool-a is Ready: the control plane's access to it is issued.
				for _, want := range []string{"kind: Namespace", "phase: Pending", "hypervisor-hv-pool-a-access"} {
					if !strings.Contains(flat, want) {
						t.Errorf("rendered output does not say %q", want)
					}
				}
				for _, not := range []string{"hypervisor-hv-pool-b-access", "storage-st-pool-a-access", "kind: Pool", "kind: Client"} {
					if strings.Contains(flat, not) {
						t.Errorf("rendered output composes %s in a pool still being made", not)
					}
				}
			},
		},
		{name: "openstackcluster-team-a-staging-pools-ready", claim: "examples/tenants/team-a/openstack-clusters/team-a-staging.yaml", required: landscape},
		{name: "openstackcluster-team-b-staging-pools-ready", claim: "examples/tenants/team-b/openstack-clusters/team-b-staging.yaml", required: landscape},
		{name: "openstackcluster-finance-prod-pools-ready", claim: "examples/tenants/finance/openstack-clusters/finance-prod.yaml", required: landscape},
		{name: "openstackcluster-internal-prod-pools-ready", claim: "examples/tenants/internal/openstack-clusters/internal-prod.yaml", required: landscape},
		// A name longer than Gardener allows for Shoots (the C5C3 docs'
		// eu-de-1-control-plane) provisions: its Shoot gets a derived name,
		// which the real gardener-apiserver admits (admitShoots).
		{
			name: "controlplanecluster-docs-long-name", claim: "tools/render/testdata/claims/eu-de-1-control-plane.yaml", required: cloudProfile,
			wantOutput: "shootName: eu-de-1-con-c1757",
		},
		// The docs' cloud in the docs' group (c5c3.io), composed by the
		// c5c3.io copy of the production Composition: its usages of the
		// pools name it in that group.
		{
			name: "openstackcluster-docs-customer-b-staging-pools-ready", claim: "tools/render/testdata/claims/customer-b-staging.yaml", required: landscape,
			wantOutput: "apiVersion: c5c3.io/v1alpha1 kind: XOpenStackCluster resourceRef: name: customer-b-staging",
		},
		// A storage pool without an ironcore section gets the XRD's default
		// machine class, baremetal-storage, which the CloudProfile does not
		// offer: no Shoot, and the claim names the field and what there is.
		{
			name: "storagecluster-default-machine-class", claim: "tools/render/testdata/claims/st-pool-default-machine.yaml", required: cloudProfile,
			wantOutput: `spec.ironcore.machineClass: machine type "baremetal-storage" is not offered by CloudProfile`,
		},
		// The docs' customer-a-prod names no control-plane cluster, in a
		// landscape whose only one in eu-de-1 is the docs'
		// eu-de-1-control-plane: it is placed there (#53 §1), its usage
		// protecting that composite (its pools have not given it nodes
		// yet, so nothing else is composed).
		{
			name: "openstackcluster-docs-customer-a-prod-docs-control-plane", claim: "tools/render/testdata/claims/customer-a-prod.yaml", required: "landscape-docs-control-plane.yaml",
			check: func(t *testing.T, rendered []byte) {
				flat := strings.Join(strings.Fields(string(rendered)), " ")
				for _, want := range []string{"kind: XControlPlaneCluster resourceRef: name: eu-de-1-control-plane-x7k2p", "consumedPools: controlPlaneCluster: eu-de-1-control-plane"} {
					if !strings.Contains(flat, want) {
						t.Errorf("rendered output does not say %q", want)
					}
				}
			},
		},
		// Refused: nothing composed, phase Refused, and the reason in a
		// condition and an event for the claim (the golden file has them).
		{
			name: "openstackcluster-team-b-on-finance-pool", claim: "tools/render/testdata/claims/team-b-on-finance-pool.yaml", required: landscape,
			wantOutput: "spec.hypervisorClusters[0]: hypervisor pool hv-pool-fin is dedicated to other tenants; tenant team-b may not use it",
		},
	}
	rendered := validated{dir: t.TempDir()}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			claim := filepath.Join(root, tc.claim)
			objs, err := ReadObjects(claim)
			if err != nil {
				t.Fatal(err)
			}
			res, err := cat.Resolve(objs[0])
			if err != nil {
				t.Fatal(err)
			}
			r := Request{File: claim, Resolution: res, Required: filepath.Join("testdata", "required", tc.required)}
			if observed := filepath.Join("testdata", "observed", tc.name+".yaml"); exists(observed) {
				r.Observed = observed
			}
			got, err := tl.Render(ctx, fns, r)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error()+string(got), tc.wantErr) {
					t.Fatalf("render should fail with %q, got %v\n%s", tc.wantErr, err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// YAML folds long messages: compare with runs of space as one.
			if !strings.Contains(strings.Join(strings.Fields(string(got)), " "), tc.wantOutput) {
				t.Errorf("rendered output does not say %q:\n%s", tc.wantOutput, got)
			}
			rendered.add(t, tc.name+".yaml", got)
			admitShoots(t, got)
			if tc.check != nil {
				tc.check(t, got)
			}
			compareGolden(t, filepath.Join("testdata", "golden", "observed", tc.name+".yaml"), got)
		})
	}
	rendered.check(ctx, t, tl)
}

func exists(file string) bool {
	_, err := os.Stat(file)
	return err == nil
}

// compareGolden fails with a line diff when got differs from the golden file,
// or rewrites the file with -update.
func compareGolden(t *testing.T, golden string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil { //nolint:gosec // test data
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden) //nolint:gosec // test data
	if err != nil {
		t.Fatalf("cannot read golden file (create it with: go test ./tools/render -run Integration -update): %v", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")); diff != "" {
		t.Errorf("rendered output differs from %s (-want, +got); if the change is intended, run: go test ./tools/render -run Integration -update\n%s", golden, diff)
	}
}
