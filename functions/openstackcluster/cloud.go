package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
)

// Labels on what the function places in other clusters, so operators can
// tell whose it is.
const (
	labelCloud  = "c5c3.io/openstack-cluster"
	labelTenant = "c5c3.io/tenant"
)

// cloud is a tenant's cloud with the names of everything composed for it.
type cloud struct {
	xr *v1alpha1.XOpenStackCluster
	in *input.CloudSettings
	// name of the composite; it names the cloud everywhere, because it is
	// unique where claim names are only unique per namespace.
	name string
	// tenant is the claim's namespace and claim its name; both empty for
	// an unclaimed composite.
	tenant, claim string
	// size after the Composition's cap.
	size v1alpha1.Size
	// controlPlaneCluster the cloud's control plane runs in: the one its
	// spec names, else the one it was placed in, else the only one of its
	// region (see placed and landscapeOf); empty until one is known.
	controlPlaneCluster string
	// credentials is where the tenant's clouds.yaml goes: the claim's
	// connection secret (see credentialsOf).
	credentials xpv2.SecretReference
	// removing says, by requirement key (keyPool), why a pool the spec no
	// longer names is still the cloud's (see holdLeaving); such a pool is
	// appended to the cloud's copy of the spec.
	removing map[string]string
}

func newCloud(xr *v1alpha1.XOpenStackCluster, in *input.CloudSettings) (*cloud, error) {
	c := &cloud{xr: xr, in: in, name: xr.GetName(), tenant: xr.GetLabels()[function.LabelClaimNamespace], claim: xr.GetLabels()[function.LabelClaimName]}
	if c.tenant == "" {
		c.claim = ""
	}
	// The claim and the pools' usages name the composite by its group.
	if gv := xr.APIVersion; gv != v1alpha1.SchemeGroupVersion.String() && gv != v1alpha1.DocsGroupVersion.String() {
		return nil, fmt.Errorf("apiVersion %q: this function composes XOpenStackClusters of %s or %s", gv, v1alpha1.SchemeGroupVersion, v1alpha1.DocsGroupVersion)
	}
	// The cloud's namespace is openstack-<name>, a DNS label.
	if errs := validation.IsDNS1123Label(c.namespace()); len(errs) > 0 {
		return nil, fmt.Errorf("metadata.name %q names the cloud's namespace %q in the control-plane cluster: it must be a DNS label of at most %d characters", c.name, c.namespace(), validation.DNS1123LabelMaxLength-len("openstack-"))
	}
	if err := checkBounds(&xr.Spec); err != nil {
		return nil, err
	}
	size, err := capSize(xr.Spec.Size, in.MaxSize)
	if err != nil {
		return nil, err
	}
	c.size = size
	c.controlPlaneCluster = string(xr.Spec.ControlPlaneCluster)
	return c, nil
}

// placed keeps a cloud that names no control-plane cluster in the one it
// was placed in: the one its usage protects, composed as soon as the cloud
// was admitted to it. The cloud stays there whatever control-plane
// clusters its region gains later; moving it is the spec's to say.
func (c *cloud) placed(observed map[resource.Name]resource.ObservedComposed) {
	if c.controlPlaneCluster != "" {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(observed)) {
		if cp, ok := strings.CutPrefix(string(name), string(usageName(usedControlPlane, ""))); ok {
			c.controlPlaneCluster = cp
			return
		}
	}
}

// namespace of the cloud in the control-plane cluster.
func (c *cloud) namespace() string { return "openstack-" + c.name }

// labels of what is placed in other clusters for the cloud.
func (c *cloud) labels() map[string]string {
	l := map[string]string{labelCloud: c.name}
	if c.tenant != "" {
		l[labelTenant] = c.tenant
	}
	return l
}

// controlPlaneAccess is the provider-kubernetes ProviderConfig that reaches
// the control-plane cluster (composed by its ControlPlaneCluster).
func (c *cloud) controlPlaneAccess() string {
	return pool.ProviderConfigName(pool.KindControlPlane, c.controlPlaneCluster)
}

// endpoint is a service's public URL, when the Composition sets a domain.
func (c *cloud) endpoint(service string) string {
	if c.in.EndpointDomain == "" {
		return ""
	}
	return fmt.Sprintf("https://%s.%s.%s", service, c.name, c.in.EndpointDomain)
}

