package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group and version of these types.
const (
	Group   = "ovn.provider.c5c3.io"
	Version = "v1alpha1"
)

var (
	// SchemeGroupVersion is the group version of these types.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: Version}

	// SchemeBuilder registers the types with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds the types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&ProviderConfig{}, &ProviderConfigList{}, &ProviderConfigUsage{}, &ProviderConfigUsageList{},
		&HAChassisGroup{}, &HAChassisGroupList{}, &LogicalSwitch{}, &LogicalSwitchList{},
		&LogicalRouter{}, &LogicalRouterList{}, &NBGlobal{}, &NBGlobalList{}, &ChassisSet{}, &ChassisSetList{})
}

// Keys this provider writes into the external_ids of every row it owns.
const (
	// ExternalIDManagedBy marks a row as written by this provider.
	ExternalIDManagedBy = "cobaltcore.c5c3.io/managed-by"
	// ManagedByValue is ExternalIDManagedBy's value.
	ManagedByValue = "crossplane-provider-cobaltcore"
	// ExternalIDResource names the managed resource that owns the row.
	ExternalIDResource = "cobaltcore.c5c3.io/resource"
	// NeutronKeyPrefix starts the external_ids keys of rows Neutron owns.
	NeutronKeyPrefix = "neutron:"
)
