package main

import (
	"fmt"
	"slices"
	"strconv"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	neutronv1alpha1 "github.com/c5c3/consumer-plane/apis/neutron/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// Composed resources of the cloud's own APIs.
const (
	resourceAdminCredential resource.Name = "admin-credential"
	resourceProviderConfig  resource.Name = "provider-config"
	resourceProject         resource.Name = "project"
	resourceComputeQuota    resource.Name = "compute-quota"
	resourceVolumeQuota     resource.Name = "volume-quota"
	resourceNetworkQuota    resource.Name = "network-quota"
	resourceTenantUser      resource.Name = "tenant-user"
	resourceTenantGrant     resource.Name = "tenant-grant"
	resourceTenantCred      resource.Name = "tenant-credential"
)

// Metadata of a pool's aggregate, so operators can tell what it is.
const (
	metadataPool           = "c5c3.io_pool"
	metadataAllocatedNodes = "c5c3.io_allocated_nodes"
)

// composeAdminCredential reads the admin clouds.yaml the c5c3-operator
// mints in the cloud's namespace into the management cluster, where the
// cloud's ProviderConfig reads it. It reports whether it is there.
func composeAdminCredential(c *cloud, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) bool {
	o := remote.Observed(c.name+"-admin-credential", c.controlPlaneAccess(), map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": adminCloudSecret, "namespace": c.namespace()},
	})
	details := []remote.Detail{{
		APIVersion: "v1", Kind: "Secret", Namespace: c.namespace(), Name: adminCloudSecret,
		FieldPath: "data[" + adminCloudKey + "]", Key: adminCloudKey,
	}}
	if k := c.adminCACertKey(); k != "" {
		// The CA of the cloud's endpoints, for its ProviderConfig and the
		// tenant's clouds.yaml.
		details = append(details, remote.Detail{
			APIVersion: "v1", Kind: "Secret", Namespace: c.namespace(), Name: adminCloudSecret,
			FieldPath: "data[" + k + "]", Key: adminCACertKey,
		})
	}
	remote.Publish(o, c.in.SecretNamespace, c.adminSecret(), details...)
	desired[resourceAdminCredential] = &resource.DesiredComposed{Resource: o}
	if function.ObservedReady(observed, resourceAdminCredential) {
		desired[resourceAdminCredential].Ready = resource.ReadyTrue
		return true
	}
	return false
}

// cloudState is how far the objects in the cloud's own APIs are.
type cloudState struct {
	ready   bool
	waiting []string
	// catalogRead is whether the cloud's ProviderConfig has reported the
	// services its catalog serves; unserved are the enabled services it
	// does not serve (their objects are not composed).
	catalogRead bool
	unserved    []string
}

// catalogTypes are the Keystone catalog types under which each service of
// spec.services with objects of its own (aggregates, volume types, quotas)
// may be registered: Cinder's v3 API is block-storage, volumev3 in older
// catalogs.
var catalogTypes = map[string][]string{
	"nova":    {"compute"},
	"cinder":  {"block-storage", "volumev3"},
	"neutron": {"network"},
}

// served reports whether the catalog serves a service, by its catalog
// types.
func served(catalog []string, service string) bool {
	return slices.ContainsFunc(catalogTypes[service], func(t string) bool { return slices.Contains(catalog, t) })
}

// waitingOn says what an object in the cloud's own APIs waits on: its
// state, and when the provider cannot sync it, the provider's reason (the
// cloud's Keystone or Nova unreachable, a request refused), so that the
// tenant reads on the claim why, without access to the managed resource.
// The reason is about the tenant's own cloud; it is cut to reasonLength.
func waitingOn(what string, status v1alpha1.CephPoolStatus, o resource.ObservedComposed) string {
	s := fmt.Sprintf("%s is %s", what, status)
	if status != v1alpha1.CephPoolFailed || o.Resource == nil {
		return s
	}
	why := o.Resource.GetCondition(xpv2.TypeSynced).Message
	if why == "" {
		return s
	}
	if r := []rune(why); len(r) > reasonLength {
		why = string(r[:reasonLength]) + "…"
	}
	return s + ": " + why
}

// reasonLength bounds the provider's reason on the claim: a condition's
// message holds every stage's waits.
const reasonLength = 300

