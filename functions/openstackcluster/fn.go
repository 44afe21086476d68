package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	"github.com/crossplane/function-sdk-go/errors"
	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	cpv1alpha1 "github.com/c5c3/consumer-plane/apis/controlplane/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	neutronv1alpha1 "github.com/c5c3/consumer-plane/apis/neutron/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/cephhealth"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/remote"
)

func init() {
	for _, add := range []func(*runtime.Scheme) error{
		cephv1alpha1.AddToScheme, cinderv1alpha1.AddToScheme, protectionv1beta1.AddToScheme, cpv1alpha1.AddToScheme, keystonev1alpha1.AddToScheme,
		neutronv1alpha1.AddToScheme, novav1alpha1.AddToScheme, openstackv1alpha1.AddToScheme,
	} {
		if err := add(composed.Scheme); err != nil {
			panic(err)
		}
	}
}

// Composed resources in the control-plane cluster.
const (
	resourceNamespace    resource.Name = "namespace"
	resourceControlPlane resource.Name = "control-plane"
)

// Conditions of the composite, one per stage, each saying what it waits on.
const (
	conditionPoolsReady        = "PoolsReady"
	conditionStorageReady      = "StorageReady"
	conditionControlPlaneReady = "ControlPlaneReady"
	conditionCloudReady        = "CloudReady"
	conditionNetworkReady      = "NetworkReady"
	conditionSupported         = "Supported"
	conditionServicesServed    = "ServicesServed"
	conditionComputeAvailable  = "ComputeAvailable"
)

// Function composes an XOpenStackCluster.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	log logging.Logger
	// now is the clock, for tests.
	now func() time.Time
}

// RunFunction resolves the cloud's pools and refuses what policy forbids;
// once its pools are ready it composes the ControlPlane and the tenant's
// Ceph pools and client; once the ControlPlane is ready and its admin
// credential exists, the objects in the cloud's own APIs. Each stage is
// added only when the one before it is observed ready.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)

	xr := &v1alpha1.XOpenStackCluster{}
	if err := function.ObservedComposite(req, xr); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	in := &input.CloudSettings{}
	if err := function.Input(req, in); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	in.Default()
	c, err := newCloud(xr, in)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		response.Fatal(rsp, errors.Wrap(err, "cannot get observed composed resources"))
		return rsp, nil
	}
	c.placed(observed)
	leaving := leavingOf(xr, observed)
	reqs := require(rsp, c, leaving)
	requireClaim(rsp, c)
	land, ok := landscapeOf(req, c, reqs, leaving)
	if !ok || !function.Supplied(req, requiredClaim) && c.claim != "" {
		// Crossplane fetches the requirements and calls again.
		return rsp, nil
	}
	c.credentials = credentialsOf(req, c)
	for _, s := range land.skipped {
		response.Warning(rsp, errors.New("ignored a composite the function cannot read: "+s)).TargetComposite()
	}
	c.holdLeaving(leaving, land)
	now := time.Now
	if f.now != nil {
		now = f.now
	}
	plan, err := resolve(c, land, observed, now())
	if err != nil {
		refuse(req, rsp, c, plan, observed, err)
		return rsp, nil
	}
	desired := map[resource.Name]*resource.DesiredComposed{}
	p, err := compose(c, plan, observed, desired)
	if err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if err := function.SetDesired(req, rsp, p.status(c, plan), desired); err != nil {
		response.Fatal(rsp, err)
		return rsp, nil
	}
	if p.phase != v1alpha1.OpenStackClusterPhaseReady {
		// The cloud is composed in stages: once every resource of a stage is
		// ready, and before the next stage's exist, Crossplane would take
		// the composite for Ready — and so would the tenant reading the
		// claim. Ready is the cloud's phase, not its resources' so far.
		rsp.Desired.Composite.Ready = fnv1.Ready_READY_FALSE
	}
	p.setConditions(rsp, c, plan)
	f.log.Debug("composed cloud", "xr", c.name, "tenant", c.tenant, "phase", p.phase)
	return rsp, nil
}

