package providerconfig

import (
	"context"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/event"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	kvmv1alpha1 "github.com/c5c3/consumer-plane/apis/kvm/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
)

// Setup adds the reconcilers that count a ProviderConfig's users and keep a
// ProviderConfig in use from being deleted, for every ProviderConfig kind
// (OpenStack, Gardener, IronCore, KVM, Kubernetes, OVN, Ceph), and the CredentialsGuard that
// keeps its credentials Secret as long.
func Setup(mgr ctrl.Manager, o controller.Options) error {
	for _, k := range []struct {
		gv           schema.GroupVersion
		config, used client.Object
	}{
		{openstackv1alpha1.SchemeGroupVersion, &openstackv1alpha1.ProviderConfig{}, &openstackv1alpha1.ProviderConfigUsage{}},
		{gardenerv1alpha1.SchemeGroupVersion, &gardenerv1alpha1.ProviderConfig{}, &gardenerv1alpha1.ProviderConfigUsage{}},
		{ironcorev1alpha1.SchemeGroupVersion, &ironcorev1alpha1.ProviderConfig{}, &ironcorev1alpha1.ProviderConfigUsage{}},
		{kvmv1alpha1.SchemeGroupVersion, &kvmv1alpha1.ProviderConfig{}, &kvmv1alpha1.ProviderConfigUsage{}},
		{kubernetesv1alpha1.SchemeGroupVersion, &kubernetesv1alpha1.ProviderConfig{}, &kubernetesv1alpha1.ProviderConfigUsage{}},
		{ovnv1alpha1.SchemeGroupVersion, &ovnv1alpha1.ProviderConfig{}, &ovnv1alpha1.ProviderConfigUsage{}},
		{cephv1alpha1.SchemeGroupVersion, &cephv1alpha1.ProviderConfig{}, &cephv1alpha1.ProviderConfigUsage{}},
	} {
		name := "providerconfig/" + k.gv.Group
		of := resource.ProviderConfigKinds{
			Config:    k.gv.WithKind("ProviderConfig"),
			Usage:     k.gv.WithKind("ProviderConfigUsage"),
			UsageList: k.gv.WithKind("ProviderConfigUsageList"),
		}
		if err := IndexUsers(context.Background(), mgr, k.used); err != nil {
			return err
		}
		r := providerconfig.NewReconciler(indexedUsers{mgr}, of,
			providerconfig.WithLogger(o.Logger.WithValues("controller", name)),
			providerconfig.WithRecorder(event.NewAPIRecorder(mgr.GetEventRecorderFor(name))))
		err := ctrl.NewControllerManagedBy(mgr).
			Named(name).
			WithOptions(o.ForControllerRuntime()).
			For(k.config, builder.WithPredicates(NotOnlyStatus())).
			Watches(k.used, UsersChanged(UsersCountedEvery)).
			Complete(ratelimiter.NewReconciler(name, r, o.GlobalRateLimiter))
		if err != nil {
			return err
		}
		// OVN's ProviderConfig names its TLS Secret (client certificate
		// and CA) at spec.tlsSecretRef; a cloud composes it as the
		// connection secret of an Object, which goes with the cloud.
		var secretRef []string
		if k.gv.Group == ovnv1alpha1.SchemeGroupVersion.Group {
			secretRef = []string{"spec", "tlsSecretRef"}
		}
		if err := SetupCredentialsGuard(mgr, o, of, k.config, k.used, secretRef); err != nil {
			return err
		}
	}
	return nil
}
