package main

import (
	"fmt"

	"github.com/crossplane/function-sdk-go/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	cpv1alpha1 "github.com/c5c3/consumer-plane/apis/controlplane/v1alpha1"
)

// preset is what a size means. Replicas follow the docs' size map
// (mariadb and keystone; nova.api for the other API services, which the
// map does not list); quotas are the cloud project's defaults, which
// spec.quotas overrides field by field.
type preset struct {
	database, cache, keystone, api int32
	quotas                         v1alpha1.Quotas
}

func quotas(cores, ramGB, instances, gigabytes, volumes, snapshots, networks, ports, routers, fips int64) v1alpha1.Quotas {
	return v1alpha1.Quotas{
		Compute: &v1alpha1.ComputeQuota{Cores: &cores, RAMGB: &ramGB, Instances: &instances},
		Volume:  &v1alpha1.VolumeQuota{Gigabytes: &gigabytes, Volumes: &volumes, Snapshots: &snapshots},
		Network: &v1alpha1.NetworkQuota{Networks: &networks, Ports: &ports, Routers: &routers, FloatingIPs: &fips},
	}
}

var presets = map[v1alpha1.Size]preset{
	v1alpha1.SizeSmall:  {database: 1, cache: 1, keystone: 1, api: 1, quotas: quotas(100, 400, 50, 5000, 250, 500, 10, 500, 5, 20)},
	v1alpha1.SizeMedium: {database: 3, cache: 3, keystone: 3, api: 3, quotas: quotas(400, 1600, 200, 20000, 1000, 2000, 40, 2000, 20, 80)},
	v1alpha1.SizeLarge:  {database: 3, cache: 3, keystone: 3, api: 5, quotas: quotas(1000, 4000, 500, 50000, 2500, 5000, 100, 5000, 50, 200)},
	v1alpha1.SizeXLarge: {database: 5, cache: 5, keystone: 5, api: 7, quotas: quotas(2000, 8000, 1000, 100000, 5000, 10000, 200, 10000, 100, 400)},
}

// sizeOrder ranks the presets, for a Composition's cap.
var sizeOrder = []v1alpha1.Size{v1alpha1.SizeSmall, v1alpha1.SizeMedium, v1alpha1.SizeLarge, v1alpha1.SizeXLarge}

// What the c5c3-operator expects by name in a ControlPlane's namespace.
const (
	databaseCluster  = "openstack-db"
	databaseName     = "keystone"
	databaseSecret   = "keystone-db"
	cacheCluster     = "openstack-memcached"
	cacheBackend     = "dogpile.cache.pymemcache"
	adminCloudName   = "admin"
	adminCloudSecret = "k-orc-clouds-yaml"
	// adminCloudKey is the clouds.yaml key of the admin credential Secret.
	adminCloudKey = "clouds.yaml"
	// adminCACertKey is the key of the CA in the management cluster's copy
	// of the admin credential.
	adminCACertKey = "cacert"
)

// controlPlane is the c5c3-operator's ControlPlane of the cloud, in the
// shape of the real CRD (apis/controlplane mirrors it).
func controlPlane(c *cloud) *cpv1alpha1.ControlPlane {
	p := presets[c.size]
	svc := func(name string, replicas int32) *cpv1alpha1.Service {
		s := &cpv1alpha1.Service{Replicas: replicas}
		if ep := c.endpoint(name); ep != "" {
			s.PublicEndpoint = ep
		}
		return s
	}
	services := cpv1alpha1.Services{
		Keystone: &cpv1alpha1.Keystone{Mode: "Managed", Service: *svc("keystone", p.keystone)},
	}
	spec := c.xr.Spec.Services
	if spec.Horizon {
		services.Horizon = svc("horizon", p.api)
	}
	if spec.Glance {
		services.Glance = svc("glance", p.api)
	}
	// Nova cannot schedule without Placement; the CRD runs Placement but
	// not Nova yet, so a cloud with Nova gets its Placement already.
	if spec.Nova {
		services.Placement = svc("placement", p.api)
	}
	if spec.Barbican {
		services.Barbican = svc("barbican", p.api)
	}
	return &cpv1alpha1.ControlPlane{
		TypeMeta:   metav1.TypeMeta{APIVersion: cpv1alpha1.SchemeGroupVersion.String(), Kind: cpv1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Namespace: c.namespace(), Labels: c.labels()},
		Spec: cpv1alpha1.ControlPlaneSpec{
			OpenStackRelease: c.xr.Spec.OpenStackRelease,
			Region:           string(c.xr.Spec.Region),
			Infrastructure: cpv1alpha1.Infrastructure{
				Database: cpv1alpha1.Database{
					ClusterRef: cpv1alpha1.Reference{Name: databaseCluster}, Database: databaseName,
					SecretRef: cpv1alpha1.Reference{Name: databaseSecret}, Replicas: p.database,
				},
				Cache: cpv1alpha1.Cache{ClusterRef: cpv1alpha1.Reference{Name: cacheCluster}, Backend: cacheBackend, Replicas: p.cache},
			},
			Services: services,
			KORC: &cpv1alpha1.KORC{AdminCredential: cpv1alpha1.AdminCredential{
				CloudCredentialsRef: cpv1alpha1.CloudCredentialsRef{CloudName: adminCloudName, SecretName: adminCloudSecret},
			}},
			// The pools, as the C5C3 docs' ControlPlane names them; each
			// one's kubeconfig is beside it (see composePoolAccess).
			Compute: &cpv1alpha1.Compute{HypervisorClusters: names(c.xr.Spec.HypervisorClusters)},
			Storage: &cpv1alpha1.Storage{StorageClusters: names(c.xr.Spec.StorageClusters)},
		},
	}
}

