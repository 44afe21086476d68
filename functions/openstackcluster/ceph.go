package main

// Storage isolation uses this provider's Ceph resources (ceph.provider.c5c3.io
// Pool and Client), not Rook's CephBlockPool and CephClient Objects, because:
//   - the Pool reports its usage (ceph df) in status, which the cloud's
//     status shows; Rook's CephBlockPool reports none;
//   - the Client publishes its key only as a connection secret in the
//     management cluster, from where an Object copies it into the
//     control-plane cluster (remote.SecretCopy): the key never passes through
//     this function, an object's spec or status, or an event. Rook's CephClient writes the key
//     into a Secret of the pool cluster, which would have to be observed
//     through an Object whose status carries the Secret;
//   - the same resources serve a Ceph cluster that Rook does not run (the
//     local stack's, or an existing one), and the provider refuses a pool
//     name it did not create instead of adopting another tenant's pool.
// The storage pool composes the Ceph ProviderConfig (named like its
// kubernetes ProviderConfig) once its CephCluster is up. A CephFS or an
// object store needs daemons (MDS, RGW), which only Rook can run in the pool
// cluster, so those are Rook objects placed there.

import (
	"fmt"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	corev1 "k8s.io/api/core/v1"
	quantity "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephcaps"
	"github.com/c5c3/consumer-plane/internal/cephplacement"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// Uses of the tenant's Ceph pools.
const (
	useVolumes   = "volumes"
	useImages    = "images"
	useEphemeral = "ephemeral"
)

// rookNamespace is where the storage pool's Rook runs (see the
// StorageCluster function).
const rookNamespace = "rook-ceph"

// gib is a gibibyte, the unit of spec.storage.ceph.volumePool.quotaGB.
const gib = int64(1) << 30

// storageState is how far the tenant's storage in one pool is.
type storageState struct {
	status v1alpha1.CephResources
	// ready: every pool and the client are ready and the key has reached
	// the control-plane cluster.
	ready   bool
	waiting []string
	// kept says which filesystem or object store the claim switched off
	// stays, and why.
	kept []string
}

// composeStorage composes the tenant's Ceph pools and client in a storage
// pool, and once the client's key exists, its Secret in the control-plane
// cluster.
// quotas are its pools' quotas in GB (0: unlimited), what the storage pool
// gave the cloud (see storageUse.quotas); a pool without one is not made
// yet.
// volumeReplication is its volume pool's replication (storageUse.replicas).
// In a stretched storage pool (sp, nil when it is gone) every pool is
// placed as the stretch places it: 2 replicas in each zone, on the pool's
// device class (internal/cephplacement).
func composeStorage(c *cloud, st string, sp *v1alpha1.XStorageCluster, quotas map[string]int64, volumeReplication int32, namespaceReady bool, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (storageState, error) {
	s := &c.xr.Spec.Storage.Ceph
	stretched := sp != nil && cephplacement.Stretched(&sp.Spec)
	access := pool.ProviderConfigName(pool.KindStorage, st)
	res := storageState{status: v1alpha1.CephResources{StorageCluster: st}, ready: true}

	type cephPool struct {
		use         string
		replication int32
		compression v1alpha1.Compression
		into        **v1alpha1.CephPool
	}
	pools := []cephPool{
		{useVolumes, volumeReplication, s.VolumePool.Compression, &res.status.VolumePool},
		{useImages, s.ImagePool.Replication, s.ImagePool.Compression, &res.status.ImagePool},
	}
	if s.EphemeralPool.Enabled {
		pools = append(pools, cephPool{useEphemeral, s.EphemeralPool.Replication, "none", &res.status.EphemeralPool})
	}
	// waitsForShare: a pool without a quota is not made until the storage
	// pool gives the share it takes (storageUse.quotas).
	waitsForShare := func(what string) {
		res.ready = false
		res.waiting = append(res.waiting, fmt.Sprintf("the %s in %s waits for the storage pool's share", what, st))
	}
	names := make([]string, 0, len(pools))
	for _, p := range pools {
		quota, ok := quotas[p.use]
		if !ok {
			waitsForShare(p.use + " pool")
			continue
		}
		name := c.cephPool(st, p.use)
		names = append(names, name)
		mr := &cephv1alpha1.Pool{
			TypeMeta:   metav1.TypeMeta{APIVersion: cephv1alpha1.SchemeGroupVersion.String(), Kind: "Pool"},
			ObjectMeta: metav1.ObjectMeta{Name: c.name + "-" + st + "-" + p.use, Labels: c.labels()},
			Spec: cephv1alpha1.PoolSpec{
				ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: access}},
				ForProvider: cephv1alpha1.PoolParameters{
					Name: name, Size: p.replication, CompressionMode: cephv1alpha1.CompressionMode(p.compression),
					Application: "rbd", DataPolicy: dataPolicy(c.xr),
				},
			},
		}
		if quota > 0 {
			mr.Spec.ForProvider.QuotaMaxBytes = ptr.To(quota * gib)
		}
		if stretched {
			fp := &mr.Spec.ForProvider
			fp.Size, fp.MinSize, fp.Stretch = cephplacement.StretchReplicas, ptr.To[int32](cephplacement.StretchMinReplicas),
				&cephv1alpha1.Stretch{Root: "default", ZoneType: cephplacement.DomainZone}
			fp.DeviceClass = string(sp.Spec.Ceph.DeviceClass)
		}
		key := cephPoolResource(st, p.use)
		status, err := addManaged(key, mr, observed, desired)
		if err != nil {
			return res, err
		}
		cp := &v1alpha1.CephPool{Name: name, Status: status, QuotaGB: quota}
		if o, ok := observed[key]; ok {
			cp.UsedBytes, _ = o.Resource.GetInteger("status.atProvider.usedBytes")
			cp.AvailableBytes, _ = o.Resource.GetInteger("status.atProvider.availableBytes")
			cp.Placement = observedPlacement(o)
		}
		*p.into = cp
		if status != v1alpha1.CephPoolReady {
			res.ready = false
			res.waiting = append(res.waiting, fmt.Sprintf("Ceph pool %s in %s is %s", name, st, status))
		}
	}

	// The client may use exactly the tenant's pools of this cluster.
	client := &cephv1alpha1.Client{
		TypeMeta:   metav1.TypeMeta{APIVersion: cephv1alpha1.SchemeGroupVersion.String(), Kind: "Client"},
		ObjectMeta: metav1.ObjectMeta{Name: c.name + "-" + st + "-client", Labels: c.labels()},
		Spec: cephv1alpha1.ClientSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{
				ProviderConfigReference:          &xpv2.Reference{Name: access},
				WriteConnectionSecretToReference: &xpv2.SecretReference{Namespace: c.in.SecretNamespace, Name: c.cephClientSecret(st)},
			},
			ForProvider: cephv1alpha1.ClientParameters{
				Entity: c.cephEntity(st),
				Caps:   cephcaps.Tenant(names...),
			},
		},
	}
	clientKey := cephClientResource(st)
	clientStatus, err := addManaged(clientKey, client, observed, desired)
	if err != nil {
		return res, err
	}
	res.status.Client = &v1alpha1.CephClient{Name: "client." + c.cephEntity(st)}
	// Named anew when the copy moved from a provider-kubernetes Object to a
	// SecretCopy: a composed resource does not change its kind in place.
	secretKey := resource.Name("ceph-" + st + "-client-key")
	_, keyCopying := observed[secretKey]
	switch {
	case clientStatus != v1alpha1.CephPoolReady:
		res.ready = false
		res.waiting = append(res.waiting, fmt.Sprintf("CephX client %s in %s is %s", c.cephEntity(st), st, clientStatus))
	case !namespaceReady && !keyCopying:
		res.ready = false
		res.waiting = append(res.waiting, fmt.Sprintf("the key of %s waits for namespace %s", c.cephEntity(st), c.namespace()))
	default:
		// The key exists only now; the provider's SecretCopy copies it from
		// the client's connection secret into the cloud's namespace.
		o, err := remote.SecretCopy(c.name+"-"+st+"-ceph-client", c.controlPlaneAccess(), remote.Copy{
			SourceNamespace: c.in.SecretNamespace, SourceName: c.cephClientSecret(st),
			Keys:            []kubernetesv1alpha1.KeyCopy{{From: cephv1alpha1.ConnectionSecretKeyKey}, {From: cephv1alpha1.ConnectionSecretKeyMonHost}},
			Literals:        map[string]string{cephv1alpha1.ConnectionSecretKeyEntity: "client." + c.cephEntity(st)},
			TargetNamespace: c.namespace(), TargetName: cephClientSecretRemote(st), Labels: c.labels(),
		})
		if err != nil {
			return res, err
		}
		desired[secretKey] = &resource.DesiredComposed{Resource: o}
		if function.ObservedReady(observed, secretKey) {
			desired[secretKey].Ready = resource.ReadyTrue
			res.status.Client.SecretRef = &v1alpha1.SecretReference{Name: cephClientSecretRemote(st), Namespace: c.namespace()}
		} else {
			res.ready = false
			res.waiting = append(res.waiting, fmt.Sprintf("the key of %s is being copied to Secret %s/%s", c.cephEntity(st), c.namespace(), cephClientSecretRemote(st)))
		}
	}

	// A Rook object of the tenant in the pool cluster (composed as
	// ceph-<pool>-<use>, named <cloud>-<short>), and whether it is up.
	rook := func(use, short, kind string, spec map[string]any) (string, bool) {
		key := resource.Name("ceph-" + st + "-" + use)
		name := c.rookObject(short)
		desired[key] = &resource.DesiredComposed{Resource: remote.Object(c.name+"-"+st+"-"+short, access, map[string]any{
			"apiVersion": "ceph.rook.io/v1", "kind": kind,
			"metadata": map[string]any{"name": name, "namespace": rookNamespace, "labels": anyMap(c.labels())},
			"spec":     spec,
		})}
		if function.ObservedReady(observed, key) {
			desired[key].Ready = resource.ReadyTrue
			return name, true
		}
		res.ready = false
		res.waiting = append(res.waiting, fmt.Sprintf("%s %s in %s is being created", kind, name, st))
		return name, false
	}
	// rookPool is a Rook pool of replicas with a quota (GB, 0 unlimited);
	// in a stretched storage pool placed as the stretch places every pool.
	rookPool := func(replicas int32, quotaGB int64) map[string]any {
		p := map[string]any{"replicated": map[string]any{"size": int64(replicas)}}
		if stretched {
			p = cephplacement.For(&sp.Spec, sp.Spec.Zones, replicas).Rook(nil)
		}
		if quotaGB > 0 {
			p["quotas"] = map[string]any{"maxSize": fmt.Sprintf("%dGi", quotaGB)}
		}
		return p
	}
	// The tenant's files and objects are data as its volumes are: under
	// spec.dataPolicy Retain (the default), Rook keeps the filesystem's and
	// the object store's pools when their object goes (the cloud deleted,
	// filesystem or objectStore switched off, the storage pool left), as
	// the provider keeps an RBD pool. Only the platform's Delete lets
	// Rook delete them with it.
	retain := dataPolicy(c.xr) == cephv1alpha1.DataPolicyRetain
	var fs, rgw map[string]any
	fsQuota, fsGiven := quotas[useFilesystem]
	switch {
	case s.Filesystem.Enabled && !fsGiven:
		waitsForShare("filesystem")
	case s.Filesystem.Enabled:
		data := rookPool(s.Filesystem.DataPoolReplication, fsQuota)
		data["name"] = "data0"
		fs = map[string]any{
			"metadataPool":               rookPool(s.Filesystem.MetadataPoolReplication, quotas[useFilesystemMetadata]),
			"dataPools":                  []any{data},
			"metadataServer":             map[string]any{"activeCount": int64(1), "activeStandby": true},
			"preserveFilesystemOnDelete": retain,
			"preservePoolsOnDelete":      retain,
		}
	default:
		fs = switchedOff(observed, resource.Name("ceph-"+st+"-filesystem"), retain, "preserveFilesystemOnDelete", "preservePoolsOnDelete")
	}
	if fs != nil {
		name, up := rook("filesystem", "cephfs", "CephFilesystem", fs)
		res.status.Filesystem = &v1alpha1.CephFilesystemStatus{Name: name, Status: v1alpha1.CephPoolCreating, QuotaGB: fsQuota}
		if up {
			res.status.Filesystem.Status, res.status.Filesystem.MDSActive = v1alpha1.CephPoolReady, 1
		}
		if !s.Filesystem.Enabled {
			res.kept = append(res.kept, keptNotice("CephFilesystem", name, st, "spec.storage.ceph.filesystem", "files", retain))
		}
	}
	rgwQuota, rgwGiven := quotas[useObjectStore]
	switch {
	case s.ObjectStore.Enabled && !rgwGiven:
		waitsForShare("object store")
	case s.ObjectStore.Enabled:
		rgw = map[string]any{
			"metadataPool":          rookPool(objectStoreMetadataReplicas, quotas[useObjectStoreMetadata]),
			"dataPool":              rookPool(s.ObjectStore.DataPoolReplication, rgwQuota),
			"gateway":               map[string]any{"port": int64(80), "instances": int64(2)},
			"preservePoolsOnDelete": retain,
		}
	default:
		rgw = switchedOff(observed, resource.Name("ceph-"+st+"-object-store"), retain, "preservePoolsOnDelete")
	}
	if rgw != nil {
		name, up := rook("object-store", "rgw", "CephObjectStore", rgw)
		res.status.ObjectStore = &v1alpha1.CephPool{Name: name, Status: v1alpha1.CephPoolCreating, QuotaGB: rgwQuota}
		if up {
			res.status.ObjectStore.Status = v1alpha1.CephPoolReady
		}
		if !s.ObjectStore.Enabled {
			res.kept = append(res.kept, keptNotice("CephObjectStore", name, st, "spec.storage.ceph.objectStore", "objects", retain))
		}
	}
	return res, nil
}

