package render

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Tools are the real binaries a render needs.
type Tools struct {
	// Crossplane is the crossplane CLI (v2.5).
	Crossplane string
	// Core is the Crossplane core binary the CLI renders with.
	Core string
	// ValidateCache is the seeded schema cache of `crossplane resource validate`.
	ValidateCache string
}

// ToolsFromEnv reads the tool locations `make` exports (see tools/upstream/build.sh --env).
func ToolsFromEnv() (Tools, error) {
	t := Tools{
		Crossplane:    os.Getenv("CROSSPLANE"),
		Core:          os.Getenv("CROSSPLANE_CORE"),
		ValidateCache: os.Getenv("CROSSPLANE_VALIDATE_CACHE"),
	}
	for name, path := range map[string]string{"CROSSPLANE": t.Crossplane, "CROSSPLANE_CORE": t.Core} {
		if path == "" {
			return t, fmt.Errorf("%s is not set: run through make, or export the output of tools/upstream/build.sh --env", name)
		}
		if _, err := os.Stat(path); err != nil {
			return t, fmt.Errorf("%s=%s does not exist: run make tools", name, path)
		}
	}
	return t, nil
}

// Functions are the project's composition functions, built and running
// locally with the Development runtime that `crossplane render` connects to.
type Functions struct {
	// File is a functions.yaml naming every running function.
	File string
	// Missing are the functions asked for that this repository does not
	// have (yet); Compositions that call them cannot be rendered.
	Missing []string
	procs   []*exec.Cmd
	dir     string
}

// Runs reports whether every named function is running.
func (f *Functions) Runs(names ...string) (missing []string) {
	for _, n := range names {
		for _, m := range f.Missing {
			if n == m {
				missing = append(missing, n)
			}
		}
	}
	return missing
}

// StartFunctions builds every function below root/functions that the names
// ask for, starts each on a free loopback port, and waits until all listen.
// Names without a function in this repository are recorded in Missing.
// Stop must be called on every path.
func StartFunctions(ctx context.Context, root string, names []string) (*Functions, error) {
	dir, err := os.MkdirTemp("", "render-functions-")
	if err != nil {
		return nil, err
	}
	fns := &Functions{dir: dir, File: filepath.Join(dir, "functions.yaml")}

	pkgs, err := functionPackages(root)
	if err != nil {
		return fns, err
	}
	var docs []string
	for _, name := range names {
		pkg, ok := pkgs[name]
		if !ok {
			fns.Missing = append(fns.Missing, name)
			continue
		}
		bin := filepath.Join(dir, name)
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./"+pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return fns, fmt.Errorf("cannot build function %s: %w\n%s", name, err, out)
		}
		addr, err := freeLoopbackAddress()
		if err != nil {
			return fns, err
		}
		p := exec.CommandContext(ctx, bin, "--insecure", "--address", addr, "--metrics-address", "") //nolint:gosec // our own binary
		p.Stdout, p.Stderr = os.Stderr, os.Stderr
		if err := p.Start(); err != nil {
			return fns, fmt.Errorf("cannot start function %s: %w", name, err)
		}
		fns.procs = append(fns.procs, p)
		if err := waitListening(addr, 30*time.Second); err != nil {
			return fns, fmt.Errorf("function %s: %w", name, err)
		}
		docs = append(docs, fmt.Sprintf(`apiVersion: pkg.crossplane.io/v1beta1
kind: Function
metadata:
  name: %s
  annotations:
    render.crossplane.io/runtime: Development
    render.crossplane.io/runtime-development-target: %s
spec:
  package: xpkg.c5c3.io/%s:v0.0.0-render
`, name, addr, name))
	}
	return fns, os.WriteFile(fns.File, []byte(strings.Join(docs, "---\n")), 0o600)
}

// Stop ends the functions and removes their binaries.
func (f *Functions) Stop() {
	for _, p := range f.procs {
		_ = p.Process.Kill()
		_ = p.Wait()
	}
	_ = os.RemoveAll(f.dir)
}

// functionPackages maps function names, as the Compositions reference them,
// to their package directories. A Function Crossplane installs as a
// dependency of the Configuration (root/crossplane.yaml) is named after its
// repository (xpkg.c5c3.io/cobaltcore/function-x is cobaltcore-function-x),
// so a package whose metadata name ends such a repository goes by that name.
func functionPackages(root string) (map[string]string, error) {
	metas, err := filepath.Glob(filepath.Join(root, "functions", "*", "package", "crossplane.yaml"))
	if err != nil {
		return nil, err
	}
	installed, err := dependencyNames(filepath.Join(root, "crossplane.yaml"))
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range metas {
		objs, err := ReadObjects(m)
		if err != nil || len(objs) != 1 {
			return nil, fmt.Errorf("%s: want one Function package metadata object: %v", m, err)
		}
		rel, err := filepath.Rel(root, filepath.Dir(filepath.Dir(m)))
		if err != nil {
			return nil, err
		}
		name := objs[0].GetName()
		if n, ok := installed[name]; ok {
			name = n
		}
		out[name] = rel
	}
	return out, nil
}

