// Package gardener builds the Gardener Shoots that carry CobaltCore's pools
// and reads their readiness back.
package gardener

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
)

// Labels that tie nodes and bare-metal servers to their pool.
const (
	// LabelPool marks a pool's Shoot and every node of the pool with the
	// pool's name, so schedulers and agents can tell pools apart.
	LabelPool = "c5c3.io/pool"
	// LabelPoolKind says what a pool's nodes are for (hypervisor, storage, control-plane).
	LabelPoolKind = "c5c3.io/pool-kind"
	// LabelMachinePool is the metal-operator Server label that makes a set of
	// bare-metal servers an IronCore machine pool.
	LabelMachinePool = "c5c3.io/machine-pool"
	// LabelDedicatedPool marks the servers and nodes of a dedicated pool with
	// the pool's name. A dedicated pool's ServerClaims require it, so the pool
	// only ever takes servers set aside for it, never a shared pool's.
	LabelDedicatedPool = "c5c3.io/dedicated-pool"
	// TaintDedicated keeps everything that does not tolerate it off the nodes
	// of a dedicated pool.
	TaintDedicated = "c5c3.io/dedicated"
)

// AnnotationConfirmDeletion is the annotation Gardener requires on a Shoot
// before it accepts its deletion (the DeletionConfirmation admission
// plugin). The functions set it on every Shoot they compose: a pool's Shoot
// is deleted only when its composite is, which the pool's claim and the
// Usages of the clouds on it already guard.
const AnnotationConfirmDeletion = "confirmation.gardener.cloud/deletion"

// maxProjectAndShootName is Gardener's limit on the length of a Shoot's name
// and its project's name together.
const maxProjectAndShootName = 21

// MaxShootName is the longest Shoot name Gardener accepts in the project
// whose namespace is given. A project's namespace is garden-<project> by
// Gardener's convention, which is what this relies on.
func MaxShootName(projectNamespace string) int {
	return maxProjectAndShootName - len(strings.TrimPrefix(projectNamespace, "garden-"))
}

// shootNameHashLen is how many hex digits of a long name's hash end the
// Shoot's name derived from it: 20 bits, so two long names that share their
// beginning name the same Shoot with a chance of about one in a million.
const shootNameHashLen = 5

// ShootName is the name of the Shoot that carries the cluster called name, in
// the project whose namespace is given. A name is the user's and may be longer
// than Gardener allows: one that fits names the Shoot itself; a longer one is
// cut to fit and ends in a hash of the whole name, so the Shoot's name is
// stable (the same name always gives the same Shoot) and long names that
// share a beginning name different Shoots. Gardener's project names have at
// most 10 characters, which leaves at least 11 for the Shoot.
func ShootName(projectNamespace, name string) string {
	max := MaxShootName(projectNamespace)
	if len(name) <= max {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:])[:shootNameHashLen]
	keep := max - len(suffix) - 1
	if keep < 1 {
		// Only a project name longer than Gardener allows gets here; the
		// API server refuses the Shoot with its own message.
		return "s" + suffix
	}
	return strings.TrimRight(name[:keep], "-") + "-" + suffix
}

// ironcoreMetalAPIVersion is the provider config group of the ironcore-metal
// Gardener extension (gardener-extension-provider-ironcore-metal).
const ironcoreMetalAPIVersion = "ironcore-metal.provider.extensions.gardener.cloud/v1alpha1"

// workerConfig mirrors the extension's WorkerConfig; only extraServerLabels is
// needed, and the extension's module pulls in all of Gardener.
type workerConfig struct {
	metav1.TypeMeta `json:",inline"`
	// ExtraServerLabels are merged into the serverSelector of every
	// ServerClaim the machine controller creates for the worker pool.
	ExtraServerLabels map[string]string `json:"extraServerLabels,omitempty"`
}

// Worker is one worker pool of a Shoot.
type Worker struct {
	Name         string
	MachineType  string
	Minimum      int32
	Maximum      int32
	Zones        []string
	NodeLabels   map[string]string
	ServerLabels map[string]string
	Taints       []corev1.Taint
	// VolumeSize of each worker's root volume; the CloudProfile's when empty.
	VolumeSize string
}

