// Package pool reconciles Ceph pools: replication, compression, quotas,
// application and placement, with usage in status. A pool this resource
// did not create is refused, never adopted silently: ownership is a key in
// the pool's application metadata, written right after the create.
package pool

import (
	"context"
	"fmt"
	"strconv"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// OwnerKey is the application metadata key naming the resource that owns a
// pool (Ceph allows only [A-Za-z0-9_.-] in keys).
const OwnerKey = "cobaltcore.c5c3.io_resource"

// RetainedKey marks a pool kept with its data when its resource went: the
// identity (identityOf) of whom it was kept for. Only a resource of that
// identity takes it over again; another of the same name is refused, so
// that kept data never passes to whoever reuses a name.
const RetainedKey = "cobaltcore.c5c3.io_retained_for"

// identityOf is what a kept pool stays tied to: the UID of the composite
// that controls the resource (a cloud that drops a storage pool and takes it
// back composes a new resource, under the same composite), else the
// resource's own.
func identityOf(mg *v1alpha1.Pool) string {
	if ref := metav1.GetControllerOf(mg); ref != nil {
		return string(ref.UID)
	}
	return string(mg.GetUID())
}

// retainedFor is the identity a pool was kept for ("" none).
func retainedFor(p ceph.Pool) string {
	for _, md := range p.ApplicationMetadata {
		if r := md[RetainedKey]; r != "" {
			return r
		}
	}
	return ""
}

// Setup adds the Pool controller.
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.Ceph) error {
	log := mgr.GetLogger().WithName("ceph-pool")
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("Pool"), &v1alpha1.PoolList{},
		managed.WithTypedExternalConnector[*v1alpha1.Pool](providerconfig.Connector[*v1alpha1.Pool, *ceph.Client]{Client: pc.Client,
			External: func(c *ceph.Client) managed.TypedExternalClient[*v1alpha1.Pool] { return &external{ceph: c, log: log} }}))
}

type external struct {
	ceph *ceph.Client
	log  logr.Logger
}

// retained counts the pools kept, with their data, when their resource went.
var retained = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "cobaltcore_provider_ceph_pools_retained_total",
	Help: "Ceph pools kept with their data when their Pool resource was deleted (spec.forProvider.dataPolicy Retain).",
})

func init() { metrics.Registry.MustRegister(retained) }

// owner is the resource named in the pool's ownership key ("" none).
func owner(p ceph.Pool) string {
	for _, md := range p.ApplicationMetadata {
		if o := md[OwnerKey]; o != "" {
			return o
		}
	}
	return ""
}

// rule is the CRUSH rule the spec asks for ("" the default).
func rule(p v1alpha1.PoolParameters) string {
	switch {
	case p.Stretch != nil:
		return stretchRule(p).Name()
	case p.DeviceClass != "":
		return "replicated_" + p.DeviceClass
	}
	return p.CrushRule
}

// stretchRule is the rule of a stretched pool (spec.forProvider.stretch):
// its device class is checked on the OSDs, not taken by the rule.
func stretchRule(p v1alpha1.PoolParameters) ceph.StretchRule {
	r := ceph.StretchRule{Root: p.Stretch.Root, ZoneType: p.Stretch.ZoneType, Class: p.DeviceClass}
	if r.Root == "" {
		r.Root = "default"
	}
	if r.ZoneType == "" {
		r.ZoneType = "zone"
	}
	return r
}

func app(p v1alpha1.PoolParameters) string {
	if p.Application == "" {
		return "rbd"
	}
	return string(p.Application)
}

