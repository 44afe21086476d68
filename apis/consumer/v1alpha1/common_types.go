package v1alpha1

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/xcrd"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxNameLength is the longest name a pool or a control-plane cluster may
// have. The name is the user's: the Shoot that carries it gets a name derived
// from it when it is longer than Gardener allows (status.shootName). The
// bound comes from what else the name names: Kubernetes label values and
// namespaces in other clusters, such as a stretched pool's
// ceph-arbiter-<pool>, which must stay within 63 characters.
const MaxNameLength = 40

// PoolName names a pool (hypervisor or storage). Tenants refer to pools by it.
// +kubebuilder:validation:MaxLength=40
// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
type PoolName string

// ClusterName names a control-plane cluster.
// +kubebuilder:validation:MaxLength=40
// +kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`
type ClusterName string

// TenantNamespace is the namespace a tenant claims its clouds in.
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
type TenantNamespace string

// Region is a Gardener region (for example eu-de-1).
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
type Region string

// KubernetesVersion of a Shoot, major.minor or major.minor.patch. The version
// must be offered by the Gardener CloudProfile; Gardener v1.138 supports 1.30
// to 1.35.
// +kubebuilder:validation:Pattern=`^1\.(3[0-9]|[4-9][0-9])(\.[0-9]+)?$`
type KubernetesVersion string

// Quantity is a size such as 200Gi or 500Ti. It is a string, not a
// resource.Quantity, so that a malformed one is reported by its field path.
// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$`
// +kubebuilder:validation:MaxLength=32
type Quantity string

// MachinePoolLabel is the value of the c5c3.io/machine-pool label that marks
// the bare-metal servers of an IronCore machine pool. IronCore has no
// machine-pool object: a pool is the label set that the pool's Shoot worker
// carries in WorkerConfig.extraServerLabels, so that every metal-operator
// ServerClaim of the pool selects only servers carrying it.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$`
type MachinePoolLabel string