// dependencyNames maps the last path element of each function the
// Configuration depends on to the name Crossplane gives the Function it
// installs: its repository (without the registry) as a DNS label.
func dependencyNames(configuration string) (map[string]string, error) {
	objs, err := ReadObjects(configuration)
	if err != nil || len(objs) != 1 {
		return nil, fmt.Errorf("%s: want one Configuration package metadata object: %v", configuration, err)
	}
	deps, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "dependsOn")
	out := map[string]string{}
	for _, d := range deps {
		fn, _ := d.(map[string]any)["function"].(string)
		if fn == "" {
			continue
		}
		_, repo, _ := strings.Cut(fn, "/")
		out[path.Base(repo)] = dnsLabel(repo)
	}
	return out, nil
}

// dnsLabel is crossplane-runtime's xpkg.ToDNSLabel, by which core names a
// dependency's package (importing that package would bring its image
// signature verification, sigstore and all, into this module): lower-case
// letters and digits kept, '.', '/', ':' and '-' made '-' except first and
// last, at most 63 characters, no '-' at either end.
func dnsLabel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
		}
		if (c == '.' || c == '/' || c == ':' || c == '-') && i != 0 && i != 62 && i != len(s)-1 {
			b.WriteByte('-')
		}
		if i == 62 {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}

func freeLoopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close() //nolint:errcheck // only used to find a free port
	return l.Addr().String(), nil
}