func compression(p v1alpha1.PoolParameters) string {
	if p.CompressionMode == "" {
		return "none"
	}
	return string(p.CompressionMode)
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.Pool) (managed.ExternalObservation, error) {
	p := mg.Spec.ForProvider
	pools, err := e.ceph.Pools(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	observed, ok := pools[p.Name]
	if !ok {
		return managed.ExternalObservation{}, nil
	}
	adopted := false
	if r := retainedFor(observed); r != "" && r != identityOf(mg) {
		// Kept with its data for another: Create refuses it with the reason.
		return managed.ExternalObservation{}, nil
	}
	switch o := owner(observed); {
	case meta.GetExternalName(mg) == p.Name && (o == "" || o == mg.GetName()):
		// Ours, or imported by setting the external name.
	case o == mg.GetName():
		// Our create's reply was lost before the external name was recorded.
		meta.SetExternalName(mg, p.Name)
		adopted = true
	case o == "" && pcontroller.MayAdopt(mg):
		meta.SetExternalName(mg, p.Name)
		adopted = true
	default:
		// Someone else's pool: Create refuses it with the reason.
		return managed.ExternalObservation{}, nil
	}
	// Where its data is, first: said even when what it holds cannot be
	// listed (placement groups that cannot map, as a stretched pool's in a
	// zone that is down).
	rules, err := e.ceph.CrushRules(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider.PoolID, mg.Status.AtProvider.CrushRule = observed.ID, ceph.RuleName(rules, observed.CrushRule)
	mg.Status.AtProvider.Size, mg.Status.AtProvider.MinSize = observed.Size, observed.MinSize
	mg.Status.AtProvider.StretchMode = ceph.StretchModeOf(pools, observed)
	if meta.WasDeleted(mg) && p.DataPolicy == v1alpha1.DataPolicyDelete {
		// Its data may go: what it holds decides nothing.
		return managed.ExternalObservation{ResourceExists: true}, nil
	}
	// Listed, not read from ceph df: what a pool holds decides whether it
	// may go (see retains), and its composer reads it in the status.
	c, listErr := e.ceph.Contents(ctx, p.Name)
	if meta.WasDeleted(mg) {
		// Deleting: a pool that holds data stays unless the resource says
		// the data may go; it is then no longer the resource's, which
		// goes (the reconciler deletes only what exists).
		if keep, err := e.retains(ctx, mg, c, listErr); err != nil || keep {
			return managed.ExternalObservation{ResourceExists: !keep}, err
		}
	}
	if listErr != nil {
		return managed.ExternalObservation{}, fmt.Errorf("cannot list what ceph pool %q holds: %w", p.Name, listErr)
	}
	usage, err := e.ceph.Usage(ctx)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	u := usage[p.Name]
	mg.Status.AtProvider.UsedBytes, mg.Status.AtProvider.AvailableBytes, mg.Status.AtProvider.Objects = u.Stored, u.MaxAvail, u.Objects
	mg.Status.AtProvider.DataObjects, mg.Status.AtProvider.Images = int64(c.Objects), int64(c.Images)
	mg.SetConditions(xpv2.Available())
	changes, err := e.changes(ctx, mg, observed)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: len(changes) == 0, ResourceLateInitialized: adopted}, nil
}

// Create makes the pool, enables its application and marks it as this
// resource's, in that order: a crash in between leaves an unmarked pool
// that crossplane's create-pending record lets this resource adopt.
func (e *external) Create(ctx context.Context, mg *v1alpha1.Pool) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	// Fresh: Observe's shared read may predate a pool someone else made
	// since, which `osd pool create` would then silently hand to us.
	pools, err := e.ceph.FreshPools(ctx)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	if observed, ok := pools[p.Name]; ok {
		if r := retainedFor(observed); r != "" && r != identityOf(mg) {
			return managed.ExternalCreation{}, terminal.Wrap(fmt.Errorf("ceph pool %q was kept with its data when the resource it belonged to went (%s %s); it is not handed to another: delete it in Ceph, or name another pool", p.Name, RetainedKey, r))
		}
		if o := owner(observed); o != "" && o != mg.GetName() {
			return managed.ExternalCreation{}, terminal.Wrap(fmt.Errorf("ceph pool %q already exists and belongs to resource %q", p.Name, o))
		}
		return managed.ExternalCreation{}, pcontroller.NameTaken(fmt.Sprintf("a Ceph pool named %q", p.Name))
	}
	r, err := e.ensureRule(ctx, p)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	// The name is the pool's ID, so it is recorded before the pool is asked
	// for: crossplane persists it even when Create fails. A monitor that
	// times out may still have made the pool (a busy cluster does); Observe
	// then finds it under this resource's external name, unmarked, takes it
	// as its own and Update marks it. Recorded only after, such a pool would
	// be "someone else's" for good.
	meta.SetExternalName(mg, p.Name)
	if err := e.ceph.CreatePool(ctx, p.Name, r, p.Size); err != nil {
		return managed.ExternalCreation{}, fmt.Errorf("cannot create ceph pool %q: %w", p.Name, err)
	}
	if m := ptr.Deref(p.MinSize, 0); m > 0 {
		if err := e.ceph.SetPool(ctx, p.Name, "min_size", strconv.Itoa(int(m))); err != nil {
			return managed.ExternalCreation{}, fmt.Errorf("cannot set min_size of ceph pool %q: %w", p.Name, err)
		}
	}
	if err := e.ceph.EnableApplication(ctx, p.Name, app(p)); err != nil {
		return managed.ExternalCreation{}, err
	}
	return managed.ExternalCreation{}, e.ceph.SetApplicationKey(ctx, p.Name, app(p), OwnerKey, mg.GetName())
}