func names(pools []v1alpha1.PoolName) []string {
	out := make([]string, 0, len(pools))
	for _, p := range pools {
		out = append(out, string(p))
	}
	return out
}

// droppedPoolReferences lists the pool references the landscape's
// ControlPlane CRD dropped, as the observed ControlPlane shows: the real
// c5c3-operator's CRD has no spec.compute or spec.storage yet, and the API
// server prunes what its schema does not know.
func droppedPoolReferences(observed map[resource.Name]resource.ObservedComposed) []string {
	o, ok := observed[resourceControlPlane]
	if !ok {
		return nil
	}
	if _, err := o.Resource.GetValue("status.atProvider.manifest.spec"); err != nil {
		return nil // not observed yet
	}
	var dropped []string
	for _, path := range []string{"spec.compute.hypervisorClusters", "spec.storage.storageClusters"} {
		if _, err := o.Resource.GetValue("status.atProvider.manifest." + path); err != nil {
			dropped = append(dropped, "ControlPlane "+path)
		}
	}
	return dropped
}

// unsupported lists what the cloud asks for that the real ControlPlane CRD
// cannot carry yet: enabled services it has no field for, and settings by
// field path. They are reported in status rather than emitted as fields
// the API server would prune.
func unsupported(s *v1alpha1.OpenStackClusterParameters) (services, settings []string) {
	for _, sv := range []struct {
		name    string
		enabled bool
	}{{"nova", s.Services.Nova}, {"neutron", s.Services.Neutron}, {"cinder", s.Services.Cinder},
		{"octavia", s.Services.Octavia}, {"manila", s.Services.Manila}} {
		if sv.enabled {
			services = append(services, sv.name)
		}
	}
	if s.Cortex.Enabled {
		settings = append(settings, "spec.cortex")
	}
	if s.TLS.Enabled {
		// The operator's endpoints get their certificates from the
		// Gateway they are attached to, not from an issuer of their own.
		settings = append(settings, "spec.tls.issuerRef")
	}
	if s.Network.ExternalNetwork != "" {
		settings = append(settings, "spec.network.externalNetwork")
	}
	if s.Network.MTU != 0 {
		// Neutron's MTU is a setting of its server, which the ControlPlane
		// does not expose.
		settings = append(settings, "spec.network.mtu")
	}
	return services, settings
}

// capSize applies a Composition's largest size.
func capSize(asked v1alpha1.Size, maxSize string) (v1alpha1.Size, error) {
	i := indexOf(asked)
	if i < 0 {
		return "", fmt.Errorf("spec.size %q must be one of small, medium, large, xlarge", asked)
	}
	if maxSize == "" {
		return asked, nil
	}
	m := indexOf(v1alpha1.Size(maxSize))
	if m < 0 {
		return "", fmt.Errorf("the Composition's input maxSize %q must be one of small, medium, large, xlarge", maxSize)
	}
	if i > m {
		return sizeOrder[m], nil
	}
	return asked, nil
}

func indexOf(s v1alpha1.Size) int {
	for i, o := range sizeOrder {
		if o == s {
			return i
		}
	}
	return -1
}