// reasonRefused marks the condition and event that say why policy refuses
// a cloud.
const reasonRefused = "Refused"

// refuse tells the tenant, on their own claim, why policy refuses the cloud
// (the message names the field and the pool): the PoolsReady condition and
// a Warning event, both targeted at the composite and its claim — tenants
// read claims in their namespace, not the cluster-scoped composite. Nothing
// is composed or changed: a cloud that has composed nothing yet gets phase
// Refused and stays not ready; one that already runs keeps every resource as
// it is, through a Fatal result after them (Crossplane then applies nothing
// but the conditions and events before it). A cloud refused because a pool
// has no room (plan is not nil) keeps the usages of its pools: the records
// of the pools that refused it hold its request's place in their queues
// until room is freed, and the others record that it asks for nothing, so
// that what they gave it goes back (see heldBack).
func refuse(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, c *cloud, plan *plan, observed map[resource.Name]resource.ObservedComposed, err error) {
	running := composedStages(observed) > 0
	if plan != nil && !running {
		var held []string
		if plan, held = plan.heldBack(); len(held) > 0 {
			err = fmt.Errorf("%w; until every pool has room for it, the cloud holds nothing of %s", err, strings.Join(held, ", "))
		}
	}
	response.Warning(rsp, err).WithReason(reasonRefused).TargetCompositeAndClaim()
	response.ConditionFalse(rsp, conditionPoolsReady, reasonRefused).WithMessage(err.Error()).TargetCompositeAndClaim()
	if running {
		response.Fatal(rsp, err)
		return
	}
	desired := map[resource.Name]*resource.DesiredComposed{}
	if plan != nil {
		if err := composeShareRecords(c, plan, desired); err != nil {
			response.Fatal(rsp, err)
			return
		}
	}
	if err := function.SetDesired(req, rsp, map[string]any{"phase": string(v1alpha1.OpenStackClusterPhaseRefused)}, desired); err != nil {
		response.Fatal(rsp, err)
		return
	}
	rsp.Desired.Composite.Ready = fnv1.Ready_READY_FALSE
}

// progress is how far the cloud is.
type progress struct {
	phase             v1alpha1.OpenStackClusterPhase
	storage           []storageState
	namespaceReady    bool
	controlPlaneReady bool
	controlPlaneWait  string
	adminReady        bool
	cloud             *cloudState
	// network is nil for clouds without OVN objects (see needsNetwork)
	// and until the ControlPlane is ready.
	network *networkState
	// What the ControlPlane cannot carry (see unsupported).
	unsupportedServices, unsupportedSettings []string
	// access is the control plane's access to the cloud's pools.
	access accessState
}

