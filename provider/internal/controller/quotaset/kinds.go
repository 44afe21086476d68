package quotaset

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	ctrl "sigs.k8s.io/controller-runtime"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	neutronv1alpha1 "github.com/c5c3/consumer-plane/apis/neutron/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Nova's compute quotas, by Nova's names.
var Nova = Kind[*novav1alpha1.QuotaSet]{
	GVK: novav1alpha1.SchemeGroupVersion.WithKind("QuotaSet"), List: &novav1alpha1.QuotaSetList{},
	Service: "Nova", NewQuotas: openstack.NewComputeQuotas,
	ProjectID: func(q *novav1alpha1.QuotaSet) string { return q.Spec.ForProvider.ProjectID },
	Limits: func(q *novav1alpha1.QuotaSet) map[string]*int64 {
		p := q.Spec.ForProvider
		return map[string]*int64{"cores": p.Cores, "ram": p.RAM, "instances": p.Instances, "server_groups": p.ServerGroups, "key_pairs": p.KeyPairs}
	},
	SetObservation: func(q *novav1alpha1.QuotaSet, project string) { q.Status.AtProvider.ProjectID = project },
}

// Cinder's block-storage quotas, by Cinder's names.
var Cinder = Kind[*cinderv1alpha1.QuotaSet]{
	GVK: cinderv1alpha1.SchemeGroupVersion.WithKind("QuotaSet"), List: &cinderv1alpha1.QuotaSetList{},
	Service: "Cinder", NewQuotas: openstack.NewVolumeQuotas,
	ProjectID: func(q *cinderv1alpha1.QuotaSet) string { return q.Spec.ForProvider.ProjectID },
	Limits: func(q *cinderv1alpha1.QuotaSet) map[string]*int64 {
		p := q.Spec.ForProvider
		return map[string]*int64{"gigabytes": p.Gigabytes, "volumes": p.Volumes, "snapshots": p.Snapshots, "backups": p.Backups}
	},
	SetObservation: func(q *cinderv1alpha1.QuotaSet, project string) { q.Status.AtProvider.ProjectID = project },
}

// Neutron's network quotas, by Neutron's names.
var Neutron = Kind[*neutronv1alpha1.QuotaSet]{
	GVK: neutronv1alpha1.SchemeGroupVersion.WithKind("QuotaSet"), List: &neutronv1alpha1.QuotaSetList{},
	Service: "Neutron", NewQuotas: openstack.NewNetworkQuotas,
	ProjectID: func(q *neutronv1alpha1.QuotaSet) string { return q.Spec.ForProvider.ProjectID },
	Limits: func(q *neutronv1alpha1.QuotaSet) map[string]*int64 {
		p := q.Spec.ForProvider
		return map[string]*int64{"network": p.Networks, "subnet": p.Subnets, "port": p.Ports, "router": p.Routers,
			"floatingip": p.FloatingIPs, "security_group": p.SecurityGroups}
	},
	SetObservation: func(q *neutronv1alpha1.QuotaSet, project string) { q.Status.AtProvider.ProjectID = project },
}

// SetupAll adds the Nova, Cinder and Neutron QuotaSet controllers.
func SetupAll(mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack) error {
	if err := Setup(mgr, o, pc, Nova); err != nil {
		return err
	}
	if err := Setup(mgr, o, pc, Cinder); err != nil {
		return err
	}
	return Setup(mgr, o, pc, Neutron)
}
