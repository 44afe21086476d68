package v1alpha1

// CompositeDefinition is what a CompositeResourceDefinition needs beyond the
// schema that controller-gen derives from the Go types: the claim names and
// the connection details the composite publishes.
type CompositeDefinition struct {
	// Kind and Plural of the cluster-scoped composite resource.
	Kind, Plural string
	// ClaimKind and ClaimPlural of the namespaced claim.
	ClaimKind, ClaimPlural string
	// ConnectionSecretKeys the claim's connection secret holds.
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
		// Clusters publish no connection secret: their admin kubeconfig,
		// kept fresh by a ShootKubeconfig, is for the platform team in
		// the Composition's accessSecretNamespace (status.kubeconfig).
		DefaultComposition: "xcontrolplaneclusters.crossplane.c5c3.io",
	},
	{
		Kind: XHypervisorClusterKind, Plural: "xhypervisorclusters",
		ClaimKind: "HypervisorCluster", ClaimPlural: "hypervisorclusters",
		DefaultComposition: "xhypervisorclusters.crossplane.c5c3.io",
	},
	{
		Kind: XStorageClusterKind, Plural: "xstorageclusters",
		ClaimKind: "StorageCluster", ClaimPlural: "storageclusters",
		DefaultComposition: "xstorageclusters.crossplane.c5c3.io",
	},
	{
		// Tenants pick production, staging or development with
		// spec.compositionSelector.matchLabels[crossplane.c5c3.io/environment];
		// a claim that selects nothing gets production.
		Kind: XOpenStackClusterKind, Plural: "xopenstackclusters",
		ClaimKind: "OpenStackCluster", ClaimPlural: "openstackclusters",
		// The tenant's application credential, written into the claim's
		// namespace by the provider (never through a function).
		ConnectionSecretKeys: []string{"clouds.yaml", "auth_url", "region_name", "application_credential_id", "application_credential_secret", "cacert"},
		DefaultComposition:   "production.xopenstackclusters.crossplane.c5c3.io",
	},
}
