package main

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/remote"
)

func init() {
	// composed.From looks up the GVKs of typed objects in this scheme.
	if err := ovnv1alpha1.AddToScheme(composed.Scheme); err != nil {
		panic(err)
	}
}

// Where the cloud's OVN databases are. The c5c3-operator runs them in the
// cloud's namespace and, by this project's convention (as for the admin
// credential), publishes their endpoints there in a ConfigMap: northbound
// and southbound, each a list of ovsdb endpoints (every member of a Raft
// cluster) separated by commas or spaces. For ssl: endpoints it also mints
// a client certificate in a kubernetes.io/tls Secret with the CA beside it.
const (
	ovnDatabasesConfigMap = "ovn-databases"
	ovnKeyNorthbound      = "northbound"
	ovnKeySouthbound      = "southbound"
	ovnClientTLSSecret    = "ovn-client-tls"
	// ovnMaxEndpoints is what the OVN ProviderConfig takes per database.
	ovnMaxEndpoints = 7
	// ovnMaxPriority is the highest HA chassis priority; Neutron counts
	// its gateway chassis' priorities down from it too.
	ovnMaxPriority = 32767
	// ovnMaxMembers is what an HAChassisGroup takes.
	ovnMaxMembers = 64
)

// Composed resources of the cloud's OVN.
const (
	resourceOVNDatabases      resource.Name = "ovn-databases"
	resourceOVNClientTLS      resource.Name = "ovn-client-tls"
	resourceOVNProviderConfig resource.Name = "ovn-provider-config"
)

// errNotPublished: the ConfigMap is not there (yet).
var errNotPublished = errors.New("not published")

// ovnEndpoint is what the OVN ProviderConfig's CRD accepts.
var ovnEndpoint = regexp.MustCompile(`^(tcp|ssl):[^:]+:[0-9]+$|^(tcp|ssl):\[[0-9a-fA-F:]+\]:[0-9]+$|^unix:/.+$`)

// networkState is how far the cloud's OVN objects are.
type networkState struct {
	ready   bool
	waiting []string
	status  v1alpha1.NetworkStatus
}

// needsNetwork says whether the cloud gets OVN objects: its Neutron places
// gateway ports on the chassis of its hypervisor pools.
func needsNetwork(c *cloud) bool {
	return c.xr.Spec.Services.Neutron && len(c.xr.Spec.HypervisorClusters) > 0
}

