package v1alpha1

// CompositeDefinition is what a CompositeResourceDefinition needs beyond the
// schema that controller-gen derives from the Go types: the claim names and
// the connection details the composite publishes.
type CompositeDefinition struct {
	// Group serves the composite and its claim; empty is the Go type's
	// (Group). A kind listed twice is served in both groups, with the
	// schema of its one Go type.
	Group string
	// Kind and Plural of the cluster-scoped composite resource.
	Kind, Plural string
	// ClaimKind and ClaimPlural of the namespaced claim.
	ClaimKind, ClaimPlural string
	// ConnectionSecretKeys the claim's connection secret holds.
	ConnectionSecretKeys []string
	// DefaultComposition is used when a claim selects none.
	DefaultComposition string
	// Deprecation, when set, marks every version of the composite and its
	// claim deprecated: the API server answers each request to them with
	// this warning (kubectl prints it), and they keep working.
	Deprecation string
}

// Label that selects one of the OpenStackCluster Compositions.
const LabelEnvironment = "crossplane.c5c3.io/environment"

// cloudConnectionSecretKeys are the keys of a cloud's connection secret:
// the tenant's application credential, written into the claim's namespace
// by the provider (never through a function).
var cloudConnectionSecretKeys = []string{"clouds.yaml", "auth_url", "region_name", "application_credential_id", "application_credential_secret", "cacert"}

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
		// The tenant's cloud as the C5C3 docs write its claim: apiVersion
		// c5c3.io/v1alpha1, the group kubectl's plain "openstackclusters"
		// resolves to. Tenants pick production, staging or development
		// with spec.compositionSelector.matchLabels[crossplane.c5c3.io/environment];
		// a claim that selects nothing gets production. make generate
		// copies the crossplane.c5c3.io Compositions of the kind for this
		// group.
		Group: DocsGroup,
		Kind:  XOpenStackClusterKind, Plural: "xopenstackclusters",
		ClaimKind: "OpenStackCluster", ClaimPlural: "openstackclusters",
		ConnectionSecretKeys: cloudConnectionSecretKeys,
		DefaultComposition:   "production.xopenstackclusters.c5c3.io",
	},
	{
		// The same cloud in the consumer API's own group, where clouds
		// were claimed before they moved to the docs' group: kept, so that
		// no existing cloud is deleted with its kind, and deprecated, so
		// that every request to it says where clouds are claimed now. Its
		// claims are invisible to a plain "kubectl get openstackclusters".
		Kind: XOpenStackClusterKind, Plural: "xopenstackclusters",
		ClaimKind: "OpenStackCluster", ClaimPlural: "openstackclusters",
		ConnectionSecretKeys: cloudConnectionSecretKeys,
		DefaultComposition:   "production.xopenstackclusters.crossplane.c5c3.io",
		Deprecation:          LegacyCloudWarning,
	},
}

// LegacyCloudWarning is what the API server answers every request to an
// OpenStackCluster of crossplane.c5c3.io with.
const LegacyCloudWarning = "crossplane.c5c3.io/v1alpha1 OpenStackCluster is deprecated and not listed by " +
	"kubectl get openstackclusters; claim clouds as c5c3.io/v1alpha1 OpenStackCluster, as the C5C3 docs do " +
	"(docs/tenant-guide.md, Moving a cloud to c5c3.io)"
