package remote

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource/composed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
)

func init() {
	// composed.From looks up the GVKs of typed objects in this scheme.
	if err := kubernetesv1alpha1.AddToScheme(composed.Scheme); err != nil {
		panic(err)
	}
}

// Copy says which keys of a Secret of the management cluster (a connection
// secret) a Secret in another cluster holds.
type Copy struct {
	// Source is the Secret of the management cluster.
	SourceNamespace, SourceName string
	// Keys copied: remote key by source key.
	Keys []kubernetesv1alpha1.KeyCopy
	// Literals are written as they are: values that are not secret.
	Literals map[string]string
	// Target is the Secret in the other cluster, and its labels.
	TargetNamespace, TargetName string
	Labels                      map[string]string
}

// SecretCopy is this project's provider's SecretCopy of c, through the
// kubernetes.provider.c5c3.io ProviderConfig of the cluster's name (every
// cluster's access composes one beside provider-kubernetes'). It is how a
// key reaches another cluster: provider-kubernetes' patchesFrom would write
// it into the Object's spec and the remote object's last-applied
// annotation, where every reader of Objects and every function request
// sees it (#40).
func SecretCopy(name, providerConfig string, c Copy) (*composed.Unstructured, error) {
	sc := &kubernetesv1alpha1.SecretCopy{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubernetesv1alpha1.SchemeGroupVersion.String(), Kind: kubernetesv1alpha1.SecretCopyKind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kubernetesv1alpha1.SecretCopySpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: providerConfig}},
			ForProvider: kubernetesv1alpha1.SecretCopyParameters{
				Source:   kubernetesv1alpha1.SecretSource{Namespace: c.SourceNamespace, Name: c.SourceName},
				Keys:     c.Keys,
				Literals: c.Literals,
				Target:   kubernetesv1alpha1.SecretTarget{Namespace: c.TargetNamespace, Name: c.TargetName, Labels: c.Labels},
			},
		},
	}
	return function.Composed(sc)
}

// NodeLabel is this project's provider's NodeLabel, through the
// kubernetes.provider.c5c3.io ProviderConfig of the cluster's name: the
// nodes of values carry key with their value, every other node of the
// cluster is without it.
func NodeLabel(name, providerConfig, key string, values map[string]string) (*composed.Unstructured, error) {
	nl := &kubernetesv1alpha1.NodeLabel{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubernetesv1alpha1.SchemeGroupVersion.String(), Kind: kubernetesv1alpha1.NodeLabelKind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kubernetesv1alpha1.NodeLabelSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: providerConfig}},
			ForProvider:                kubernetesv1alpha1.NodeLabelParameters{Key: key, Values: values},
		},
	}
	return function.Composed(nl)
}

// ClusterAccess is this project's provider's ClusterAccess, through the
// kubernetes.provider.c5c3.io ProviderConfig of the cluster's name: a
// kubeconfig of the cluster for ServiceAccount sa, limited to namespace ns
// and to reading the nodes named, published in the management cluster's
// Secret secretNamespace/name. With placement (node labels) it runs
// DaemonSets in ns, confined to the nodes of those labels; without, it
// runs nothing.
func ClusterAccess(name, providerConfig, ns, sa string, nodes []string, placement map[string]string, secretNamespace string) (*composed.Unstructured, error) {
	ca := &kubernetesv1alpha1.ClusterAccess{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubernetesv1alpha1.SchemeGroupVersion.String(), Kind: kubernetesv1alpha1.ClusterAccessKind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: kubernetesv1alpha1.ClusterAccessSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{
				ProviderConfigReference:          &xpv2.Reference{Name: providerConfig},
				WriteConnectionSecretToReference: &xpv2.SecretReference{Namespace: secretNamespace, Name: name},
			},
			ForProvider: kubernetesv1alpha1.ClusterAccessParameters{Namespace: ns, ServiceAccount: sa, Nodes: nodes, Workloads: placement != nil},
		},
	}
	for k, v := range placement {
		if ca.Spec.ForProvider.NodeSelector == nil {
			ca.Spec.ForProvider.NodeSelector = map[string]kubernetesv1alpha1.LabelValue{}
		}
		ca.Spec.ForProvider.NodeSelector[k] = kubernetesv1alpha1.LabelValue(v)
	}
	return function.Composed(ca)
}