// Cluster is what a pool asks of Gardener.
type Cluster struct {
	// Name of the cluster: a pool's spec.name, a control-plane cluster's
	// claim name. The Shoot is named after it (ShootName).
	Name string
	// ShootName overrides the Shoot's name, for a Shoot that already
	// exists under another name than ShootName gives now; empty: ShootName.
	ShootName         string
	Region            string
	KubernetesVersion string
	Labels            map[string]string
	Workers           []Worker
	// HighAvailability spreads the Shoot's control plane over zones.
	HighAvailability bool
}

// AdmissionDenyServiceExternalIPs is the kube-apiserver admission plugin
// every Shoot enables: it refuses Services with spec.externalIPs.
const AdmissionDenyServiceExternalIPs = "DenyServiceExternalIPs"

// NewShoot returns the Shoot for a cluster with the landscape's settings,
// which must be defaulted.
func NewShoot(s *input.ShootSettings, c Cluster) (*gardencorev1beta1.Shoot, error) {
	name := c.ShootName
	if name == "" {
		name = ShootName(s.ProjectNamespace, c.Name)
	}
	shoot := &gardencorev1beta1.Shoot{
		TypeMeta: metav1.TypeMeta{APIVersion: gardencorev1beta1.SchemeGroupVersion.String(), Kind: "Shoot"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   s.ProjectNamespace,
			Labels:      c.Labels,
			Annotations: map[string]string{AnnotationConfirmDeletion: "true"},
		},
		Spec: gardencorev1beta1.ShootSpec{
			CloudProfile:           &gardencorev1beta1.CloudProfileReference{Kind: s.CloudProfile.Kind, Name: s.CloudProfile.Name},
			CredentialsBindingName: ptr.To(s.CredentialsBindingName),
			Region:                 c.Region,
			Kubernetes: gardencorev1beta1.Kubernetes{
				Version: c.KubernetesVersion,
				// Every cluster runs identities the platform hands out
				// (a cloud's control plane in its pools, an arbiter's
				// operator in a control-plane cluster): none may make a
				// Service with externalIPs, which intercepts every node's
				// traffic to those addresses (CVE-2020-8554).
				KubeAPIServer: &gardencorev1beta1.KubeAPIServerConfig{
					AdmissionPlugins: []gardencorev1beta1.AdmissionPlugin{{Name: AdmissionDenyServiceExternalIPs}},
				},
			},
			Networking: &gardencorev1beta1.Networking{
				Type:  ptr.To(s.Networking.Type),
				Nodes: ptr.To(s.Networking.Nodes),
			},
			Provider: gardencorev1beta1.Provider{Type: s.ProviderType},
			Purpose:  ptr.To(gardencorev1beta1.ShootPurpose(s.Purpose)),
		},
	}
	if c.HighAvailability {
		shoot.Spec.ControlPlane = &gardencorev1beta1.ControlPlane{
			HighAvailability: &gardencorev1beta1.HighAvailability{
				FailureTolerance: gardencorev1beta1.FailureTolerance{Type: gardencorev1beta1.FailureToleranceTypeZone},
			},
		}
	}

	for _, w := range c.Workers {
		pc, err := json.Marshal(workerConfig{
			TypeMeta:          metav1.TypeMeta{APIVersion: ironcoreMetalAPIVersion, Kind: "WorkerConfig"},
			ExtraServerLabels: w.ServerLabels,
		})
		if err != nil {
			return nil, fmt.Errorf("cannot encode WorkerConfig of worker %q: %w", w.Name, err)
		}
		image := &gardencorev1beta1.ShootMachineImage{Name: s.MachineImage.Name}
		if s.MachineImage.Version != "" {
			image.Version = ptr.To(s.MachineImage.Version)
		}
		shoot.Spec.Provider.Workers = append(shoot.Spec.Provider.Workers, gardencorev1beta1.Worker{
			Name:    w.Name,
			Machine: gardencorev1beta1.Machine{Type: w.MachineType, Image: image},
			Minimum: w.Minimum,
			Maximum: w.Maximum,
			// Bare metal has no spare capacity to surge into: replace one
			// server at a time and never take one away first.
			MaxSurge:       ptr.To(intstr.FromInt32(1)),
			MaxUnavailable: ptr.To(intstr.FromInt32(0)),
			Zones:          w.Zones,
			Labels:         w.NodeLabels,
			Taints:         w.Taints,
			ProviderConfig: &runtime.RawExtension{Raw: pc},
			Volume:         volume(w.VolumeSize),
		})
	}
	return shoot, nil
}

