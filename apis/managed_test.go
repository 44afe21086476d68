package apis_test

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	neutronv1alpha1 "github.com/c5c3/consumer-plane/apis/neutron/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
)

// The generated accessors make every kind what crossplane-runtime's
// reconcilers take; a kind missing from angryjet's output fails to compile here.
var (
	_ resource.LegacyManaged = &keystonev1alpha1.Project{}
	_ resource.LegacyManaged = &keystonev1alpha1.Domain{}
	_ resource.LegacyManaged = &novav1alpha1.Aggregate{}
	_ resource.LegacyManaged = &novav1alpha1.QuotaSet{}
	_ resource.LegacyManaged = &cinderv1alpha1.VolumeType{}
	_ resource.LegacyManaged = &cinderv1alpha1.QuotaSet{}
	_ resource.LegacyManaged = &neutronv1alpha1.QuotaSet{}
	_ resource.LegacyManaged = &gardenerv1alpha1.ShootKubeconfig{}
	_ resource.LegacyManaged = &cephv1alpha1.Pool{}
	_ resource.LegacyManaged = &cephv1alpha1.Client{}
	_ resource.LegacyManaged = &ovnv1alpha1.HAChassisGroup{}
	_ resource.LegacyManaged = &ovnv1alpha1.LogicalSwitch{}
	_ resource.LegacyManaged = &ovnv1alpha1.LogicalRouter{}
	_ resource.LegacyManaged = &ovnv1alpha1.NBGlobal{}
	_ resource.LegacyManaged = &ovnv1alpha1.ChassisSet{}

	_ resource.ManagedList = &keystonev1alpha1.ProjectList{}

	_ resource.ProviderConfig            = &openstackv1alpha1.ProviderConfig{}
	_ resource.LegacyProviderConfigUsage = &openstackv1alpha1.ProviderConfigUsage{}
	_ resource.ProviderConfigUsageList   = &openstackv1alpha1.ProviderConfigUsageList{}
	_ resource.ProviderConfig            = &gardenerv1alpha1.ProviderConfig{}
	_ resource.LegacyProviderConfigUsage = &gardenerv1alpha1.ProviderConfigUsage{}
	_ resource.ProviderConfig            = &cephv1alpha1.ProviderConfig{}
	_ resource.LegacyProviderConfigUsage = &cephv1alpha1.ProviderConfigUsage{}
	_ resource.ProviderConfig            = &ovnv1alpha1.ProviderConfig{}
	_ resource.LegacyProviderConfigUsage = &ovnv1alpha1.ProviderConfigUsage{}
)