// compose adds what the observed state allows, stage by stage. A stage is
// added when the one before it is ready, and kept once it exists: what a
// function stops desiring, Crossplane deletes, so a pool that is briefly
// not ready must never take a serving cloud's objects with it.
func compose(c *cloud, plan *plan, observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed) (*progress, error) {
	p := &progress{}
	p.unsupportedServices, p.unsupportedSettings = unsupported(&c.xr.Spec)
	has := func(n resource.Name) bool { _, ok := observed[n]; return ok }
	// What the cloud consumes is protected from the moment it is admitted.
	if err := composeUsages(c, plan, desired); err != nil {
		return nil, err
	}
	if !plan.admitted() && composedStages(observed) == 0 {
		p.phase = plan.phase(c)
		return p, nil
	}

	// The cloud's namespace, then its ControlPlane in it.
	desired[resourceNamespace] = &resource.DesiredComposed{Resource: remote.Created(c.name+"-namespace", c.controlPlaneAccess(), map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": c.namespace(), "labels": anyMap(c.labels())},
	})}
	p.namespaceReady = function.ObservedReady(observed, resourceNamespace)
	p.controlPlaneWait = fmt.Sprintf("namespace %s is being created in control-plane cluster %s", c.namespace(), c.controlPlaneCluster)
	if p.namespaceReady {
		desired[resourceNamespace].Ready = resource.ReadyTrue
	}
	if p.namespaceReady || has(resourceControlPlane) {
		cp, err := function.Composed(controlPlane(c))
		if err != nil {
			return nil, err
		}
		desired[resourceControlPlane] = &resource.DesiredComposed{Resource: remote.Object(c.name+"-control-plane", c.controlPlaneAccess(), cp.Object)}
		p.controlPlaneReady = function.ObservedReady(observed, resourceControlPlane)
		p.controlPlaneWait = controlPlaneWait(c, observed)
		if p.controlPlaneReady {
			desired[resourceControlPlane].Ready = resource.ReadyTrue
		}
	}
	p.unsupportedSettings = append(p.unsupportedSettings, droppedPoolReferences(observed)...)

	// Each pool's kubeconfig for the control plane, limited to the cloud's
	// namespace and nodes there.
	access, err := composePoolAccess(c, plan, p.namespaceReady, observed, desired)
	if err != nil {
		return nil, err
	}
	p.access = access

	// The tenant's storage in every storage pool; its key Secrets need the
	// namespace.
	for _, s := range plan.storage {
		quotas, ok := s.quotas(c)
		if !ok {
			// The pool has given the cloud no share yet (the plan waits).
			continue
		}
		if s.provisioning && !has(cephClientResource(s.name)) {
			// Its Ceph objects would be made through the pool's
			// ProviderConfig, which the pool makes once its Ceph runs.
			p.storage = append(p.storage, storageState{waiting: []string{fmt.Sprintf("the tenant's Ceph pools in %s wait for the storage pool to be Ready", s.name)}})
			continue
		}
		st, err := composeStorage(c, s.name, s.pool, quotas, s.replicas(c.xr), p.namespaceReady, observed, desired)
		if err != nil {
			return nil, err
		}
		p.storage = append(p.storage, st)
	}

	// The cloud's own APIs, once it serves and its admin credential exists.
	if p.controlPlaneReady || has(resourceAdminCredential) {
		p.adminReady = composeAdminCredential(c, observed, desired)
	}
	if p.adminReady || has(resourceProviderConfig) {
		cs, err := composeCloud(c, plan.allocated(), plan.hosts(), observed, desired)
		if err != nil {
			return nil, err
		}
		p.cloud = &cs
	}
	// The cloud's OVN, once its control plane runs it.
	if needsNetwork(c) && (p.controlPlaneReady || has(resourceOVNDatabases)) {
		ns, err := composeNetwork(c, observed, desired)
		if err != nil {
			return nil, err
		}
		p.network = &ns
	}
	if err := composeDeletionOrder(c, observed, desired); err != nil {
		return nil, err
	}
	if !plan.ready() {
		p.phase = plan.phase(c)
	} else {
		p.phase = p.phaseOf(c)
	}
	return p, nil
}

// composedStages counts the observed resources of the cloud's stages: its
// usages (see composeUsages) are not one.
func composedStages(observed map[resource.Name]resource.ObservedComposed) int {
	n := 0
	for name := range observed {
		if !strings.HasPrefix(string(name), usagePrefix) {
			n++
		}
	}
	return n
}

// controlPlaneWait says what the ControlPlane waits on, from the
// condition chain the c5c3-operator reports (status.atProvider.manifest).
func controlPlaneWait(c *cloud, observed map[resource.Name]resource.ObservedComposed) string {
	where := fmt.Sprintf("ControlPlane %s/%s in control-plane cluster %s", c.namespace(), c.name, c.controlPlaneCluster)
	o, ok := observed[resourceControlPlane]
	if !ok {
		return where + " is being created"
	}
	conds := []metav1.Condition{}
	if err := o.Resource.GetValueInto("status.atProvider.manifest.status.conditions", &conds); err == nil {
		for _, cd := range conds {
			if cd.Status != metav1.ConditionTrue && cd.Type != cpv1alpha1.ConditionReady {
				return fmt.Sprintf("%s waits on %s: %s", where, cd.Type, cd.Message)
			}
		}
		if i := slices.IndexFunc(conds, func(cd metav1.Condition) bool { return cd.Type == cpv1alpha1.ConditionReady }); i >= 0 {
			if conds[i].Status == metav1.ConditionTrue {
				return where + " is ready"
			}
			return fmt.Sprintf("%s is not ready (%s): %s", where, conds[i].Reason, conds[i].Message)
		}
	}
	return where + " has not reported its state yet"
}