func volume(size string) *gardencorev1beta1.Volume {
	if size == "" {
		return nil
	}
	return &gardencorev1beta1.Volume{VolumeSize: size}
}

// Conditions a Shoot must report True before its cluster is usable.
var readyConditions = []gardencorev1beta1.ConditionType{
	gardencorev1beta1.ShootAPIServerAvailable,
	gardencorev1beta1.ShootControlPlaneHealthy,
	gardencorev1beta1.ShootEveryNodeReady,
	gardencorev1beta1.ShootSystemComponentsHealthy,
}

// Readiness is what a Shoot's status says about its cluster.
type Readiness struct {
	Ready bool
	// Changing is set while Gardener applies a change to a ready cluster
	// (a reconcile in progress): the cluster stays usable.
	Changing bool
	// Failed is set when Gardener gave up on the last operation.
	Failed bool
	// Message says what the Shoot waits for or why it failed.
	Message string
}

// ReadinessOf reads a Shoot's status the way gardenctl and the dashboard do.
// A Shoot being created or deleted is not ready. An existing Shoot is ready
// while every health condition is True, also while Gardener reconciles it:
// routine reconciles (maintenance, a new worker count) must not take a pool
// away from the clouds that use it.
func ReadinessOf(shoot *gardencorev1beta1.Shoot) Readiness {
	op := shoot.Status.LastOperation
	if op == nil {
		return Readiness{Message: "Gardener has not started to reconcile the Shoot"}
	}
	if op.State == gardencorev1beta1.LastOperationStateFailed {
		msg := fmt.Sprintf("Shoot %s failed: %s", strings.ToLower(string(op.Type)), op.Description)
		for _, e := range shoot.Status.LastErrors {
			msg += "; " + e.Description
		}
		return Readiness{Failed: true, Message: msg}
	}
	inProgress := op.State != gardencorev1beta1.LastOperationStateSucceeded
	progress := fmt.Sprintf("Shoot %s %s (%d%%)", strings.ToLower(string(op.Type)), strings.ToLower(string(op.State)), op.Progress)
	if inProgress && op.Type != gardencorev1beta1.LastOperationTypeReconcile {
		return Readiness{Message: progress}
	}
	for _, t := range readyConditions {
		c := condition(shoot.Status.Conditions, t)
		if c == nil || c.Status != gardencorev1beta1.ConditionTrue {
			if inProgress {
				return Readiness{Message: progress}
			}
			return Readiness{Message: fmt.Sprintf("Shoot condition %s is not True", t)}
		}
	}
	if inProgress {
		return Readiness{Ready: true, Changing: true, Message: "Shoot is ready; Gardener is applying a change: " + progress}
	}
	return Readiness{Ready: true, Message: "Shoot is ready"}
}

func condition(cs []gardencorev1beta1.Condition, t gardencorev1beta1.ConditionType) *gardencorev1beta1.Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// MachineCapacity is what one machine of a CloudProfile machine type offers.
type MachineCapacity struct {
	CPUs        int64
	MemoryBytes int64
}

// MachineCapacityOf looks a machine type up in a CloudProfile.
func MachineCapacityOf(cp *gardencorev1beta1.CloudProfileSpec, machineType string) (MachineCapacity, bool) {
	for _, mt := range cp.MachineTypes {
		if mt.Name == machineType {
			return MachineCapacity{CPUs: mt.CPU.Value(), MemoryBytes: mt.Memory.Value()}, true
		}
	}
	return MachineCapacity{}, false
}
