package pool

import (
	"fmt"
	"unicode"

	"github.com/crossplane/function-sdk-go/errors"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/gardener"
)

// Machines are the bare-metal servers a pool's single worker pool runs on.
type Machines struct {
	// Worker names the Shoot's worker pool.
	Worker       string
	MachinePool  v1alpha1.MachinePoolLabel
	MachineClass v1alpha1.MachineClass
	Minimum      int32
	Maximum      int32
}

// Cluster says what a hypervisor or storage pool asks of Gardener. A
// dedicated pool's servers carry a label of their own and its nodes a taint,
// so that neither its servers nor its nodes are ever shared.
func Cluster(k Kind, p v1alpha1.PoolPlacement, a v1alpha1.PoolAccess, m Machines) gardener.Cluster {
	poolLabels := map[string]string{gardener.LabelPool: string(p.Name), gardener.LabelPoolKind: string(k)}
	serverLabels := map[string]string{gardener.LabelMachinePool: string(m.MachinePool)}
	if a.Dedicated {
		poolLabels[gardener.LabelDedicatedPool] = string(p.Name)
		serverLabels[gardener.LabelDedicatedPool] = string(p.Name)
	}
	nodeLabels := map[string]string{}
	for k, v := range p.Labels {
		nodeLabels[k] = v
	}
	for k, v := range poolLabels {
		nodeLabels[k] = v
	}
	return gardener.Cluster{
		Name:              string(p.Name),
		Region:            string(p.Region),
		KubernetesVersion: string(p.KubernetesVersion),
		Labels:            nodeLabels,
		Workers: []gardener.Worker{{
			Name:         m.Worker,
			MachineType:  string(m.MachineClass),
			Minimum:      m.Minimum,
			Maximum:      m.Maximum,
			Zones:        p.Zones,
			NodeLabels:   nodeLabels,
			ServerLabels: serverLabels,
			Taints:       DedicatedTaints(p, a),
		}},
	}
}

// DedicatedTaints are the taints of a dedicated pool's nodes; workloads that
// belong there (the pool's agents, Rook) tolerate them.
func DedicatedTaints(p v1alpha1.PoolPlacement, a v1alpha1.PoolAccess) []corev1.Taint {
	if !a.Dedicated {
		return nil
	}
	return []corev1.Taint{{Key: gardener.TaintDedicated, Value: string(p.Name), Effect: corev1.TaintEffectNoSchedule}}
}

// ValidateAccess checks a pool's access fields beyond the XRD's schema (as
// the schema does, for a render). A pool marked dedicated the C5C3 docs'
// way, spec.labels.dedicated: "true", may name no tenant yet: it serves no
// cloud until a platform engineer names them.
func ValidateAccess(p v1alpha1.PoolPlacement, a v1alpha1.PoolAccess) error {
	label, labelled := p.Labels[v1alpha1.LabelDedicated]
	switch {
	case labelled && label != "true" && label != "false":
		return fmt.Errorf("spec.labels.dedicated %q marks a dedicated pool, as spec.dedicated does: it must be \"true\" or \"false\"", label)
	case labelled && label == "false" && a.Dedicated:
		return errors.New(`spec.labels.dedicated is "false" and spec.dedicated is true: a pool is dedicated or shared, drop one of them`)
	case a.Dedicated && len(a.AllowedTenants) == 0 && label != "true":
		return errDedicatedWithoutTenants
	}
	return nil
}

// ValidateName checks that clouds can find the pool by its name: a cloud
// requires the pools it names by their claim's name (the label Crossplane
// sets) or, for a pool created as a composite, by the composite's name,
// never by listing every pool (see function-openstack-cluster).
func ValidateName(xr metav1.Object, name v1alpha1.PoolName) error {
	// A name the claim's metadata.name gave (spec.name omitted) has not
	// met the schema's rules for spec.name.
	if name == "" || len(name) > v1alpha1.MaxNameLength || len(validation.IsDNS1123Label(string(name))) > 0 || !unicode.IsLetter(rune(name[0])) {
		return fmt.Errorf("spec.name %q (or the claim's metadata.name it defaults to) must be a DNS label of at most %d characters that starts with a letter: clouds, Shoots and namespaces in other clusters are named after it", name, v1alpha1.MaxNameLength)
	}
	if claim := xr.GetLabels()[function.LabelClaimName]; claim != "" {
		if claim != string(name) {
			return fmt.Errorf("spec.name %q must be the claim's metadata.name (%q): clouds find a pool by its claim's name", name, claim)
		}
		return nil
	}
	if xr.GetName() != string(name) {
		return fmt.Errorf("spec.name %q must be the composite's metadata.name (%q): clouds find a pool created without a claim by its name", name, xr.GetName())
	}
	return nil
}
