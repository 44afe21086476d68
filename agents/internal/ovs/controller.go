package ovs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	ovsv1alpha1 "github.com/c5c3/consumer-plane/agents/apis/ovs/v1alpha1"
)

// Conditions of an OVSNode.
const (
	ConditionReady        = "Ready"
	ConditionZonesApplied = "AvailabilityZonesApplied"
)

// DefaultZoneLabels is the label a hypervisor pool's nodes carry with the
// pool's name, which is the availability zone the pool's tenants see in Nova.
const DefaultZoneLabels = "c5c3.io/pool"

// Reconciler keeps the node's OVSNode and ovn-cms-options current. It
// reconciles on changes of the Node (its labels), of the OVSNode, and of any
// monitored row in the Open_vSwitch database.
type Reconciler struct {
	Client client.Client
	Node   string
	DB     *DB
	// ZoneLabels are the node labels whose values, in order, are the node's
	// availability zones. A node with none of them keeps whatever zones
	// ovn-cms-options has.
	ZoneLabels []string
	Metrics    *Metrics

	changes chan event.GenericEvent
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Metrics == nil {
		r.Metrics = NewMetrics(nil)
	}
	r.changes = make(chan event.GenericEvent, 1)
	r.DB.OnChange(func() {
		select {
		case r.changes <- event.GenericEvent{Object: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: r.Node}}}:
		default: // one queued sync covers every change before it
		}
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("ovs-agent").
		For(&corev1.Node{}).
		Owns(&ovsv1alpha1.OVSNode{}).
		WatchesRawSource(source.Channel(r.changes, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// Reconcile syncs the node.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != r.Node {
		return ctrl.Result{}, nil
	}
	res, err := r.sync(ctx)
	result := "ok"
	if err != nil {
		result = "error"
	}
	r.Metrics.Syncs.WithLabelValues(result).Inc()
	return res, err
}

func (r *Reconciler) sync(ctx context.Context) (ctrl.Result, error) {
	node := &corev1.Node{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: r.Node}, node); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	obj := &ovsv1alpha1.OVSNode{ObjectMeta: metav1.ObjectMeta{Name: r.Node}}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); apierrors.IsNotFound(err) {
		// Owned by the Node: a node that goes takes its OVSNode with it.
		if err := controllerutil.SetOwnerReference(node, obj, r.Client.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.Client.Create(ctx, obj); err != nil {
			return ctrl.Result{}, fmt.Errorf("cannot create OVSNode %s: %w", r.Node, err)
		}
	} else if err != nil {
		return ctrl.Result{}, err
	}
	orig := obj.DeepCopy()
	gen := obj.Generation

	if !r.DB.Connected() {
		r.Metrics.Connected.Set(0)
		meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse,
			Reason: "OVSDBUnreachable", Message: "the Open_vSwitch database is not reachable; libovsdb reconnects", ObservedGeneration: gen})
		return ctrl.Result{RequeueAfter: 5 * time.Second}, r.patch(ctx, orig, obj)
	}
	r.Metrics.Connected.Set(1)

	zones := zonesOf(node.Labels, r.ZoneLabels)
	zonesCond := metav1.Condition{Type: ConditionZonesApplied, Status: metav1.ConditionTrue, Reason: "Applied",
		Message: "ovn-cms-options availability-zones=" + strings.Join(zones, ":"), ObservedGeneration: gen}
	if len(zones) == 0 {
		zonesCond.Status, zonesCond.Reason = metav1.ConditionFalse, "NoZoneLabel"
		zonesCond.Message = fmt.Sprintf("the node has none of the zone labels %s; ovn-cms-options is left as it is", strings.Join(r.ZoneLabels, ", "))
	} else if wrote, err := r.DB.SetZones(ctx, zones); err != nil {
		zonesCond.Status, zonesCond.Reason, zonesCond.Message = metav1.ConditionFalse, "WriteFailed", err.Error()
	} else if wrote {
		r.Metrics.ZoneWrites.Inc()
	}

	st, err := r.DB.Read(ctx)
	if err != nil {
		meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse,
			Reason: "ReadFailed", Message: err.Error(), ObservedGeneration: gen})
		return ctrl.Result{}, errors.Join(err, r.patch(ctx, orig, obj))
	}
	st.Conditions = obj.Status.Conditions
	obj.Status = st
	meta.SetStatusCondition(&obj.Status.Conditions, zonesCond)
	meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue,
		Reason: "Synced", Message: fmt.Sprintf("%d bridges read from the Open_vSwitch database", st.BridgeCount), ObservedGeneration: gen})
	r.Metrics.observe(st)
	return ctrl.Result{}, r.patch(ctx, orig, obj)
}

func (r *Reconciler) patch(ctx context.Context, orig, obj *ovsv1alpha1.OVSNode) error {
	if equality.Semantic.DeepEqual(orig.Status, obj.Status) {
		return nil
	}
	if err := r.Client.Status().Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
		return fmt.Errorf("cannot write the status of OVSNode %s: %w", r.Node, err)
	}
	r.Metrics.Publications.Inc()
	return nil
}

// zonesOf returns the values of the zone labels the node has, in order.
func zonesOf(labels map[string]string, keys []string) []string {
	var zones []string
	for _, k := range keys {
		if v := labels[k]; v != "" {
			zones = append(zones, v)
		}
	}
	return zones
}

// Metrics are the OVS agent's Prometheus metrics.
type Metrics struct {
	Syncs        *prometheus.CounterVec
	Publications prometheus.Counter
	ZoneWrites   prometheus.Counter
	Connected    prometheus.Gauge
	Bridges      prometheus.Gauge
	Ports        prometheus.Gauge
	LinksDown    prometheus.Gauge
}

// NewMetrics creates the metrics and registers them with reg (when not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Syncs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c5c3_ovs_agent_syncs_total",
			Help: "Syncs of the node's OVSNode, by result."}, []string{"result"}),
		Publications: prometheus.NewCounter(prometheus.CounterOpts{Name: "c5c3_ovs_agent_publications_total",
			Help: "Status writes to the node's OVSNode (an unchanged database writes nothing)."}),
		ZoneWrites: prometheus.NewCounter(prometheus.CounterOpts{Name: "c5c3_ovs_agent_zone_writes_total",
			Help: "Writes of ovn-cms-options availability-zones."}),
		Connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_ovs_agent_ovsdb_connected",
			Help: "1 while the Open_vSwitch database is connected."}),
		Bridges: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_ovs_agent_bridges", Help: "Bridges on the node."}),
		Ports:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_ovs_agent_ports", Help: "Ports on the node's bridges."}),
		LinksDown: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_ovs_agent_interfaces_link_down",
			Help: "Interfaces whose link_state is down."}),
	}
	if reg != nil {
		reg.MustRegister(m.Syncs, m.Publications, m.ZoneWrites, m.Connected, m.Bridges, m.Ports, m.LinksDown)
	}
	return m
}

func (m *Metrics) observe(st ovsv1alpha1.OVSNodeStatus) {
	ports, down := 0, 0
	for _, b := range st.Bridges {
		ports += len(b.Ports)
		for _, p := range b.Ports {
			for _, i := range p.Interfaces {
				if i.LinkState == "down" {
					down++
				}
			}
		}
	}
	m.Bridges.Set(float64(len(st.Bridges)))
	m.Ports.Set(float64(ports))
	m.LinksDown.Set(float64(down))
}
