package main

import (
	"fmt"

	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	arbiterv1alpha1 "github.com/c5c3/consumer-plane/apis/arbiter/v1alpha1"
	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// A stretched pool spans two zones; a Ceph monitor in a third site, the
// arbiter, keeps quorum when either zone is lost. The external-arbiter-operator
// (installed in the pool cluster with the pool's agents, in arbiterNamespace)
// deploys that monitor into the arbiter cluster from a RemoteCluster (how to
// reach it) and a RemoteArbiter (which CephCluster it joins).
const (
	arbiterNamespace = "arbiter-operator"
	// arbiterKubeconfigKey is the key of the arbiter cluster's kubeconfig
	// in the Secret the RemoteCluster reads.
	arbiterKubeconfigKey = "kubeconfig"
	// stretchedZones: Rook places one monitor in each, the arbiter is the
	// third.
	stretchedZones = 2
)

// Composed resources of a stretched pool.
const (
	resourceArbiterKubeconfig    resource.Name = "arbiter-kubeconfig"
	resourceArbiterRemoteCluster resource.Name = "arbiter-remote-cluster"
	resourceArbiter              resource.Name = "arbiter"
)

// conditionArbiterReady says whether a stretched pool's arbiter has joined.
const conditionArbiterReady = "ArbiterReady"

func init() {
	if err := arbiterv1alpha1.AddToScheme(composed.Scheme); err != nil {
		panic(err)
	}
}

// composeArbiter places the arbiter objects in the pool cluster. The arbiter
// cluster is a ControlPlaneCluster (named by its claim): its kubeconfig
// Secret, kept fresh by its ShootKubeconfig, is copied into the pool cluster
// by reference. It reports whether the arbiter is Ready, and why not.
func composeArbiter(s *v1alpha1.StorageClusterParameters, a pool.Access, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (bool, string, error) {
	pc := a.ProviderConfigName()
	source := pool.Access{Kind: pool.KindControlPlane, Name: s.ArbiterCluster, SecretNamespace: a.SecretNamespace}
	secretName := "arbiter-" + s.ArbiterCluster + "-kubeconfig"

	kc := remote.Created(pc+"-arbiter-kubeconfig", pc, map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"name": secretName, "namespace": arbiterNamespace},
	})
	remote.PatchFrom(kc, remote.Patch{APIVersion: "v1", Kind: "Secret", Namespace: source.SecretNamespace, Name: source.SecretName(),
		FieldPath: "data." + gardenerv1alpha1.ConnectionSecretKeyKubeconfig, ToFieldPath: "data." + arbiterKubeconfigKey})
	desired[resourceArbiterKubeconfig] = &resource.DesiredComposed{Resource: kc}

	rc, err := function.Composed(&arbiterv1alpha1.RemoteCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: arbiterv1alpha1.SchemeGroupVersion.String(), Kind: "RemoteCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: s.ArbiterCluster, Namespace: arbiterNamespace},
		Spec: arbiterv1alpha1.RemoteClusterSpec{
			AccessKeyRef: arbiterv1alpha1.KubeconfigSecretSource{Name: secretName, Key: arbiterKubeconfigKey},
			Namespace:    "ceph-arbiter-" + string(s.Name),
		},
	})
	if err != nil {
		return false, "", err
	}
	const stateReady = "object.status.state == 'Ready'"
	desired[resourceArbiterRemoteCluster] = &resource.DesiredComposed{Resource: remote.ReadyWhen(pc+"-arbiter-remote-cluster", pc, rc.Object, stateReady)}

	ra, err := function.Composed(&arbiterv1alpha1.RemoteArbiter{
		TypeMeta:   metav1.TypeMeta{APIVersion: arbiterv1alpha1.SchemeGroupVersion.String(), Kind: "RemoteArbiter"},
		ObjectMeta: metav1.ObjectMeta{Name: string(s.Name), Namespace: arbiterNamespace},
		Spec: arbiterv1alpha1.RemoteArbiterSpec{
			CephCluster:   arbiterv1alpha1.NamespacedReference{Namespace: rookNamespace, Name: string(s.Name)},
			RemoteCluster: arbiterv1alpha1.RemoteClusterConfiguration{Name: s.ArbiterCluster},
		},
	})
	if err != nil {
		return false, "", err
	}
	desired[resourceArbiter] = &resource.DesiredComposed{Resource: remote.ReadyWhen(pc+"-arbiter", pc, ra.Object, stateReady)}

	ready := true
	for _, n := range []resource.Name{resourceArbiterKubeconfig, resourceArbiterRemoteCluster, resourceArbiter} {
		if function.ObservedReady(observed, n) {
			desired[n].Ready = resource.ReadyTrue
			continue
		}
		ready = false
	}
	if ready {
		mon, _ := observed[resourceArbiter].Resource.GetString("status.atProvider.manifest.status.monId")
		return true, fmt.Sprintf("monitor %s runs in cluster %s", mon, s.ArbiterCluster), nil
	}
	msg := fmt.Sprintf("waiting for the arbiter monitor in cluster %s", s.ArbiterCluster)
	if o, ok := observed[resourceArbiter]; ok {
		if m, _ := o.Resource.GetString("status.atProvider.manifest.status.message"); m != "" {
			msg += ": " + m
		}
	}
	return false, msg, nil
}