// composeCloud composes what needs the cloud's APIs: its ProviderConfig,
// the tenant's project and quotas, a Nova aggregate and availability zone
// per hypervisor pool with the tenant filter and the nodes the pool gave the
// cloud as its hosts, and a Cinder volume type per
// storage pool bound to its backend.
func composeCloud(c *cloud, allocated map[string]int32, hosts map[string][]string, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (cloudState, error) {
	st := cloudState{ready: true}
	add := func(key resource.Name, what string, mr runtime.Object) error {
		status, err := addManaged(key, mr, observed, desired)
		if err != nil {
			return err
		}
		if status != v1alpha1.CephPoolReady {
			st.ready = false
			st.waiting = append(st.waiting, waitingOn(what, status, observed[key]))
		}
		return nil
	}
	// A ProviderConfig has no Ready condition: it is ready once it exists.
	pc := &openstackv1alpha1.ProviderConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: openstackv1alpha1.SchemeGroupVersion.String(), Kind: "ProviderConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: c.labels()},
		Spec: openstackv1alpha1.ProviderConfigSpec{
			AuthURL: c.authURL(),
			Region:  string(c.xr.Spec.Region),
			Credentials: openstackv1alpha1.ProviderCredentials{
				Source: xpv2.CredentialsSourceSecret, Format: openstackv1alpha1.CredentialsFormatCloudsYAML, Cloud: adminCloudName,
				CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
					SecretReference: xpv2.SecretReference{Namespace: c.in.SecretNamespace, Name: c.adminSecret()}, Key: adminCloudKey,
				}},
			},
		},
	}
	if c.adminCACertKey() != "" {
		pc.Spec.CABundleSecretRef = &xpv2.SecretKeySelector{
			SecretReference: xpv2.SecretReference{Namespace: c.in.SecretNamespace, Name: c.adminSecret()}, Key: adminCACertKey,
		}
	}
	cd, err := function.Composed(pc)
	if err != nil {
		return st, err
	}
	desired[resourceProviderConfig] = &resource.DesiredComposed{Resource: cd}
	// It is ready once the provider has read the cloud's catalog with it.
	var catalog []string
	if o, ok := observed[resourceProviderConfig]; ok {
		if v, err := o.Resource.GetValue("status.catalog"); err == nil && v != nil {
			st.catalogRead = true
			// No services when the region serves nothing.
			_ = o.Resource.GetValueInto("status.catalog.services", &catalog)
		}
	}
	if st.catalogRead {
		desired[resourceProviderConfig].Ready = resource.ReadyTrue
	}
	managed := func() xpv2.ClusterManagedResourceSpec {
		return xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: c.name}}
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Labels: c.labels()} }
	// Names in the cloud's own APIs carry the cloud's name: whoever reads
	// Keystone, Nova or Cinder sees whose object it is, and clouds whose
	// services are shared (a test region; the local demo, where one
	// OpenStack stands in for every cloud) never take each other's objects.
	// Availability zones keep the pool's name: that is what users pick.
	projectName := c.name
	project := &keystonev1alpha1.Project{
		TypeMeta:   metav1.TypeMeta{APIVersion: keystonev1alpha1.SchemeGroupVersion.String(), Kind: "Project"},
		ObjectMeta: meta(c.name),
		Spec: keystonev1alpha1.ProjectSpec{ClusterManagedResourceSpec: managed(), ForProvider: keystonev1alpha1.ProjectParameters{
			Name: projectName, Description: "The default project of " + claimOf(c.xr.GetLabels(), c.name),
		}},
	}
	if err := add(resourceProject, "Keystone project "+projectName, project); err != nil {
		return st, err
	}
	projectRef := &xpv2.Reference{Name: c.name}

	if err := composeTenantAccess(c, projectRef, add); err != nil {
		return st, err
	}

	q := effectiveQuotas(c)
	svc := c.xr.Spec.Services
	// A service's objects are composed once the catalog serves it, and
	// kept once they exist (what a function stops desiring, Crossplane
	// deletes). A service the catalog does not serve keeps the cloud from
	// Ready, which says why (see unserved).
	compose := func(service string, enabled bool, existing resource.Name) bool {
		if !enabled {
			return false
		}
		if _, ok := observed[existing]; ok {
			return true
		}
		if !st.catalogRead {
			return false
		}
		if !served(catalog, service) {
			st.unserved = append(st.unserved, service)
			return false
		}
		return true
	}
	if !st.catalogRead && (svc.Nova || svc.Cinder || svc.Neutron) {
		st.ready = false
		st.waiting = append(st.waiting, fmt.Sprintf("the provider has not read the cloud's service catalog yet (ProviderConfig %s, status.catalog)", c.name))
	}
	if compose("nova", svc.Nova, resourceComputeQuota) {
		for _, hc := range c.xr.Spec.HypervisorClusters {
			name := string(hc)
			agg := &novav1alpha1.Aggregate{
				TypeMeta:   metav1.TypeMeta{APIVersion: novav1alpha1.SchemeGroupVersion.String(), Kind: "Aggregate"},
				ObjectMeta: meta(c.name + "-" + name),
				Spec: novav1alpha1.AggregateSpec{ClusterManagedResourceSpec: managed(), ForProvider: novav1alpha1.AggregateParameters{
					Name: c.name + "-" + name, AvailabilityZone: name,
					Metadata: map[string]string{
						metadataPool: name, metadataAllocatedNodes: strconv.Itoa(int(allocated[name])),
					},
					FilterTenantIDRefs: []xpv2.Reference{*projectRef},
					// The nodes the pool gave the cloud by name; until it
					// names them, the hypervisor operator's.
					Hosts: hosts[name],
				}},
			}
			if err := add(resource.Name("aggregate-"+name), "Nova aggregate "+agg.Spec.ForProvider.Name, agg); err != nil {
				return st, err
			}
		}
		cq := &novav1alpha1.QuotaSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: novav1alpha1.SchemeGroupVersion.String(), Kind: "QuotaSet"},
			ObjectMeta: meta(c.name + "-compute"),
			Spec: novav1alpha1.QuotaSetSpec{ClusterManagedResourceSpec: managed(), ForProvider: novav1alpha1.QuotaSetParameters{
				ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectIDRef: projectRef}, Cores: q.Compute.Cores, Instances: q.Compute.Instances, RAM: ptr.To(*q.Compute.RAMGB * 1024),
			}},
		}
		if *q.Compute.RAMGB < 0 {
			cq.Spec.ForProvider.RAM = ptr.To(int64(-1))
		}
		if err := add(resourceComputeQuota, "the compute quota", cq); err != nil {
			return st, err
		}
	}
	if compose("cinder", svc.Cinder, resourceVolumeQuota) {
		for _, sc := range c.xr.Spec.StorageClusters {
			name := string(sc)
			vt := &cinderv1alpha1.VolumeType{
				TypeMeta:   metav1.TypeMeta{APIVersion: cinderv1alpha1.SchemeGroupVersion.String(), Kind: "VolumeType"},
				ObjectMeta: meta(c.name + "-" + name),
				Spec: cinderv1alpha1.VolumeTypeSpec{ClusterManagedResourceSpec: managed(), ForProvider: cinderv1alpha1.VolumeTypeParameters{
					Name: c.name + "-" + name, BackendName: cinderBackend(name), Description: "RBD volumes in storage pool " + name,
				}},
			}
			if err := add(resource.Name("volume-type-"+name), "Cinder volume type "+vt.Spec.ForProvider.Name, vt); err != nil {
				return st, err
			}
		}
		vq := &cinderv1alpha1.QuotaSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: cinderv1alpha1.SchemeGroupVersion.String(), Kind: "QuotaSet"},
			ObjectMeta: meta(c.name + "-volume"),
			Spec: cinderv1alpha1.QuotaSetSpec{ClusterManagedResourceSpec: managed(), ForProvider: cinderv1alpha1.QuotaSetParameters{
				ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectIDRef: projectRef}, Gigabytes: q.Volume.Gigabytes, Volumes: q.Volume.Volumes, Snapshots: q.Volume.Snapshots,
			}},
		}
		if err := add(resourceVolumeQuota, "the volume quota", vq); err != nil {
			return st, err
		}
	}
	if compose("neutron", svc.Neutron, resourceNetworkQuota) {
		nq := &neutronv1alpha1.QuotaSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: neutronv1alpha1.SchemeGroupVersion.String(), Kind: "QuotaSet"},
			ObjectMeta: meta(c.name + "-network"),
			Spec: neutronv1alpha1.QuotaSetSpec{ClusterManagedResourceSpec: managed(), ForProvider: neutronv1alpha1.QuotaSetParameters{
				ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectIDRef: projectRef}, Networks: q.Network.Networks, Ports: q.Network.Ports, Routers: q.Network.Routers, FloatingIPs: q.Network.FloatingIPs,
			}},
		}
		if err := add(resourceNetworkQuota, "the network quota", nq); err != nil {
			return st, err
		}
	}
	return st, nil
}