// serving reports whether the cloud has been Ready: problems after that
// make it Degraded rather than Pending or Failed.
func serving(c *cloud) bool {
	ph := c.xr.Status.Phase
	return ph == v1alpha1.OpenStackClusterPhaseReady || ph == v1alpha1.OpenStackClusterPhaseDegraded
}

func (p *progress) phaseOf(c *cloud) v1alpha1.OpenStackClusterPhase {
	// Ready means serving: every service the claim enabled answers in the
	// cloud's catalog (or its objects exist from when it did).
	all := p.controlPlaneReady && p.access.ready && p.adminReady && p.cloud != nil && p.cloud.ready && len(p.cloud.unserved) == 0
	for _, s := range p.storage {
		all = all && s.ready
	}
	if needsNetwork(c) {
		all = all && p.network != nil && p.network.ready
	}
	switch {
	case all:
		return v1alpha1.OpenStackClusterPhaseReady
	case serving(c):
		return v1alpha1.OpenStackClusterPhaseDegraded
	default:
		return v1alpha1.OpenStackClusterPhaseProvisioning
	}
}

// status is the composite's status.
func (p *progress) status(c *cloud, plan *plan) map[string]any {
	s := map[string]any{"phase": string(p.phase), "consumedPools": plan.consumed()}
	if len(p.storage) > 0 {
		ceph := make([]v1alpha1.CephResources, 0, len(p.storage))
		for _, st := range p.storage {
			ceph = append(ceph, st.status)
		}
		s["cephResources"] = ceph
	}
	// Gateways come only after the endpoints are known.
	if p.network != nil && len(p.network.status.Northbound) > 0 {
		s["network"] = p.network.status
	}
	if p.controlPlaneReady {
		ep := &v1alpha1.Endpoints{Keystone: c.endpoint("keystone")}
		if c.xr.Spec.Services.Horizon {
			ep.Horizon = c.endpoint("horizon")
		}
		if *ep != (v1alpha1.Endpoints{}) {
			s["endpoints"] = ep
		}
	}
	if len(p.unsupportedServices) > 0 {
		s["unsupportedServices"] = p.unsupportedServices
	}
	if p.cloud != nil && len(p.cloud.unserved) > 0 {
		s["unservedServices"] = p.cloud.unserved
	}
	if len(p.unsupportedSettings) > 0 {
		s["unsupportedSettings"] = p.unsupportedSettings
	}
	return s
}

// setDataAvailable says on the claim whether the storage pools holding the
// cloud's data serve its reads and writes, from what each pool's Ceph
// reports (#54 §2): a stretched pool that lost a zone and left its
// placement groups inactive blocks the tenant's I/O while every pool is
// Ready. Pools whose agents have not reported yet are left out; a cloud
// with none says nothing.
func setDataAvailable(rsp *fnv1.RunFunctionResponse, plan *plan) {
	var down, degraded, unknown []string
	known := false
	for _, s := range plan.storage {
		if s.pool == nil || s.pool.Status.Health == "" {
			continue
		}
		known = true
		if s.pool.Status.Unreachable != "" {
			unknown = append(unknown, fmt.Sprintf("storage pool %s: %s", s.name, s.pool.Status.Unreachable))
			continue
		}
		switch a := cephhealth.Of(s.pool.Status.HealthChecks); {
		case !a.OK:
			down = append(down, cephhealth.InPool(s.name, a))
		case a.Reason == cephhealth.ReasonDegraded:
			degraded = append(degraded, cephhealth.InPool(s.name, a))
		}
	}
	switch {
	case !known:
	case len(down) > 0:
		response.ConditionFalse(rsp, cephhealth.ConditionDataAvailable, "Unavailable").
			WithMessage(strings.Join(slices.Concat(down, unknown, degraded), "; ")).TargetCompositeAndClaim()
	case len(unknown) > 0:
		response.ConditionUnknown(rsp, cephhealth.ConditionDataAvailable, "Unreachable").
			WithMessage("whether these storage pools serve the cloud's data is unknown while they cannot be read: " + strings.Join(append(unknown, degraded...), "; ")).TargetCompositeAndClaim()
	case len(degraded) > 0:
		response.ConditionTrue(rsp, cephhealth.ConditionDataAvailable, cephhealth.ReasonDegraded).
			WithMessage(strings.Join(degraded, "; ")).TargetCompositeAndClaim()
	default:
		response.ConditionTrue(rsp, cephhealth.ConditionDataAvailable, cephhealth.ReasonAvailable).
			WithMessage("every storage pool of the cloud serves its reads and writes").TargetCompositeAndClaim()
	}
}