// ensureRule makes the stretch or device class rule the spec asks for and
// checks a named rule exists.
func (e *external) ensureRule(ctx context.Context, p v1alpha1.PoolParameters) (string, error) {
	r := rule(p)
	switch {
	case r == "":
		return "", nil
	case p.Stretch != nil:
		return r, e.ceph.CreateStretchRule(ctx, stretchRule(p))
	case p.DeviceClass != "":
		return r, e.ceph.CreateDeviceClassRule(ctx, r, p.DeviceClass)
	}
	rules, err := e.ceph.CrushRules(ctx)
	if err != nil {
		return "", err
	}
	if _, ok := rules[r]; !ok {
		return "", terminal.Wrap(fmt.Errorf("spec.forProvider.crushRule: CRUSH rule %q does not exist", r))
	}
	return r, nil
}

// A change is one command that moves the pool towards the spec.
type change struct {
	what  string
	apply func(context.Context) error
}

// changes lists what differs between the spec and the pool.
func (e *external) changes(ctx context.Context, mg *v1alpha1.Pool, observed ceph.Pool) ([]change, error) {
	p := mg.Spec.ForProvider
	name := p.Name
	var out []change
	if p.Size > 0 && observed.Size != p.Size {
		out = append(out, change{"size", func(ctx context.Context) error {
			return e.ceph.SetPool(ctx, name, "size", strconv.Itoa(int(p.Size)))
		}})
	}
	if m := ptr.Deref(p.MinSize, 0); m > 0 && observed.MinSize != m {
		// After size: a min_size above the current size is refused.
		out = append(out, change{"min_size", func(ctx context.Context) error {
			return e.ceph.SetPool(ctx, name, "min_size", strconv.Itoa(int(m)))
		}})
	}
	if cm := compression(p); observed.Options.CompressionMode != cm && !(cm == "none" && observed.Options.CompressionMode == "") {
		out = append(out, change{"compression_mode", func(ctx context.Context) error {
			return e.ceph.SetPool(ctx, name, "compression_mode", cm)
		}})
	}
	if q := ptr.Deref(p.QuotaMaxBytes, 0); observed.QuotaMaxBytes != q {
		out = append(out, change{"quota max_bytes", func(ctx context.Context) error { return e.ceph.SetQuota(ctx, name, "max_bytes", q) }})
	}
	if q := ptr.Deref(p.QuotaMaxObjects, 0); observed.QuotaMaxObjects != q {
		out = append(out, change{"quota max_objects", func(ctx context.Context) error { return e.ceph.SetQuota(ctx, name, "max_objects", q) }})
	}
	a := app(p)
	if md, ok := observed.ApplicationMetadata[a]; !ok || md[OwnerKey] != mg.GetName() {
		out = append(out, change{"application", func(ctx context.Context) error {
			if err := e.ceph.EnableApplication(ctx, name, a); err != nil {
				return err
			}
			return e.ceph.SetApplicationKey(ctx, name, a, OwnerKey, mg.GetName())
		}})
	}
	if r := rule(p); r != "" {
		rules, err := e.ceph.CrushRules(ctx)
		if err != nil {
			return nil, err
		}
		if id, ok := rules[r]; !ok || id != observed.CrushRule {
			out = append(out, change{"crush_rule", func(ctx context.Context) error {
				if _, err := e.ensureRule(ctx, p); err != nil {
					return err
				}
				return e.ceph.SetPool(ctx, name, "crush_rule", r)
			}})
		}
	}
	return out, nil
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.Pool) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	pools, err := e.ceph.Pools(ctx)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	observed, ok := pools[p.Name]
	if !ok {
		return managed.ExternalUpdate{}, ceph.PoolMissing(p.Name)
	}
	changes, err := e.changes(ctx, mg, observed)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	for _, c := range changes {
		if err := c.apply(ctx); err != nil {
			return managed.ExternalUpdate{}, fmt.Errorf("cannot set %s of ceph pool %q: %w", c.what, p.Name, err)
		}
	}
	return managed.ExternalUpdate{}, nil
}