func waitListening(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %s: %w", addr, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Request is one render: a claim or composite with what resolves it.
type Request struct {
	// File holds the claim or composite, alone.
	File string
	Resolution
	// Observed is an optional file of observed composed resources, to render
	// a later reconcile than the first.
	Observed string
	// Required is an optional file of resources the functions require
	// (Crossplane would fetch them from the cluster).
	Required string
}

// Render runs `crossplane composition render` and returns what it prints:
// the composite and every composed resource, in YAML. A claim is first
// turned into its composite with `crossplane xr generate`, as Crossplane's
// claim controller would; the composite keeps the claim's name (not a random
// suffix) so that renders are repeatable.
func (t Tools) Render(ctx context.Context, fns *Functions, r Request) ([]byte, error) {
	xr := r.File
	if r.Claim {
		objs, err := ReadObjects(r.File)
		if err != nil || len(objs) != 1 {
			return nil, fmt.Errorf("%s must hold exactly one claim: %v", r.File, err)
		}
		f, err := os.CreateTemp("", "xr-*.yaml")
		if err != nil {
			return nil, err
		}
		_ = f.Close()
		defer os.Remove(f.Name()) //nolint:errcheck // best-effort cleanup
		if _, err := run(ctx, t.Crossplane, "xr", "generate", r.File, "--kind="+r.CompositeKind,
			"--name="+objs[0].GetName(), "--output-file="+f.Name()); err != nil {
			return nil, err
		}
		xr = f.Name()
	}
	args := []string{"composition", "render", xr, r.Composition, fns.File,
		"--crossplane-binary=" + t.Core, "--xrd=" + r.XRD, "--include-function-results", "--include-full-xr"}
	if r.Observed != "" {
		args = append(args, "--observed-resources="+r.Observed)
	}
	if r.Required != "" {
		args = append(args, "--required-resources="+r.Required)
	}
	out, err := run(ctx, t.Crossplane, args...)
	if err != nil {
		return out, err
	}
	return sortResults(out), nil
}

// sortResults orders the render.crossplane.io Result documents at the end of
// a render by their text. Crossplane emits some of them (one per composed
// resource that is not ready yet) in map order, which would make repeated
// renders differ; every other document keeps its place and bytes.
func sortResults(rendered []byte) []byte {
	docs := strings.Split(string(rendered), "---\n")
	var others, results []string
	for _, d := range docs {
		if strings.Contains(d, "apiVersion: render.crossplane.io/") && strings.Contains(d, "kind: Result\n") {
			results = append(results, d)
			continue
		}
		others = append(others, d)
	}
	slices.Sort(results)
	return []byte(strings.Join(append(others, results...), "---\n"))
}

// ValidateFile checks the objects of a file against the XRDs and CRDs in
// schemaDirs with `crossplane resource validate`, offline, and fails on any
// invalid object or on an object it has no schema for.
func (t Tools) ValidateFile(ctx context.Context, file string, schemaDirs ...string) ([]byte, error) {
	return run(ctx, t.Crossplane, "resource", "validate", strings.Join(schemaDirs, ","), file,
		"--cache-dir="+t.ValidateCache, "--error-on-missing-schemas")
}

// Validate checks rendered objects like ValidateFile, with the manifests of
// provider-kubernetes Objects as objects of their own (see validatable).
func (t Tools) Validate(ctx context.Context, rendered []byte, schemaDirs ...string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "render-validate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) //nolint:errcheck // best-effort cleanup
	in := filepath.Join(dir, "rendered.yaml")
	if err := os.WriteFile(in, validatable(rendered), 0o600); err != nil {
		return nil, err
	}
	return t.ValidateFile(ctx, in, schemaDirs...)
}

// validatable drops the function results (render.crossplane.io Result
// objects), which have no schema, and adds the manifest of every
// provider-kubernetes Object: the Object's schema takes any embedded object,
// so what it will create in the remote cluster is validated on its own.
func validatable(rendered []byte) []byte {
	objs, err := ParseObjects(rendered)
	if err != nil {
		return rendered
	}
	var out [][]byte
	for _, o := range objs {
		if strings.HasPrefix(o.GetAPIVersion(), "render.crossplane.io/") {
			continue
		}
		docs := []map[string]any{o.Object}
		if strings.HasPrefix(o.GetAPIVersion(), "kubernetes.crossplane.io/") && o.GetKind() == "Object" {
			if m, ok, _ := unstructured.NestedMap(o.Object, "spec", "forProvider", "manifest"); ok {
				docs = append(docs, m)
			}
		}
		for _, d := range docs {
			b, err := yaml.Marshal(d)
			if err != nil {
				return rendered
			}
			out = append(out, b)
		}
	}
	return bytes.Join(out, []byte("---\n"))
}

func run(ctx context.Context, bin string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(bin), strings.Join(args[:2], " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes(), nil
}

// Summary is one line per object of a render: the claim, its composite,
// what they compose, and the functions' results.
func Summary(rendered []byte, cat *Catalog) ([]string, error) {
	objs, err := ParseObjects(rendered)
	if err != nil {
		return nil, err
	}
	lines := make([]string, 0, len(objs))
	for _, o := range objs {
		lines = append(lines, describe(o, cat))
	}
	return lines, nil
}

func describe(o *unstructured.Unstructured, cat *Catalog) string {
	if strings.HasPrefix(o.GetAPIVersion(), "render.crossplane.io/") {
		sev, _, _ := unstructured.NestedString(o.Object, "severity")
		msg, _, _ := unstructured.NestedString(o.Object, "message")
		return fmt.Sprintf("  %-9s %s: %s", "result", strings.TrimPrefix(sev, "SEVERITY_"), msg)
	}
	name := o.GetName()
	if o.GetNamespace() != "" {
		name = o.GetNamespace() + "/" + name
	}
	role := "composed"
	if d, ok := cat.xrds[o.GroupVersionKind().GroupKind()]; ok {
		role = "composite"
		if d.xrd.Spec.ClaimNames != nil && d.xrd.Spec.ClaimNames.Kind == o.GetKind() {
			role = "claim"
		}
	}
	line := fmt.Sprintf("  %-9s %s %s (%s)", role, o.GetKind(), name, o.GetAPIVersion())
	if role != "composite" {
		return line
	}
	// What a composite's status says: its phase, and what it waits on.
	if phase, ok, _ := unstructured.NestedString(o.Object, "status", "phase"); ok {
		line += ", phase " + phase
	}
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		if m["status"] == "True" || typ == "Ready" || typ == "Synced" || m["message"] == nil {
			continue
		}
		line += fmt.Sprintf("\n  %-9s %s=False: %s", "condition", typ, m["message"])
	}
	return line
}

// Composite returns the composite of a render (its first object of a kind
// the catalog defines), or nil.
func Composite(rendered []byte, cat *Catalog) *unstructured.Unstructured {
	objs, err := ParseObjects(rendered)
	if err != nil {
		return nil
	}
	for _, o := range objs {
		if cat.Defines(o) {
			return o
		}
	}
	return nil
}

// OutputName is where the render of a claim in file rel (relative to the
// examples) goes: the file's name, and the claim's name when they differ.
func OutputName(rel string, claim *unstructured.Unstructured) string {
	stem := strings.TrimSuffix(rel, ".yaml")
	if filepath.Base(stem) == claim.GetName() {
		return stem + ".yaml"
	}
	return stem + "-" + claim.GetName() + ".yaml"
}

// Claim is an example claim (or composite) and the file it is in.
type Claim struct {
	File   string
	Object *unstructured.Unstructured
}

// FindClaims returns every object below dir whose kind the catalog defines,
// in file order.
func FindClaims(dir string, cat *Catalog) ([]Claim, error) {
	var out []Claim
	err := walkYAML(dir, func(file string, u *unstructured.Unstructured) error {
		if cat.Defines(u) {
			out = append(out, Claim{File: file, Object: u})
		}
		return nil
	})
	return out, err
}