// switchedOff is the spec to compose for a filesystem or object store
// (composed resource key) the claim switched off, or nil when it goes now.
// It is the tenant's files or objects: under Retain it stays as it is, its
// preserve flags set, so that deleting it later (the cloud deleted) keeps
// its pools too. Under Delete it goes, once Rook has been told to delete
// its pools with it: a spec still preserving them is composed once more
// with the flags unset.
func switchedOff(observed map[resource.Name]resource.ObservedComposed, key resource.Name, retain bool, preserve ...string) map[string]any {
	o, ok := observed[key]
	if !ok {
		return nil
	}
	spec, found, err := unstructured.NestedMap(o.Resource.Object, "spec", "forProvider", "manifest", "spec")
	if err != nil || !found {
		return nil
	}
	preserved := false
	for _, f := range preserve {
		preserved = preserved || spec[f] == true
		spec[f] = retain
	}
	if !retain && !preserved {
		return nil
	}
	return spec
}

// keptNotice is the claim's line for a filesystem or object store kept
// after the claim switched it off, or deleted with its pools.
func keptNotice(kind, name, st, field, what string, retain bool) string {
	if !retain {
		return fmt.Sprintf("%s %s in %s, off in %s, is being deleted with its pools and the tenant's %s (spec.dataPolicy Delete)", kind, name, st, field, what)
	}
	return fmt.Sprintf("%s %s in %s stays though %s is off: it holds the tenant's %s (spec.dataPolicy Retain); switch it on again to use it, or ask the platform team to let the %s go (spec.dataPolicy: Delete)", kind, name, st, field, what, what)
}