// Delete deletes the pool and its data, only if it is this resource's.
func (e *external) Delete(ctx context.Context, mg *v1alpha1.Pool) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	p := mg.Spec.ForProvider
	pools, err := e.ceph.Pools(ctx)
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	observed, ok := pools[p.Name]
	if !ok {
		return managed.ExternalDelete{}, nil
	}
	if o := owner(observed); o != "" && o != mg.GetName() {
		return managed.ExternalDelete{}, terminal.Wrap(fmt.Errorf("ceph pool %q belongs to resource %q; not deleting it", p.Name, o))
	}
	// Observe released a pool with data already; this is the last look
	// before the data would go (none is needed when it may go).
	if p.DataPolicy != v1alpha1.DataPolicyDelete {
		c, listErr := e.ceph.Contents(ctx, p.Name)
		if keep, err := e.retains(ctx, mg, c, listErr); err != nil || keep {
			return managed.ExternalDelete{}, err
		}
	}
	if err := e.ceph.DeletePool(ctx, p.Name); err != nil {
		return managed.ExternalDelete{}, fmt.Errorf("cannot delete ceph pool %q: %w", p.Name, err)
	}
	return managed.ExternalDelete{}, nil
}

func (e *external) Disconnect(context.Context) error { return nil }

// retains reports whether deleting the resource must keep its pool, given
// what the pool holds as just listed (c, or the listing's error): it holds
// data and spec.forProvider.dataPolicy is not Delete. A pool whose contents
// cannot be read is kept too (with the error): the data is never deleted
// on a guess.
func (e *external) retains(ctx context.Context, mg *v1alpha1.Pool, c ceph.Contents, err error) (bool, error) {
	p := mg.Spec.ForProvider
	if p.DataPolicy == v1alpha1.DataPolicyDelete {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("cannot tell whether ceph pool %q holds data, so it is not deleted: %w", p.Name, err)
	}
	if c.Empty() {
		return false, nil
	}
	// Tied to whom it is kept for before the resource lets go of it.
	if err := e.ceph.SetApplicationKey(ctx, p.Name, app(p), RetainedKey, identityOf(mg)); err != nil {
		return true, fmt.Errorf("cannot mark ceph pool %q as kept, so it is not released: %w", p.Name, err)
	}
	retained.Inc()
	e.log.Info("Keeping a ceph pool that holds data: its resource goes, the pool stays (spec.forProvider.dataPolicy is not Delete)",
		"pool", p.Name, "resource", mg.GetName(), "contents", c.String())
	return true, nil
}