// setComputeAvailable says whether every node the cloud holds in its
// hypervisor pools is in service, from the pools' shares: a node the
// pool's agents report out of service (lost, disconnected, in maintenance)
// with the cloud's instances on it is named, with what the pool does about
// it. Like DataAvailable it does not gate Ready: the cloud's other nodes
// serve, and new instances go there. Nothing is said before any pool
// names the cloud's nodes.
func setComputeAvailable(rsp *fnv1.RunFunctionResponse, plan *plan) {
	var lost, unknown, serving []string
	for _, h := range plan.hypervisor {
		if h.pool == nil || h.hosts == nil {
			continue
		}
		if h.pool.Status.Unreachable != "" {
			unknown = append(unknown, fmt.Sprintf("hypervisor pool %s: %s", h.name, h.pool.Status.Unreachable))
		}
		if len(h.outOfService) > 0 {
			lost = append(lost, fmt.Sprintf("hypervisor pool %s: node(s) %s of this cloud are out of service with its instances on them (the pool's AgentsReporting says why); they stay the cloud's until those instances are gone, and a free node of the pool takes their place in its share",
				h.name, strings.Join(h.outOfService, ", ")))
		}
		serving = append(serving, fmt.Sprintf("%s %d", h.name, len(h.hosts)-len(h.outOfService)))
	}
	switch {
	case len(serving) == 0:
	case len(lost) > 0:
		response.ConditionFalse(rsp, conditionComputeAvailable, "OutOfService").
			WithMessage(strings.Join(append(lost, unknown...), "; ")).TargetCompositeAndClaim()
	case len(unknown) > 0:
		response.ConditionUnknown(rsp, conditionComputeAvailable, "Unreachable").
			WithMessage("whether the cloud's nodes in these hypervisor pools are in service is unknown while they cannot be read (each keeps the nodes it had): " + strings.Join(unknown, "; ")).TargetCompositeAndClaim()
	default:
		response.ConditionTrue(rsp, conditionComputeAvailable, "Available").
			WithMessage("every node the cloud holds is in service: " + strings.Join(serving, ", ")).TargetCompositeAndClaim()
	}
}