// addManaged composes a managed resource and returns its state: Creating
// until it is observed Ready, Failed when the provider cannot sync it. The
// states are those status.cephResources reports; the cloud's other managed
// resources use the same three.
func addManaged(key resource.Name, mr runtime.Object, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (v1alpha1.CephPoolStatus, error) {
	cd, err := function.Composed(mr)
	if err != nil {
		return "", err
	}
	desired[key] = &resource.DesiredComposed{Resource: cd}
	o, ok := observed[key]
	if !ok {
		return v1alpha1.CephPoolCreating, nil
	}
	switch {
	case o.Resource.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue:
		desired[key].Ready = resource.ReadyTrue
		return v1alpha1.CephPoolReady, nil
	case o.Resource.GetCondition(xpv2.TypeSynced).Status == corev1.ConditionFalse:
		return v1alpha1.CephPoolFailed, nil
	default:
		return v1alpha1.CephPoolCreating, nil
	}
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// dataPolicy of the tenant's Ceph pools: the cloud's, Retain unless the
// platform team set Delete.
func dataPolicy(xr *v1alpha1.XOpenStackCluster) cephv1alpha1.DataPolicy {
	if xr.Spec.DataPolicy == v1alpha1.DataPolicyDelete {
		return cephv1alpha1.DataPolicyDelete
	}
	return cephv1alpha1.DataPolicyRetain
}

// cephPoolResource names the composed Pool of a use of the tenant's storage
// in a storage pool.
func cephPoolResource(st, use string) resource.Name { return resource.Name("ceph-" + st + "-" + use) }

// cephClientResource is the cloud's CephX client in storage pool st: every
// cloud that composes its storage there has one.
func cephClientResource(st string) resource.Name { return resource.Name("ceph-" + st + "-client") }

// observedVolumePool is the quota (bytes, 0 unlimited) and replication of
// the tenant's volume pool in a storage pool, and whether it exists.
func observedVolumePool(observed map[resource.Name]resource.ObservedComposed, st string) (quota int64, size int32, ok bool) {
	o, ok := observed[cephPoolResource(st, useVolumes)]
	if !ok {
		return 0, 0, false
	}
	q, _ := o.Resource.GetInteger("spec.forProvider.quotaMaxBytes")
	n, _ := o.Resource.GetInteger("spec.forProvider.size")
	return q, int32(n), true //nolint:gosec // a pool's size, at most 10
}

// Where a filesystem's or object store's quotas are in its observed
// Object (Rook's PoolSpec.quotas.maxSize, "<n>Gi").
var rookQuotaPaths = []struct {
	key       string
	use, path string
}{
	{"filesystem", useFilesystem, "spec.forProvider.manifest.spec.dataPools[0].quotas.maxSize"},
	{"filesystem", useFilesystemMetadata, "spec.forProvider.manifest.spec.metadataPool.quotas.maxSize"},
	{"object-store", useObjectStore, "spec.forProvider.manifest.spec.dataPool.quotas.maxSize"},
	{"object-store", useObjectStoreMetadata, "spec.forProvider.manifest.spec.metadataPool.quotas.maxSize"},
}

// observedQuotasGB are the quotas (GB, 0 unlimited) of the tenant's pools
// besides its volume pool in a storage pool, by use, for those that exist.
func observedQuotasGB(observed map[resource.Name]resource.ObservedComposed, st string) map[string]int64 {
	held := map[string]int64{}
	for _, use := range []string{useImages, useEphemeral} {
		if o, ok := observed[cephPoolResource(st, use)]; ok {
			b, _ := o.Resource.GetInteger("spec.forProvider.quotaMaxBytes")
			held[use] = b / gib
		}
	}
	for _, q := range rookQuotaPaths {
		o, ok := observed[cephPoolResource(st, q.key)]
		if !ok {
			continue
		}
		held[q.use] = 0
		if v, err := o.Resource.GetString(q.path); err == nil {
			if n, err := quantity.ParseQuantity(v); err == nil {
				held[q.use] = n.Value() / gib
			}
		}
	}
	return held
}

// observedPlacement says how Ceph places a tenant's pool, from its Pool's
// status: "stretch_zone, size 4, min_size 2" ("" before it is read).
func observedPlacement(o resource.ObservedComposed) string {
	rule, _ := o.Resource.GetString("status.atProvider.crushRule")
	size, _ := o.Resource.GetInteger("status.atProvider.size")
	minSize, _ := o.Resource.GetInteger("status.atProvider.minSize")
	if rule == "" || size == 0 {
		return ""
	}
	return fmt.Sprintf("%s, size %d, min_size %d", rule, size, minSize)
}