// composeTenantAccess gives the tenant its way in: a Keystone user of its
// own with the member role on the cloud's project, and an application
// credential that user makes, whose clouds.yaml the provider writes straight
// into the claim's connection secret. The secret never passes through this
// function (nor its responses, logs or the composite's status); the user's
// generated password stays in the management cluster, where only the
// provider reads it.
func composeTenantAccess(c *cloud, projectRef *xpv2.Reference, add func(resource.Name, string, runtime.Object) error) error {
	managed := func(secret *xpv2.SecretReference) xpv2.ClusterManagedResourceSpec {
		return xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: c.name}, WriteConnectionSecretToReference: secret}
	}
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Labels: c.labels()} }
	userRef := keystonev1alpha1.UserIDReference{UserIDRef: &xpv2.Reference{Name: c.tenantUser()}}
	project := keystonev1alpha1.ProjectIDReference{ProjectIDRef: projectRef}
	user := &keystonev1alpha1.User{
		TypeMeta:   metav1.TypeMeta{APIVersion: keystonev1alpha1.SchemeGroupVersion.String(), Kind: "User"},
		ObjectMeta: meta(c.tenantUser()),
		Spec: keystonev1alpha1.UserSpec{
			ClusterManagedResourceSpec: managed(&xpv2.SecretReference{Namespace: c.in.SecretNamespace, Name: c.tenantUserSecret()}),
			ForProvider:                keystonev1alpha1.UserParameters{Name: c.tenantUser(), Description: "The tenant of " + claimOf(c.xr.GetLabels(), c.name)},
		},
	}
	if err := add(resourceTenantUser, "the tenant's Keystone user "+c.tenantUser(), user); err != nil {
		return err
	}
	grant := &keystonev1alpha1.RoleAssignment{
		TypeMeta:   metav1.TypeMeta{APIVersion: keystonev1alpha1.SchemeGroupVersion.String(), Kind: "RoleAssignment"},
		ObjectMeta: meta(c.tenantUser() + "-" + tenantRole),
		Spec: keystonev1alpha1.RoleAssignmentSpec{ClusterManagedResourceSpec: managed(nil), ForProvider: keystonev1alpha1.RoleAssignmentParameters{
			Role: tenantRole, UserIDReference: userRef, ProjectIDReference: project,
		}},
	}
	if err := add(resourceTenantGrant, "the tenant's role "+tenantRole+" on the project", grant); err != nil {
		return err
	}
	secret := c.credentials
	cred := &keystonev1alpha1.ApplicationCredential{
		TypeMeta:   metav1.TypeMeta{APIVersion: keystonev1alpha1.SchemeGroupVersion.String(), Kind: "ApplicationCredential"},
		ObjectMeta: meta(c.tenantUser()),
		Spec: keystonev1alpha1.ApplicationCredentialSpec{ClusterManagedResourceSpec: managed(&secret), ForProvider: keystonev1alpha1.ApplicationCredentialParameters{
			Name: c.tenantUser(), Description: "The tenant's credential of " + claimOf(c.xr.GetLabels(), c.name),
			UserIDReference: userRef, ProjectIDReference: project, Roles: []string{tenantRole},
			PasswordSecretRef: xpv2.SecretKeySelector{
				SecretReference: xpv2.SecretReference{Namespace: c.in.SecretNamespace, Name: c.tenantUserSecret()}, Key: keystonev1alpha1.ConnectionSecretKeyPassword,
			},
			Cloud: keystonev1alpha1.CloudsYAML{Name: c.cloudName(), Region: string(c.xr.Spec.Region)},
		}},
	}
	return add(resourceTenantCred, "the tenant's application credential (Secret "+secret.Namespace+"/"+secret.Name+")", cred)
}

// effectiveQuotas are the size preset's quotas with spec.quotas laid over
// them field by field.
func effectiveQuotas(c *cloud) v1alpha1.Quotas {
	base := presets[c.size].quotas
	q := base.DeepCopy()
	over := func(dst **int64, src *int64) {
		if src != nil {
			*dst = ptr.To(*src)
		}
	}
	if s := c.xr.Spec.Quotas; s != nil {
		if s.Compute != nil {
			over(&q.Compute.Cores, s.Compute.Cores)
			over(&q.Compute.RAMGB, s.Compute.RAMGB)
			over(&q.Compute.Instances, s.Compute.Instances)
		}
		if s.Volume != nil {
			over(&q.Volume.Gigabytes, s.Volume.Gigabytes)
			over(&q.Volume.Volumes, s.Volume.Volumes)
			over(&q.Volume.Snapshots, s.Volume.Snapshots)
		}
		if s.Network != nil {
			over(&q.Network.Networks, s.Network.Networks)
			over(&q.Network.Ports, s.Network.Ports)
			over(&q.Network.Routers, s.Network.Routers)
			over(&q.Network.FloatingIPs, s.Network.FloatingIPs)
		}
	}
	return *q
}
