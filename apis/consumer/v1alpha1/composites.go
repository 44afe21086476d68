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

// Composites lists every composite resource of the consumer API. make generate
// writes one XRD per entry into package/xrds.
var Composites = []CompositeDefinition{
	{
		Kind: XHypervisorClusterKind, Plural: "xhypervisorclusters",
		ClaimKind: "HypervisorCluster", ClaimPlural: "hypervisorclusters",
		DefaultComposition: "xhypervisorclusters.crossplane.c5c3.io",
	},
}
