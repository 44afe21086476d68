package main

import (
	"fmt"
	"maps"

	"github.com/crossplane/function-sdk-go/resource"

	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// The control plane is told where its pools are (docs/how-it-works.md): its
// ControlPlane names them (spec.compute.hypervisorClusters,
// spec.storage.storageClusters), and the cloud's namespace in the
// control-plane cluster holds, per pool, a kubeconfig of the pool's cluster
// for a ServiceAccount that may use the cloud's namespace there and read
// and label the cloud's nodes of the pool — never an admin credential. The
// provider's ClusterAccess issues it into a connection secret of the
// management cluster; a SecretCopy carries it over, so the token is never
// written into a Crossplane object.

// serviceAccountControlPlane is the control plane's identity in each pool.
const serviceAccountControlPlane = "c5c3-control-plane"

// labelKubeconfig marks a Secret as a cluster registration of a
// multicluster-runtime operator (the c5c3-operator's target clusters).
const labelKubeconfig = "sigs.k8s.io/multicluster-runtime-kubeconfig"

// Keys of the kubeconfig Secret (kubernetes.provider.c5c3.io ClusterAccess).
const (
	accessKeyKubeconfig = "kubeconfig"
	accessKeyNamespaces = "namespaces"
)

// accessState is how far the control plane's access to the pools is.
type accessState struct {
	ready   bool
	waiting []string
	// secrets are the kubeconfig Secrets in the cloud's namespace.
	secrets []string
}

// poolKubeconfigSecret names a pool's kubeconfig Secret in the cloud's
// namespace of the control-plane cluster: the pool's ProviderConfig name
// (hypervisor-<pool>, storage-<pool>) and -kubeconfig.
func poolKubeconfigSecret(k pool.Kind, name string) string {
	return pool.ProviderConfigName(k, name) + "-kubeconfig"
}

// composePoolAccess composes, for each pool of the plan that exists, its
// ClusterAccess (the nodes of a hypervisor pool: those the cloud holds
// there) and, once it is issued and the cloud's namespace exists, the copy
// of its kubeconfig into that namespace.
func composePoolAccess(c *cloud, plan *plan, namespaceReady bool, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (accessState, error) {
	st := accessState{ready: true}
	one := func(k pool.Kind, name string, nodes []string, provisioning bool) error {
		pc := pool.ProviderConfigName(k, name)
		key, copyKey := resource.Name("access-"+pc), resource.Name("access-"+pc+"-kubeconfig")
		if _, issued := observed[key]; provisioning && !issued {
			// Its ClusterAccess would be issued through the pool's
			// ProviderConfig, which the pool makes once its cluster runs.
			st.ready = false
			st.waiting = append(st.waiting, fmt.Sprintf("the control plane's access to %s waits for the pool to be Ready", name))
			return nil
		}
		secret := c.name + "-" + pc + "-access"
		// The control plane runs nova-compute and ovn-controller in a
		// hypervisor pool, on the nodes labelled as the cloud's; in a
		// storage pool it runs nothing.
		var placement map[string]string
		if k == pool.KindHypervisor {
			placement = map[string]string{pool.LabelCloud: c.name}
		}
		o, err := remote.ClusterAccess(secret, pc, c.namespace(), serviceAccountControlPlane, nodes, placement, c.in.SecretNamespace)
		if err != nil {
			return err
		}
		desired[key] = &resource.DesiredComposed{Resource: o}
		_, copying := observed[copyKey]
		switch {
		case !function.ObservedReady(observed, key) && !copying:
			st.ready = false
			st.waiting = append(st.waiting, fmt.Sprintf("the control plane's access to %s is being issued (ClusterAccess %s)", name, secret))
			return nil
		case function.ObservedReady(observed, key):
			desired[key].Ready = resource.ReadyTrue
		}
		if !namespaceReady && !copying {
			st.ready = false
			st.waiting = append(st.waiting, fmt.Sprintf("the kubeconfig of %s waits for namespace %s", name, c.namespace()))
			return nil
		}
		labels := maps.Clone(c.labels())
		labels[labelKubeconfig] = "true"
		target := poolKubeconfigSecret(k, name)
		cp, err := remote.SecretCopy(c.name+"-"+pc+"-kubeconfig", c.controlPlaneAccess(), remote.Copy{
			SourceNamespace: c.in.SecretNamespace, SourceName: secret,
			Keys:            []kubernetesv1alpha1.KeyCopy{{From: accessKeyKubeconfig}, {From: accessKeyNamespaces}},
			TargetNamespace: c.namespace(), TargetName: target, Labels: labels,
		})
		if err != nil {
			return err
		}
		desired[copyKey] = &resource.DesiredComposed{Resource: cp}
		if function.ObservedReady(observed, copyKey) {
			desired[copyKey].Ready = resource.ReadyTrue
			st.secrets = append(st.secrets, target)
		} else {
			st.ready = false
			st.waiting = append(st.waiting, fmt.Sprintf("the kubeconfig of %s is being copied to Secret %s/%s", name, c.namespace(), target))
		}
		return nil
	}
	for _, h := range plan.hypervisor {
		if h.pool == nil {
			continue
		}
		if err := one(pool.KindHypervisor, h.name, h.hosts, h.provisioning); err != nil {
			return st, err
		}
	}
	for _, s := range plan.storage {
		if s.pool == nil {
			continue
		}
		if err := one(pool.KindStorage, s.name, nil, s.provisioning); err != nil {
			return st, err
		}
	}
	return st, nil
}