// composeNetwork composes, once the cloud's control plane says where its
// OVN databases are, an OVN ProviderConfig for them and per hypervisor pool
// a ChassisSet that observes the pool's chassis in the cloud's Southbound
// (the OVS agent announces each node's pool as its availability zone) and,
// once chassis are registered, an HA chassis group of them for the gateway
// ports of the pool's availability zone.
func composeNetwork(c *cloud, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (networkState, error) {
	st := networkState{}
	where := fmt.Sprintf("ConfigMap %s/%s in control-plane cluster %s", c.namespace(), ovnDatabasesConfigMap, c.controlPlaneCluster)
	desired[resourceOVNDatabases] = &resource.DesiredComposed{Resource: remote.Observed(c.name+"-ovn-databases", c.controlPlaneAccess(), map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": ovnDatabasesConfigMap, "namespace": c.namespace()},
	})}
	if function.ObservedReady(observed, resourceOVNDatabases) {
		desired[resourceOVNDatabases].Ready = resource.ReadyTrue
	}

	nb, sb, err := ovnDatabases(observed)
	if err != nil {
		// A ProviderConfig that exists keeps the endpoints it has: a
		// ConfigMap gone (or gone wrong) must not cut the cloud off its
		// gateways.
		pnb, psb, kept := observedOVNEndpoints(observed)
		switch {
		case !errors.Is(err, errNotPublished) && kept:
			st.waiting = append(st.waiting, fmt.Sprintf("%s: %v; keeping the endpoints the ProviderConfig has", where, err))
		case !errors.Is(err, errNotPublished):
			st.waiting = append(st.waiting, fmt.Sprintf("%s: %v", where, err))
		case !kept:
			st.waiting = append(st.waiting, "waiting for "+where+", where the c5c3-operator publishes the endpoints of the cloud's OVN databases")
		}
		if !kept {
			return st, nil
		}
		nb, sb = pnb, psb
	}
	st.status.Northbound = nb

	pc := &ovnv1alpha1.ProviderConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: ovnv1alpha1.SchemeGroupVersion.String(), Kind: "ProviderConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: c.name, Labels: c.labels()},
		Spec: ovnv1alpha1.ProviderConfigSpec{
			Northbound: ovnv1alpha1.Database{Endpoints: nb},
			Southbound: &ovnv1alpha1.Database{Endpoints: sb},
		},
	}
	if slices.ContainsFunc(append(slices.Clone(nb), sb...), func(e string) bool { return strings.HasPrefix(e, "ssl:") }) {
		// The client certificate is read into the management cluster, as
		// the admin credential is.
		o := remote.Observed(c.name+"-ovn-client-tls", c.controlPlaneAccess(), map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{"name": ovnClientTLSSecret, "namespace": c.namespace()},
		})
		var details []remote.Detail
		for _, k := range []string{ovnv1alpha1.TLSSecretKeyCA, ovnv1alpha1.TLSSecretKeyCert, ovnv1alpha1.TLSSecretKeyKey} {
			details = append(details, remote.Detail{
				APIVersion: "v1", Kind: "Secret", Namespace: c.namespace(), Name: ovnClientTLSSecret, FieldPath: "data[" + k + "]", Key: k,
			})
		}
		remote.Publish(o, c.in.SecretNamespace, c.ovnTLSSecret(), details...)
		desired[resourceOVNClientTLS] = &resource.DesiredComposed{Resource: o}
		if function.ObservedReady(observed, resourceOVNClientTLS) {
			desired[resourceOVNClientTLS].Ready = resource.ReadyTrue
		} else {
			st.waiting = append(st.waiting, fmt.Sprintf("waiting for the OVN client certificate Secret %s/%s in control-plane cluster %s", c.namespace(), ovnClientTLSSecret, c.controlPlaneCluster))
			// A ProviderConfig that exists is kept, with the copy it has.
			if _, ok := observed[resourceOVNProviderConfig]; !ok {
				return st, nil
			}
		}
		pc.Spec.TLSSecretRef = &xpv2.SecretReference{Namespace: c.in.SecretNamespace, Name: c.ovnTLSSecret()}
	}
	cd, err := function.Composed(pc)
	if err != nil {
		return st, err
	}
	desired[resourceOVNProviderConfig] = &resource.DesiredComposed{Resource: cd}
	if _, ok := observed[resourceOVNProviderConfig]; ok {
		// A ProviderConfig has no Ready condition: it is ready once it exists.
		desired[resourceOVNProviderConfig].Ready = resource.ReadyTrue
	}

	st.ready = len(st.waiting) == 0
	for _, hc := range c.xr.Spec.HypervisorClusters {
		g, err := composeGateways(c, string(hc), observed, desired)
		if err != nil {
			return st, err
		}
		if g.Status != v1alpha1.CephPoolReady {
			st.ready = false
			st.waiting = append(st.waiting, gatewayWait(c, g))
		}
		st.status.Gateways = append(st.status.Gateways, g)
	}
	return st, nil
}

// composeGateways composes the ChassisSet of one hypervisor pool and, once
// it has seen chassis, the pool's HA chassis group.
func composeGateways(c *cloud, poolName string, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (v1alpha1.GatewayChassisGroup, error) {
	name := c.name + "-" + poolName
	g := v1alpha1.GatewayChassisGroup{HypervisorCluster: poolName, Status: v1alpha1.CephPoolCreating}
	managed := xpv2.ClusterManagedResourceSpec{ProviderConfigReference: &xpv2.Reference{Name: c.name}}
	cs := &ovnv1alpha1.ChassisSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: ovnv1alpha1.SchemeGroupVersion.String(), Kind: "ChassisSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: c.labels()},
		Spec: ovnv1alpha1.ChassisSetSpec{ClusterManagedResourceSpec: managed, ForProvider: ovnv1alpha1.ChassisSetParameters{
			AvailabilityZones: []string{poolName}, MinChassis: 1,
		}},
	}
	chassisKey, groupKey := resource.Name("chassis-"+poolName), resource.Name("gateways-"+poolName)
	if _, err := addManaged(chassisKey, cs, observed, desired); err != nil {
		return g, err
	}

	members := gatewayMembers(observed[chassisKey])
	if len(members) == 0 {
		// Every chassis gone (or not observed yet) leaves a group that
		// exists as it is: OVN fails gateways over by liveness, and a
		// group must have a member.
		if o, ok := observed[groupKey]; ok {
			var prev []ovnv1alpha1.HAChassis
			if err := o.Resource.GetValueInto("spec.forProvider.chassis", &prev); err == nil {
				members = prev
			}
		}
	}
	if len(members) == 0 {
		return g, nil
	}
	group := &ovnv1alpha1.HAChassisGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: ovnv1alpha1.SchemeGroupVersion.String(), Kind: "HAChassisGroup"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: c.labels()},
		Spec: ovnv1alpha1.HAChassisGroupSpec{ClusterManagedResourceSpec: managed, ForProvider: ovnv1alpha1.HAChassisGroupParameters{
			Name: name, Chassis: members,
			ExternalIDs: map[string]string{"c5c3.io_openstack-cluster": c.name, "c5c3.io_pool": poolName},
		}},
	}
	status, err := addManaged(groupKey, group, observed, desired)
	if err != nil {
		return g, err
	}
	g.Name, g.Status = name, status
	for _, m := range members {
		g.Chassis = append(g.Chassis, m.Name)
	}
	return g, nil
}