// authURL pins where the provider logs in with the cloud's admin
// credential: the Keystone endpoint the Composition gives the cloud
// (/v3), whatever the auth_url of the clouds.yaml its control plane writes.
// That clouds.yaml comes from the control-plane cluster, where a
// compromised control plane could point it at a host of its choosing and
// collect the admin password. Empty without an endpoint domain: the
// provider then reads the clouds.yaml's auth_url (docs/security.md).
func (c *cloud) authURL() string {
	if ep := c.endpoint("keystone"); ep != "" {
		return ep + "/v3"
	}
	return ""
}

// adminSecret is the management-cluster Secret that holds the cloud's admin
// clouds.yaml, which the cloud's ProviderConfig reads.
func (c *cloud) adminSecret() string { return c.name + "-openstack-admin" }

// adminCACertKey is the admin credential Secret's key of the CA of the
// cloud's endpoints; empty when the Composition says there is none.
func (c *cloud) adminCACertKey() string {
	return ptr.Deref(c.in.AdminCACertKey, input.DefaultAdminCACertKey)
}

// ovnTLSSecret is the management-cluster Secret that holds the client
// certificate for the cloud's OVN databases, when they speak ssl:.
func (c *cloud) ovnTLSSecret() string { return c.name + "-ovn-client-tls" }

// cephEntity is the tenant's CephX user in a storage pool (without
// "client."). Like the pools, it names the storage pool too: a Ceph cluster
// is a pool's own, but where several pools share one (the local demo) the
// names must not meet.
func (c *cloud) cephEntity(storagePool string) string {
	return "openstack-" + c.name + "-" + storagePool
}

// cephPool names one of the tenant's pools in a storage pool's Ceph.
func (c *cloud) cephPool(storagePool, use string) string {
	return c.name + "-" + storagePool + "-" + use
}

// rookObject names one of the tenant's Rook objects in a storage pool's
// cluster (which is the pool's own, in every landscape).
func (c *cloud) rookObject(short string) string { return c.name + "-" + short }

// cephClientSecret is the management-cluster Secret the CephX client of a
// storage pool publishes its key to.
func (c *cloud) cephClientSecret(storagePool string) string {
	return c.name + "-" + storagePool + "-ceph-client"
}

// cephClientSecretRemote is the Secret with the key in the cloud's namespace
// of the control-plane cluster.
func cephClientSecretRemote(storagePool string) string { return "ceph-client-" + storagePool }

// cinderBackend is the Cinder backend of a storage pool: by this project's
// convention the c5c3-operator names a pool's RBD backend ceph-<pool>.
func cinderBackend(storagePool string) string { return "ceph-" + storagePool }

// tenantUser names the cloud's Keystone user for its tenant (and its User
// and ApplicationCredential resources).
func (c *cloud) tenantUser() string { return c.name + "-tenant" }

// tenantUserSecret is the management-cluster Secret of the tenant user's
// generated password, which only the provider reads.
func (c *cloud) tenantUserSecret() string { return c.name + "-tenant-user" }

// tenantRole is what the tenant's user holds on its project: Keystone's
// member (which implies reader). Not admin: in OpenStack's policies admin
// is cloud-wide, not the project's.
const tenantRole = "member"

// claimCredentialsSuffix names the connection secret of a claim that asks
// for none: <claim name>-credentials.
const claimCredentialsSuffix = "-credentials"

// cloudName names the cloud in the tenant's clouds.yaml (openstack
// --os-cloud NAME): the claim's name, or the composite's.
func (c *cloud) cloudName() string {
	if c.claim != "" {
		return c.claim
	}
	return c.name
}

// display names the cloud as its tenant knows it: OpenStackCluster
// <namespace>/<claim>, or the composite for a cloud without a claim.
func (c *cloud) display() string {
	if c.claim != "" {
		return fmt.Sprintf("OpenStackCluster %s/%s", c.tenant, c.claim)
	}
	return v1alpha1.XOpenStackClusterKind + " " + c.name
}

