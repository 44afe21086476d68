package main

import (
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// Composed resources that give the provider access to the pool's Ceph.
const (
	resourceCephAdmin          resource.Name = "ceph-admin"
	resourceCephProviderConfig resource.Name = "ceph-provider-config"
)

// What Rook keeps in its namespace about the cluster it runs: the admin key
// (Secret rook-ceph-mon, key admin-secret) and the monitors (ConfigMap
// rook-ceph-mon-endpoints, key data, as name=host:port,...).
const (
	rookMonSecret    = "rook-ceph-mon"
	rookMonSecretKey = "admin-secret"
	rookMonEndpoints = "rook-ceph-mon-endpoints"
)

// composeCephAccess gives the provider's Ceph resources (the tenants'
// pools and CephX clients the OpenStackCluster function composes) access
// to the pool's Ceph: an Object that only reads Rook's admin key and
// monitor list into a Secret of the management cluster, and a Ceph
// ProviderConfig named like the pool's kubernetes ProviderConfig that reads
// that Secret. The key goes from cluster to cluster by reference; no
// function or status ever holds it.
func composeCephAccess(a pool.Access, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) error {
	secret := a.ProviderConfigName() + "-ceph"
	o := remote.Observed(a.ProviderConfigName()+"-ceph-admin", a.ProviderConfigName(), map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": rookMonSecret, "namespace": rookNamespace},
	})
	remote.Publish(o, a.SecretNamespace, secret,
		remote.Detail{APIVersion: "v1", Kind: "Secret", Namespace: rookNamespace, Name: rookMonSecret,
			FieldPath: "data[" + rookMonSecretKey + "]", Key: cephv1alpha1.ConnectionSecretKeyKey},
		remote.Detail{APIVersion: "v1", Kind: "ConfigMap", Namespace: rookNamespace, Name: rookMonEndpoints,
			FieldPath: "data.data", Key: cephv1alpha1.ConnectionSecretKeyMonHost})
	desired[resourceCephAdmin] = &resource.DesiredComposed{Resource: o}

	pc, err := function.Composed(&cephv1alpha1.ProviderConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: cephv1alpha1.SchemeGroupVersion.String(), Kind: "ProviderConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: a.ProviderConfigName()},
		Spec: cephv1alpha1.ProviderConfigSpec{
			User: "admin",
			Credentials: cephv1alpha1.CephCredentials{
				Source: xpv2.CredentialsSourceSecret,
				CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
					SecretReference: xpv2.SecretReference{Namespace: a.SecretNamespace, Name: secret}, Key: cephv1alpha1.ConnectionSecretKeyKey,
				}},
			},
		},
	})
	if err != nil {
		return err
	}
	desired[resourceCephProviderConfig] = &resource.DesiredComposed{Resource: pc}
	// A ProviderConfig has no Ready condition: it is ready once it exists.
	if _, ok := observed[resourceCephProviderConfig]; ok {
		desired[resourceCephProviderConfig].Ready = resource.ReadyTrue
	}
	if function.ObservedReady(observed, resourceCephAdmin) {
		desired[resourceCephAdmin].Ready = resource.ReadyTrue
	}
	return nil
}

func init() {
	if err := cephv1alpha1.AddToScheme(composed.Scheme); err != nil {
		panic(err)
	}
}
