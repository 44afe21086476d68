// Command render renders every example claim through the project's
// Compositions and functions with the real crossplane CLI and Crossplane
// core, validates what they compose offline, and prints what each claim
// composes. It is `make render`, the project's main job on a local machine.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/tools/render"
)

type cli struct {
	Examples string   `default:"examples" help:"Directory of example claims (searched recursively)." type:"existingdir"`
	Package  string   `default:"package" help:"Directory of the Configuration package (XRDs, Compositions)." type:"existingdir"`
	Schemas  []string `default:"cluster/crds,provider/package/crds" help:"Directories of CRDs of composed resources, for validation." type:"existingdir"`
	Out      string   `default:"_output/render" help:"Directory to write each rendered claim to." type:"path"`
	Root     string   `default:"." help:"Repository root (where go.mod and functions/ are)." type:"existingdir"`
	// The landscape's Gardener CloudProfile: pools and control-plane
	// clusters without spec.zones take their region's zones from it.
	CloudProfile string `default:"local/garden/cloudprofile.yaml" help:"The landscape's Gardener CloudProfile, supplied to every claim." type:"existingfile"`
}

func (c *cli) Run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	tools, err := render.ToolsFromEnv()
	if err != nil {
		return err
	}
	cat, err := render.LoadCatalog(c.Package)
	if err != nil {
		return err
	}
	claims, err := render.FindClaims(c.Examples, cat)
	if err != nil {
		return err
	}
	if len(claims) == 0 {
		return fmt.Errorf("no claims of a kind defined in %s found below %s", c.Package, c.Examples)
	}

	fns, err := render.StartFunctions(ctx, c.Root, cat.FunctionNames())
	defer fns.Stop()
	if err != nil {
		return err
	}
	fmt.Printf("functions the Compositions call: %s\n", strings.Join(cat.FunctionNames(), ", "))
	if len(fns.Missing) > 0 {
		fmt.Printf("not in this repository yet (claims that need them are validated, not rendered): %s\n", strings.Join(fns.Missing, ", "))
	}

	// The composites rendered so far are what a cluster would hold: they are
	// supplied as required resources to the claims after them, so tenants'
	// clouds (under tenants/, after infrastructure/) are checked against the
	// example pools and against each other's allocations.
	landscape, err := os.CreateTemp("", "landscape-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(landscape.Name()) //nolint:errcheck // best-effort cleanup
	defer landscape.Close()           //nolint:errcheck // best-effort cleanup
	profile, err := os.ReadFile(c.CloudProfile)
	if err != nil {
		return err
	}
	if _, err := landscape.Write(profile); err != nil {
		return err
	}

	schemas := append([]string{c.Package}, c.Schemas...)
	failed, validatedOnly := 0, 0
	for _, cl := range claims {
		fmt.Printf("\n%s: %s %s/%s\n", relative(cl.File), cl.Object.GetKind(), cl.Object.GetNamespace(), cl.Object.GetName())
		out, err := renderOne(ctx, tools, cat, fns, cl, schemas, landscape.Name())
		if err != nil {
			failed++
			fmt.Printf("  FAILED: %v\n", err)
			continue
		}
		if out.rendered == nil {
			validatedOnly++
			fmt.Printf("  valid claim; not rendered: %s\n", out.summary[0])
			continue
		}
		for _, l := range out.summary {
			fmt.Println(l)
		}
		if xr := render.Composite(out.rendered, cat); xr != nil {
			b, err := yaml.Marshal(xr.Object)
			if err != nil {
				return err
			}
			if _, err := landscape.Write(append([]byte("---\n"), b...)); err != nil {
				return err
			}
		}
		rel, _ := filepath.Rel(c.Examples, cl.File)
		dst := filepath.Join(c.Out, render.OutputName(rel, cl.Object))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, out.rendered, 0o644); err != nil { //nolint:gosec // output for people to read
			return err
		}
		fmt.Printf("  valid; rendered to %s\n", relative(dst))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d claims failed to render or validate", failed, len(claims))
	}
	if validatedOnly > 0 {
		fmt.Printf("\n%d claims: %d rendered and validated, %d only validated (their functions are not built yet)\n", len(claims), len(claims)-validatedOnly, validatedOnly)
		return nil
	}
	fmt.Printf("\n%d claims rendered and validated\n", len(claims))
	return nil
}

type result struct {
	rendered []byte
	summary  []string
}

func renderOne(ctx context.Context, tools render.Tools, cat *render.Catalog, fns *render.Functions, cl render.Claim, schemas []string, required string) (*result, error) {
	res, err := cat.Resolve(cl.Object)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "claim-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name()) //nolint:errcheck // best-effort cleanup
	b, err := yaml.Marshal(cl.Object.Object)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}

	if out, err := tools.ValidateFile(ctx, f.Name(), schemas...); err != nil {
		return nil, fmt.Errorf("invalid claim: %w\n%s", err, out)
	}
	if missing := fns.Runs(cat.FunctionsOf(res.Composition)...); len(missing) > 0 {
		return &result{summary: []string{fmt.Sprintf("%s calls %s, not built yet", relative(res.Composition), strings.Join(missing, ", "))}}, nil
	}
	rendered, err := tools.Render(ctx, fns, render.Request{File: f.Name(), Resolution: res, Required: required})
	if err != nil {
		return nil, err
	}
	if out, err := tools.Validate(ctx, rendered, schemas...); err != nil {
		return nil, fmt.Errorf("invalid output of %s: %w\n%s", res.Composition, err, out)
	}
	summary, err := render.Summary(rendered, cat)
	if err != nil {
		return nil, err
	}
	return &result{rendered: rendered, summary: summary}, nil
}

// relative shortens a path for people to read.
func relative(path string) string {
	wd, err := os.Getwd()
	if err != nil {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

func main() {
	ctx := kong.Parse(&cli{}, kong.Description("Render and validate every example claim with the real crossplane CLI."))
	ctx.FatalIfErrorf(ctx.Run())
}