// checkBounds refuses quotas the cloud's services cannot hold, as the
// schema does; a composite admitted before the schema had its maximums
// would otherwise wrap (quotaGB in bytes, ramGB in MiB) into a negative or
// wrong limit.
func checkBounds(s *v1alpha1.OpenStackClusterParameters) error {
	ceph := &s.Storage.Ceph
	for _, q := range []struct {
		field string
		gb    int64
	}{
		{"volumePool", ceph.VolumePool.QuotaGB}, {"imagePool", ceph.ImagePool.QuotaGB}, {"ephemeralPool", ceph.EphemeralPool.QuotaGB},
		{"filesystem", ceph.Filesystem.QuotaGB}, {"objectStore", ceph.ObjectStore.QuotaGB},
	} {
		if q.gb < 0 || q.gb > v1alpha1.MaxCephQuotaGB {
			return fmt.Errorf("spec.storage.ceph.%s.quotaGB (%d) must be between 0 (unlimited in a dedicated storage pool, the default of the cloud's size in a shared one) and %d", q.field, q.gb, int64(v1alpha1.MaxCephQuotaGB))
		}
	}
	if s.Quotas == nil {
		return nil
	}
	type limit struct {
		field string
		v     *int64
		max   int64
	}
	var limits []limit
	if c := s.Quotas.Compute; c != nil {
		limits = append(limits, limit{"compute.cores", c.Cores, v1alpha1.MaxQuotaLimit}, limit{"compute.ramGB", c.RAMGB, v1alpha1.MaxRAMGB},
			limit{"compute.instances", c.Instances, v1alpha1.MaxQuotaLimit})
	}
	if v := s.Quotas.Volume; v != nil {
		limits = append(limits, limit{"volume.gigabytes", v.Gigabytes, v1alpha1.MaxQuotaLimit}, limit{"volume.volumes", v.Volumes, v1alpha1.MaxQuotaLimit},
			limit{"volume.snapshots", v.Snapshots, v1alpha1.MaxQuotaLimit})
	}
	if n := s.Quotas.Network; n != nil {
		limits = append(limits, limit{"network.networks", n.Networks, v1alpha1.MaxQuotaLimit}, limit{"network.ports", n.Ports, v1alpha1.MaxQuotaLimit},
			limit{"network.routers", n.Routers, v1alpha1.MaxQuotaLimit}, limit{"network.floatingIPs", n.FloatingIPs, v1alpha1.MaxQuotaLimit})
	}
	for _, l := range limits {
		if l.v != nil && (*l.v < -1 || *l.v > l.max) {
			return fmt.Errorf("spec.quotas.%s (%d) must be -1 (unlimited) or between 0 and %d", l.field, *l.v, l.max)
		}
	}
	return nil
}

// checkQuotaCaps refuses what the Composition's maxQuotas do not allow: a
// quota above its cap, or unlimited (-1) where a cap is set. The volume
// pool's cap is checked per storage pool (volumeQuotaGB).
func checkQuotaCaps(c *cloud) error {
	caps, q := c.in.MaxQuotas, c.xr.Spec.Quotas
	if caps == nil || q == nil {
		return nil
	}
	type capped struct {
		field  string
		v, cap *int64
	}
	var cs []capped
	if v := q.Compute; v != nil {
		cs = append(cs, capped{"compute.cores", v.Cores, caps.Cores}, capped{"compute.ramGB", v.RAMGB, caps.RAMGB}, capped{"compute.instances", v.Instances, caps.Instances})
	}
	if v := q.Volume; v != nil {
		cs = append(cs, capped{"volume.gigabytes", v.Gigabytes, caps.Gigabytes}, capped{"volume.volumes", v.Volumes, caps.Volumes}, capped{"volume.snapshots", v.Snapshots, caps.Snapshots})
	}
	if v := q.Network; v != nil {
		cs = append(cs, capped{"network.networks", v.Networks, caps.Networks}, capped{"network.ports", v.Ports, caps.Ports},
			capped{"network.routers", v.Routers, caps.Routers}, capped{"network.floatingIPs", v.FloatingIPs, caps.FloatingIPs})
	}
	for _, x := range cs {
		if x.v == nil || x.cap == nil || *x.v >= 0 && *x.v <= *x.cap {
			continue
		}
		asked := strconv.FormatInt(*x.v, 10)
		if *x.v < 0 {
			asked = "unlimited (-1)"
		}
		return fmt.Errorf("spec.quotas.%s: %s exceeds this Composition's cap of %d (maxQuotas.%s of its %s variant): ask for at most %d", x.field, asked, *x.cap, x.field[strings.Index(x.field, ".")+1:], c.in.Environment, *x.cap)
	}
	return nil
}