// setConditions says, per stage, what is ready and what it waits on.
func (p *progress) setConditions(rsp *fnv1.RunFunctionResponse, c *cloud, plan *plan) {
	cond := func(typ string, ok bool, reason, msg string) {
		if ok {
			response.ConditionTrue(rsp, typ, "Available").WithMessage(msg).TargetCompositeAndClaim()
			return
		}
		response.ConditionFalse(rsp, typ, reason).WithMessage(msg).TargetCompositeAndClaim()
	}
	cond(conditionPoolsReady, plan.ready(), plan.reason(), plan.message())

	storageOK, storageMsg := false, "waiting for the pools"
	if len(p.storage) > 0 {
		storageOK = true
		var waiting, kept []string
		for _, s := range p.storage {
			storageOK = storageOK && s.ready
			waiting = append(waiting, s.waiting...)
			kept = append(kept, s.kept...)
		}
		storageMsg = fmt.Sprintf("the tenant's Ceph pools and CephX client are ready in %d storage pool(s)", len(p.storage))
		if !storageOK {
			storageMsg = strings.Join(waiting, "; ")
		}
		// What the claim switched off and the cloud keeps is said either way.
		storageMsg = strings.Join(append([]string{storageMsg}, kept...), "; ")
	}
	cond(conditionStorageReady, storageOK, "Waiting", storageMsg)
	setDataAvailable(rsp, plan)
	setComputeAvailable(rsp, plan)

	cpMsg := "waiting for the pools"
	if p.controlPlaneWait != "" {
		cpMsg = p.controlPlaneWait
	}
	switch {
	case !p.controlPlaneReady:
	case !p.access.ready:
		cpMsg += "; " + strings.Join(p.access.waiting, "; ")
	case len(p.access.secrets) > 0:
		cpMsg += fmt.Sprintf("; its pools' kubeconfigs are in Secrets %s of namespace %s", strings.Join(p.access.secrets, ", "), c.namespace())
	}
	cond(conditionControlPlaneReady, p.controlPlaneReady && p.access.ready, "Waiting", cpMsg)

	cloudOK, cloudMsg := false, "waiting for the ControlPlane"
	switch {
	case !p.controlPlaneReady && p.cloud == nil:
	case !p.adminReady && p.cloud == nil:
		cloudMsg = fmt.Sprintf("waiting for the admin credential Secret %s/%s in control-plane cluster %s", c.namespace(), adminCloudSecret, c.controlPlaneCluster)
	case p.cloud.ready && p.adminReady:
		cloudOK, cloudMsg = true, fmt.Sprintf("the project, quotas, aggregates and volume types exist in the cloud; log in with the clouds.yaml (cloud %s) in Secret %s/%s",
			c.cloudName(), c.credentials.Namespace, c.credentials.Name)
	default:
		cloudMsg = strings.Join(p.cloud.waiting, "; ")
	}
	cond(conditionCloudReady, cloudOK, "Waiting", cloudMsg)

	if needsNetwork(c) {
		netOK, netMsg := false, "waiting for the ControlPlane"
		if n := p.network; n != nil {
			netOK = n.ready
			netMsg = fmt.Sprintf("the cloud's OVN has an HA chassis group of gateway chassis in each of its %d hypervisor pool(s)", len(n.status.Gateways))
			if !netOK {
				netMsg = strings.Join(n.waiting, "; ")
			}
		}
		cond(conditionNetworkReady, netOK, "Waiting", netMsg)
	}

	if p.cloud != nil {
		servedOK, servedMsg := false, fmt.Sprintf("waiting for the provider to read the cloud's service catalog (ProviderConfig %s)", c.name)
		switch {
		case !p.cloud.catalogRead:
		case len(p.cloud.unserved) == 0:
			servedOK, servedMsg = true, "the cloud's catalog serves every enabled service the cloud composes objects in"
		default:
			var what []string
			for _, s := range p.cloud.unserved {
				why := "not up yet"
				if slices.Contains(p.unsupportedServices, s) {
					why = "the c5c3 ControlPlane cannot deploy it (status.unsupportedServices)"
				}
				what = append(what, fmt.Sprintf("%s (%s: %s)", s, strings.Join(catalogTypes[s], " or "), why))
			}
			servedMsg = fmt.Sprintf("the cloud's service catalog has no endpoint for %s: the cloud is not Ready until it serves every service the claim enables; their objects (aggregates, volume types, quotas) are composed once it does. A cloud meant to run without them disables them in spec.services",
				strings.Join(what, ", "))
		}
		reason := "Waiting"
		if p.cloud.catalogRead {
			reason = "NotInCatalog"
		}
		cond(conditionServicesServed, servedOK, reason, servedMsg)
	}

	services, settings := p.unsupportedServices, p.unsupportedSettings
	if len(services)+len(settings) == 0 {
		cond(conditionSupported, true, "", "the ControlPlane carries every enabled service and setting")
		return
	}
	var what []string
	if len(services) > 0 {
		what = append(what, "services "+strings.Join(services, ", "))
	}
	if len(settings) > 0 {
		what = append(what, "settings "+strings.Join(settings, ", "))
	}
	cond(conditionSupported, false, "NotInControlPlane", "the c5c3 ControlPlane cannot carry these yet, so they are not applied: "+strings.Join(what, "; "))
}
