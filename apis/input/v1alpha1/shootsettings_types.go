package v1alpha1

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Defaults of ShootSettings. They live here, not in kubebuilder markers,
// because function input is never defaulted by an API server.
const (
	DefaultProjectNamespace        = "garden-c5c3"
	DefaultCloudProfileKind        = "CloudProfile"
	DefaultCloudProfileName        = "ironcore-metal"
	DefaultCredentialsBindingName  = "ironcore-metal"
	DefaultProviderType            = "ironcore-metal"
	DefaultNetworkingType          = "calico"
	DefaultNodesCIDR               = "10.250.0.0/16"
	DefaultMachineImageName        = "gardenlinux"
	DefaultPurpose                 = "production"
	DefaultAccessSecretNamespace   = "crossplane-system"
	DefaultInventoryProviderConfig = "ironcore-metal"
	DefaultLayerSourceKind         = "GitRepository"
	DefaultLayerSourceName         = "cobaltcore-cluster-layers"
	DefaultLayerServiceAccount     = "cobaltcore-cluster-layer"
	DefaultHypervisorLayerPath     = "./clusters/pools/hypervisor"
	DefaultStorageLayerPath        = "./clusters/pools/storage"
	DefaultControlPlaneLayerPath   = "./clusters/control-plane"
)

// InventorySettings say where the pools' bare-metal inventory is observed.
type InventorySettings struct {
	// ProviderConfigName names the ironcore.provider.c5c3.io ProviderConfig
	// of the IronCore metal cluster the pools' servers are in.
	// +optional
	ProviderConfigName string `json:"providerConfigName,omitempty"`
}

// CloudProfileReference names the Gardener CloudProfile of the Shoots.
type CloudProfileReference struct {
	// Kind is CloudProfile or NamespacedCloudProfile.
	// +kubebuilder:validation:Enum=CloudProfile;NamespacedCloudProfile
	// +optional
	Kind string `json:"kind,omitempty"`
	// Name of the CloudProfile.
	// +optional
	Name string `json:"name,omitempty"`
}

// Networking of the Shoots.
type Networking struct {
	// Type of the networking extension (calico or cilium).
	// +optional
	Type string `json:"type,omitempty"`
	// Nodes is the CIDR of the node network; bare-metal Shoots need it.
	// +optional
	Nodes string `json:"nodes,omitempty"`
}

// MachineImage of the workers.
type MachineImage struct {
	// Name of the image in the CloudProfile.
	// +optional
	Name string `json:"name,omitempty"`
	// Version of the image; the CloudProfile's latest when empty.
	// +optional
	Version string `json:"version,omitempty"`
}

// ShootSettings are the landscape's Gardener settings for the Shoots that
// the pool functions compose.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=crossplane
type ShootSettings struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// ProjectNamespace is the Gardener project namespace the Shoots live in.
	// +optional
	ProjectNamespace string `json:"projectNamespace,omitempty"`

	// CloudProfile of the Shoots.
	// +optional
	CloudProfile CloudProfileReference `json:"cloudProfile,omitempty"`

	// CredentialsBindingName names the Gardener CredentialsBinding that gives
	// the Shoots access to the IronCore metal cluster.
	// +optional
	CredentialsBindingName string `json:"credentialsBindingName,omitempty"`

	// ProviderType is the Gardener provider extension of the Shoots.
	// +optional
	ProviderType string `json:"providerType,omitempty"`

	// Networking of the Shoots.
	// +optional
	Networking Networking `json:"networking,omitempty"`

	// MachineImage of the workers.
	// +optional
	MachineImage MachineImage `json:"machineImage,omitempty"`

	// Purpose of the Shoots (evaluation, testing, development, production).
	// +kubebuilder:validation:Enum=evaluation;testing;development;production
	// +optional
	Purpose string `json:"purpose,omitempty"`

	// AccessSecretNamespace is where the kubeconfig Secrets of the Shoots are
	// kept, for the provider-kubernetes ProviderConfigs that read them.
	// +optional
	AccessSecretNamespace string `json:"accessSecretNamespace,omitempty"`

	// Inventory of the hypervisor and storage pools' bare-metal servers.
	// +optional
	Inventory InventorySettings `json:"inventory,omitempty"`

	// AgentImages says where the pools' node agents are pulled from.
	// +optional
	AgentImages AgentImages `json:"agentImages,omitempty"`

	// ClusterLayers says where Flux takes each pool's and control-plane
	// cluster's layer from.
	// +optional
	ClusterLayers ClusterLayers `json:"clusterLayers,omitempty"`
}

