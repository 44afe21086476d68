package v1alpha1

// CompositeDefinition is what a CompositeResourceDefinition needs beyond the
// schema that controller-gen derives from the Go types: the claim names and
// the connection details the composite publishes.
type CompositeDefinition struct {
	// Kind and Plural of the cluster-scoped composite resource.
	Kind, Plural string
	// ClaimKind and ClaimPlural of the namespaced claim.
	ClaimKind, ClaimPlural string
	// ConnectionSecretKeys the composite may publish.
	ConnectionSecretKeys []string
	// DefaultComposition is used when a claim selects none.
	DefaultComposition string
}

// Label that selects one of the OpenStackCluster Compositions.
const LabelEnvironment = "crossplane.c5c3.io/environment"

// Composites lists every composite resource of the consumer API. make generate
// writes one XRD per entry into package/xrds.
var Composites = []CompositeDefinition{
	{
		Kind: XControlPlaneClusterKind, Plural: "xcontrolplaneclusters",
		ClaimKind: "ControlPlaneCluster", ClaimPlural: "controlplaneclusters",
		ConnectionSecretKeys: []string{"kubeconfig"},
		DefaultComposition:   "xcontrolplaneclusters.crossplane.c5c3.io",
	},
	{
		Kind: XHypervisorClusterKind, Plural: "xhypervisorclusters",
		ClaimKind: "HypervisorCluster", ClaimPlural: "hypervisorclusters",
		ConnectionSecretKeys: []string{"kubeconfig"},
		DefaultComposition:   "xhypervisorclusters.crossplane.c5c3.io",
	},
	{
		Kind: XStorageClusterKind, Plural: "xstorageclusters",
		ClaimKind: "StorageCluster", ClaimPlural: "storageclusters",
		ConnectionSecretKeys: []string{"kubeconfig"},
		DefaultComposition:   "xstorageclusters.crossplane.c5c3.io",
	},
	{
		// Tenants pick production, staging or development with
		// spec.compositionSelector.matchLabels[crossplane.c5c3.io/environment];
		// a claim that selects nothing gets production.
		Kind: XOpenStackClusterKind, Plural: "xopenstackclusters",
		ClaimKind: "OpenStackCluster", ClaimPlural: "openstackclusters",
		ConnectionSecretKeys: []string{"auth_url", "region", "clouds.yaml"},
		DefaultComposition:   "production.xopenstackclusters.crossplane.c5c3.io",
	},
}