// MachineClass is a machine type of the Gardener CloudProfile, which maps to
// the server labels of a kind of bare-metal server.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=63
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9._]*[a-z0-9])?$`
type MachineClass string

// PoolAccess says which tenants may consume a pool. The pool kinds that
// inline it carry the rule that a dedicated pool names its tenants (CEL
// rules of an inlined type do not reach the parent's schema).
type PoolAccess struct {
	// Dedicated pools serve only the tenants in allowedTenants, get a machine
	// pool label of their own and a taint that keeps other workloads off.
	// Shared pools are divided between the clouds that consume them.
	// spec.labels.dedicated: "true", as the C5C3 docs write it, makes a pool
	// dedicated too; a pool marked so may leave allowedTenants empty until a
	// platform engineer names its tenants, and serves no cloud meanwhile.
	// +kubebuilder:default=false
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.dedicated is immutable: create a new pool instead"
	// +optional
	Dedicated bool `json:"dedicated"`

	// AllowedTenants are the tenant namespaces whose clouds may consume the
	// pool. Empty means every tenant, which only a shared pool may be.
	// +kubebuilder:validation:MaxItems=32
	// +listType=set
	// +optional
	AllowedTenants []TenantNamespace `json:"allowedTenants,omitempty"`
}

// defaultName names a pool whose spec.name is omitted after its claim, or
// the composite of a pool created without one.
func (p *PoolPlacement) defaultName(labels map[string]string, composite string) {
	if p.Name != "" {
		return
	}
	p.Name = PoolName(composite)
	if n := labels[xcrd.LabelKeyClaimName]; n != "" {
		p.Name = PoolName(n)
	}
}

// defaultPool fills what the schema leaves to code in either pool kind:
// spec.labels.dedicated, an omitted spec.name, an omitted machine pool.
func defaultPool(x metav1.Object, p *PoolPlacement, a *PoolAccess, machinePool *MachinePoolLabel) {
	a.applyDedicatedLabel(p.Labels)
	p.defaultName(x.GetLabels(), x.GetName())
	if *machinePool == "" {
		*machinePool = MachinePoolLabel(p.Name)
	}
}

// LabelDedicated is the pool label the C5C3 docs mark a dedicated pool with
// (spec.labels: {dedicated: "true"}). It means what spec.dedicated means.
const LabelDedicated = "dedicated"

// applyDedicatedLabel makes a pool the docs' way marks dedicated dedicated.
// The XRD admits the label only as "true" or "false", never "false" beside
// spec.dedicated: true, and keeps it as immutable as spec.dedicated.
func (a *PoolAccess) applyDedicatedLabel(labels map[string]string) {
	if labels[LabelDedicated] == "true" {
		a.Dedicated = true
	}
}

// ShootPhase is the lifecycle phase of a cluster backed by a Gardener Shoot.
// +kubebuilder:validation:Enum=Provisioning;Ready;Failed
type ShootPhase string

// Phases of a cluster backed by a Gardener Shoot.
const (
	ShootPhaseProvisioning ShootPhase = "Provisioning"
	ShootPhaseReady        ShootPhase = "Ready"
	ShootPhaseFailed       ShootPhase = "Failed"
)

// ShootRefusal is Gardener's refusal of the Shoot a cluster asked for (its
// API's validation or admission: a zone its region lacks, a machine type
// its CloudProfile does not offer). The cluster's function keeps it, says it
// on the claim, and asks for the Shoot again once the Shoot it would ask
// for or the CloudProfile changes, or after ten minutes.
type ShootRefusal struct {
	// Message is Gardener's, as Crossplane got it applying the Shoot.
	Message string `json:"message"`
	// Fingerprint of the refused Shoot and of the CloudProfile it was
	// refused against.
	Fingerprint string `json:"fingerprint"`
	// RefusedAt is when the refusal was recorded.
	RefusedAt metav1.Time `json:"refusedAt"`
}

// SecretReference names a Secret.
type SecretReference struct {
	// Name of the Secret.
	Name string `json:"name"`
	// Namespace of the Secret.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// PoolPlacement is where a pool runs and what it is called: the fields every
// pool kind shares.
type PoolPlacement struct {
	// Region is the Gardener region the pool runs in. OpenStack clouds consume
	// only pools of their own region.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.region is immutable"
	Region Region `json:"region"`

	// Name is the pool's name, which tenants use to refer to it; its Shoot is
	// named after it (status.shootName). It must be the claim's metadata.name (or, for a pool
	// created as a composite, the composite's): clouds find a pool by it.
	// When omitted, as the C5C3 docs' provisioning flow writes pool claims,
	// it is that name.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.name is immutable"
	// +optional
	Name PoolName `json:"name,omitempty"`

	// KubernetesVersion of the pool's Shoot.
	// +kubebuilder:default="1.34"
	// +optional
	KubernetesVersion KubernetesVersion `json:"kubernetesVersion,omitempty"`

	// Zones are the availability zones of the region the pool's nodes are
	// spread over (for a storage pool, its Ceph failure domains). When
	// omitted, the pool takes every zone of its region in the landscape's
	// Gardener CloudProfile when it is created, and keeps them
	// (status.zones).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:items:MaxLength=63
	// +listType=set
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Labels are scheduling labels of the pool (for example hardware-gen or
	// tier); they are set on the Shoot and on every node of the pool.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// PoolInventory is what the IronCore inventory holds for a pool: the
// metal-operator Servers carrying the pool's server labels, as the
// provider's ServerInventory observes them.
type PoolInventory struct {
	// Servers carrying the pool's server labels.
	Servers int32 `json:"servers"`
	// Available servers, ready to be claimed.
	Available int32 `json:"available"`
	// Usable servers: every server of the pool's labels that is neither
	// claimed by another pool nor failed. The pool can never grow beyond.
	Usable int32 `json:"usable"`
	// ClaimedByOthers: servers of the pool's labels another pool holds.
	ClaimedByOthers int32 `json:"claimedByOthers"`
	// Failed servers (metal-operator state Error).
	Failed int32 `json:"failed"`
	// Capacity of the usable servers.
	Capacity Capacity `json:"capacity"`
}