// ClusterLayers is how the pool and control-plane cluster functions have
// Flux deliver each cluster's own layer (the CRDs of what they compose in
// it, and a pool's node agents and their admission policy): one Flux
// Kustomization per cluster, in accessSecretNamespace beside the cluster's
// kubeconfig Secret, applying the layer's path of the source into the
// cluster as serviceAccountName.
type ClusterLayers struct {
	// SourceKind of the Flux source holding the layers: GitRepository,
	// OCIRepository or Bucket. GitRepository when empty.
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository;Bucket
	// +optional
	SourceKind string `json:"sourceKind,omitempty"`
	// SourceName of that source, in accessSecretNamespace (Flux's
	// --no-cross-namespace-refs keeps a Kustomization to its own
	// namespace's sources); cobaltcore-cluster-layers when empty.
	// +optional
	SourceName string `json:"sourceName,omitempty"`
	// ServiceAccountName the layer is applied as inside the pool's cluster
	// (Flux impersonates system:serviceaccount:<accessSecretNamespace>:<name>
	// there, and each pool binds it); cobaltcore-cluster-layer when empty.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// HypervisorPath is the hypervisor pools' layer in the source;
	// ./clusters/pools/hypervisor when empty.
	// +optional
	HypervisorPath string `json:"hypervisorPath,omitempty"`
	// StoragePath is the storage pools' layer in the source;
	// ./clusters/pools/storage when empty.
	// +optional
	StoragePath string `json:"storagePath,omitempty"`
	// ControlPlanePath is the control-plane clusters' layer in the source;
	// ./clusters/control-plane when empty.
	// +optional
	ControlPlanePath string `json:"controlPlanePath,omitempty"`
}

// AgentImages are the images of the node agents the pool functions place
// into their pools' clusters: <registry>/<agent>:<tag>, for the agents
// hypervisor-agent, ha-agent, ovs-agent and storage-agent.
type AgentImages struct {
	// Registry the agents' images are pulled from, for a landscape that
	// relocates them to its own registry; xpkg.c5c3.io/cobaltcore when
	// empty.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.:]*[a-z0-9])?(/[a-z0-9]([-a-z0-9._]*[a-z0-9])?)*$`
	// +optional
	Registry string `json:"registry,omitempty"`
	// Tag of the images; the function's own version when empty, so a
	// function places the agents of its release.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`
	// +optional
	Tag string `json:"tag,omitempty"`
}

// Default fills every unset field with its default.
func (s *ShootSettings) Default() {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&s.ProjectNamespace, DefaultProjectNamespace)
	def(&s.CloudProfile.Kind, DefaultCloudProfileKind)
	def(&s.CloudProfile.Name, DefaultCloudProfileName)
	def(&s.CredentialsBindingName, DefaultCredentialsBindingName)
	def(&s.ProviderType, DefaultProviderType)
	def(&s.Networking.Type, DefaultNetworkingType)
	def(&s.Networking.Nodes, DefaultNodesCIDR)
	def(&s.MachineImage.Name, DefaultMachineImageName)
	def(&s.Purpose, DefaultPurpose)
	def(&s.AccessSecretNamespace, DefaultAccessSecretNamespace)
	def(&s.Inventory.ProviderConfigName, DefaultInventoryProviderConfig)
	def(&s.ClusterLayers.SourceKind, DefaultLayerSourceKind)
	def(&s.ClusterLayers.SourceName, DefaultLayerSourceName)
	def(&s.ClusterLayers.ServiceAccountName, DefaultLayerServiceAccount)
	def(&s.ClusterLayers.HypervisorPath, DefaultHypervisorLayerPath)
	def(&s.ClusterLayers.StoragePath, DefaultStorageLayerPath)
	def(&s.ClusterLayers.ControlPlanePath, DefaultControlPlaneLayerPath)
}

// Validate reports the first invalid field of defaulted settings, naming its
// path in the Composition's function input.
func (s *ShootSettings) Validate() error {
	switch s.CloudProfile.Kind {
	case "CloudProfile", "NamespacedCloudProfile":
	default:
		return fmt.Errorf("input.cloudProfile.kind %q is invalid: want CloudProfile or NamespacedCloudProfile", s.CloudProfile.Kind)
	}
	switch s.Purpose {
	case "evaluation", "testing", "development", "production":
	default:
		return fmt.Errorf("input.purpose %q is invalid: want one of evaluation, testing, development, production", s.Purpose)
	}
	if _, err := netip.ParsePrefix(s.Networking.Nodes); err != nil {
		return fmt.Errorf("input.networking.nodes %q is not a CIDR such as 10.250.0.0/16", s.Networking.Nodes)
	}
	switch s.ClusterLayers.SourceKind {
	case "GitRepository", "OCIRepository", "Bucket":
	default:
		return fmt.Errorf("input.clusterLayers.sourceKind %q is invalid: want GitRepository, OCIRepository or Bucket", s.ClusterLayers.SourceKind)
	}
	for _, f := range []struct{ field, path string }{
		{"hypervisorPath", s.ClusterLayers.HypervisorPath}, {"storagePath", s.ClusterLayers.StoragePath}, {"controlPlanePath", s.ClusterLayers.ControlPlanePath},
	} {
		if !strings.HasPrefix(f.path, "./") || slices.Contains(strings.Split(f.path, "/"), "..") {
			return fmt.Errorf("input.clusterLayers.%s %q is invalid: want a path inside the source, such as ./clusters/pools/hypervisor", f.field, f.path)
		}
	}
	return nil
}