// gatewayMembers ranks a ChassisSet's chassis: gateway chassis first, then
// by name, with priorities counting down from OVN's highest.
func gatewayMembers(o resource.ObservedComposed) []ovnv1alpha1.HAChassis {
	if o.Resource == nil {
		return nil
	}
	var obs ovnv1alpha1.ChassisSetObservation
	if err := o.Resource.GetValueInto("status.atProvider", &obs); err != nil {
		return nil
	}
	chassis := slices.Clone(obs.Chassis)
	slices.SortFunc(chassis, func(a, b ovnv1alpha1.ObservedChassis) int {
		if a.Gateway != b.Gateway {
			if a.Gateway {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	out := make([]ovnv1alpha1.HAChassis, 0, min(len(chassis), ovnMaxMembers))
	for i, ch := range chassis[:min(len(chassis), ovnMaxMembers)] {
		out = append(out, ovnv1alpha1.HAChassis{Name: ch.Name, Priority: int32(ovnMaxPriority - i)}) //nolint:gosec // i < 64
	}
	return out
}

// gatewayWait says what a pool's gateway group waits on.
func gatewayWait(c *cloud, g v1alpha1.GatewayChassisGroup) string {
	if g.Name == "" {
		return fmt.Sprintf("no chassis of hypervisor pool %s is registered in the cloud's OVN Southbound yet (its nodes' ovn-controller, with the OVS agent announcing availability zone %s)", g.HypervisorCluster, g.HypervisorCluster)
	}
	return fmt.Sprintf("OVN HA chassis group %s of hypervisor pool %s is %s", g.Name, g.HypervisorCluster, g.Status)
}

// ovnDatabases reads the endpoints from the observed ConfigMap, checked as
// the OVN ProviderConfig's CRD would check them, so a wrong value is named
// here instead of failing the whole apply.
func ovnDatabases(observed map[resource.Name]resource.ObservedComposed) (nb, sb []string, err error) {
	if !function.ObservedReady(observed, resourceOVNDatabases) {
		return nil, nil, errNotPublished
	}
	o := observed[resourceOVNDatabases]
	data := map[string]string{}
	_ = o.Resource.GetValueInto("status.atProvider.manifest.data", &data)
	if nb, err = endpoints(data, ovnKeyNorthbound); err != nil {
		return nil, nil, err
	}
	if sb, err = endpoints(data, ovnKeySouthbound); err != nil {
		return nil, nil, err
	}
	return nb, sb, nil
}

func endpoints(data map[string]string, key string) ([]string, error) {
	eps := strings.FieldsFunc(data[key], func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
	if len(eps) == 0 {
		return nil, fmt.Errorf("data.%s is missing: it lists the database's ovsdb endpoints (tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH), separated by commas", key)
	}
	if len(eps) > ovnMaxEndpoints {
		return nil, fmt.Errorf("data.%s lists %d endpoints: at most %d (the members of one Raft cluster)", key, len(eps), ovnMaxEndpoints)
	}
	for _, e := range eps {
		if !ovnEndpoint.MatchString(e) {
			return nil, fmt.Errorf("data.%s: %q is not an ovsdb endpoint: use tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH", key, e)
		}
	}
	return eps, nil
}

// observedOVNEndpoints are the endpoints of the ProviderConfig composed
// before, if there is one.
func observedOVNEndpoints(observed map[resource.Name]resource.ObservedComposed) (nb, sb []string, ok bool) {
	o, exists := observed[resourceOVNProviderConfig]
	if !exists {
		return nil, nil, false
	}
	if o.Resource.GetValueInto("spec.northbound.endpoints", &nb) != nil || len(nb) == 0 {
		return nil, nil, false
	}
	if o.Resource.GetValueInto("spec.southbound.endpoints", &sb) != nil || len(sb) == 0 {
		return nil, nil, false
	}
	return nb, sb, true
}
