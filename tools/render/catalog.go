// Package render renders claims through this project's Compositions and
// functions with the real crossplane CLI, and validates what they compose,
// offline. `make render` and the render golden tests both use it.
package render

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	xv1 "github.com/crossplane/crossplane/apis/v2/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Catalog is what the Configuration package defines: its XRDs and Compositions.
type Catalog struct {
	// XRDs by the group and kind of the claim and of the composite, with
	// the file each is in: a kind may be served in two groups.
	xrds map[schema.GroupKind]*definition
	// Compositions with their files.
	compositions []*composition
}

type definition struct {
	xrd  xv1.CompositeResourceDefinition
	file string
}

type composition struct {
	comp xv1.Composition
	file string
}

// LoadCatalog reads every XRD and Composition below dir.
func LoadCatalog(dir string) (*Catalog, error) {
	c := &Catalog{xrds: map[schema.GroupKind]*definition{}}
	err := walkYAML(dir, func(file string, u *unstructured.Unstructured) error {
		switch u.GetKind() {
		case xv1.CompositeResourceDefinitionKind:
			d := &definition{file: file}
			if err := fromUnstructured(u, &d.xrd); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			c.xrds[schema.GroupKind{Group: d.xrd.Spec.Group, Kind: d.xrd.Spec.Names.Kind}] = d
			if d.xrd.Spec.ClaimNames != nil {
				c.xrds[schema.GroupKind{Group: d.xrd.Spec.Group, Kind: d.xrd.Spec.ClaimNames.Kind}] = d
			}
		case xv1.CompositionKind:
			cp := &composition{file: file}
			if err := fromUnstructured(u, &cp.comp); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			c.compositions = append(c.compositions, cp)
		}
		return nil
	})
	return c, err
}

// Defines reports whether a claim or composite of this object's group and
// kind is defined.
func (c *Catalog) Defines(o *unstructured.Unstructured) bool {
	_, ok := c.xrds[o.GroupVersionKind().GroupKind()]
	return ok
}

// Resolution is what Crossplane would use to compose a claim or composite.
type Resolution struct {
	// XRD and Composition are the files that define them.
	XRD, Composition string
	// CompositeKind is the kind of the composite; a claim is converted to it
	// before rendering.
	CompositeKind string
	// Claim is set when the object is a claim rather than a composite.
	Claim bool
}

// Resolve returns what Crossplane would use for a claim or composite: its
// compositionRef, else its compositionSelector, else the XRD's default
// Composition.
func (c *Catalog) Resolve(claim *unstructured.Unstructured) (Resolution, error) {
	xrdFile, compositionFile, err := c.resolve(claim)
	if err != nil {
		return Resolution{}, err
	}
	d := c.xrds[claim.GroupVersionKind().GroupKind()]
	return Resolution{
		XRD: xrdFile, Composition: compositionFile,
		CompositeKind: d.xrd.Spec.Names.Kind,
		Claim:         claim.GetKind() != d.xrd.Spec.Names.Kind,
	}, nil
}

func (c *Catalog) resolve(claim *unstructured.Unstructured) (string, string, error) {
	d, ok := c.xrds[claim.GroupVersionKind().GroupKind()]
	if !ok {
		return "", "", fmt.Errorf("no XRD defines %s", claim.GroupVersionKind().GroupKind())
	}
	compositeKind := d.xrd.Spec.Names.Kind
	candidates := []*composition{}
	for _, cp := range c.compositions {
		ref := cp.comp.Spec.CompositeTypeRef
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && ref.Kind == compositeKind && gv.Group == d.xrd.Spec.Group {
			candidates = append(candidates, cp)
		}
	}

	if name, ok, _ := unstructured.NestedString(claim.Object, "spec", "compositionRef", "name"); ok {
		comp, err := pick(candidates, func(cp *composition) bool { return cp.comp.GetName() == name }, "spec.compositionRef.name "+name)
		return d.file, comp, err
	}
	if ml, ok, _ := unstructured.NestedStringMap(claim.Object, "spec", "compositionSelector", "matchLabels"); ok {
		sel := labels.SelectorFromSet(ml)
		comp, err := pick(candidates, func(cp *composition) bool { return sel.Matches(labels.Set(cp.comp.GetLabels())) }, "spec.compositionSelector "+sel.String())
		return d.file, comp, err
	}
	if d.xrd.Spec.DefaultCompositionRef != nil {
		name := d.xrd.Spec.DefaultCompositionRef.Name
		comp, err := pick(candidates, func(cp *composition) bool { return cp.comp.GetName() == name }, "the XRD's defaultCompositionRef "+name)
		return d.file, comp, err
	}
	if len(candidates) == 1 {
		return d.file, candidates[0].file, nil
	}
	return "", "", fmt.Errorf("%d Compositions for %s and nothing selects one", len(candidates), compositeKind)
}

// pick returns the file of the first matching composition. Crossplane picks
// one of several selector matches at random; a render must be repeatable, so
// the first by file name wins.
func pick(cs []*composition, match func(*composition) bool, what string) (string, error) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].file < cs[j].file })
	for _, cp := range cs {
		if match(cp) {
			return cp.file, nil
		}
	}
	return "", fmt.Errorf("no Composition matches %s", what)
}

// FunctionNames lists the functions the Compositions' pipelines call.
func (c *Catalog) FunctionNames() []string {
	return c.functionsOf(func(*composition) bool { return true })
}

// FunctionsOf lists the functions the pipeline of a Composition file calls.
func (c *Catalog) FunctionsOf(compositionFile string) []string {
	return c.functionsOf(func(cp *composition) bool { return cp.file == compositionFile })
}

func (c *Catalog) functionsOf(match func(*composition) bool) []string {
	seen := map[string]bool{}
	for _, cp := range c.compositions {
		if !match(cp) {
			continue
		}
		for _, s := range cp.comp.Spec.Pipeline {
			seen[s.FunctionRef.Name] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// walkYAML calls fn for every object of every .yaml file below dir.
func walkYAML(dir string, fn func(file string, u *unstructured.Unstructured) error) error {
	return filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		objs, err := ReadObjects(path)
		if err != nil {
			return err
		}
		for _, u := range objs {
			if err := fn(path, u); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReadObjects reads every object of a multi-document YAML file.
func ReadObjects(file string) ([]*unstructured.Unstructured, error) {
	b, err := os.ReadFile(file) //nolint:gosec // files of this repository
	if err != nil {
		return nil, err
	}
	return ParseObjects(b)
}

// ParseObjects parses every object of a multi-document YAML stream.
func ParseObjects(b []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func fromUnstructured(u *unstructured.Unstructured, into any) error {
	b, err := yaml.Marshal(u.Object)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(b, into)
}
