package ha

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

// Starter restarts a domain on this node (virt.Watcher).
type Starter interface {
	StartDomain(uuid string) error
}

// Agent acts on the Engine's decisions.
type Agent struct {
	Client  client.Client
	Node    string
	Engine  *Engine
	Starter Starter
	// Recorder receives Kubernetes events (events.k8s.io) about the node.
	Recorder events.EventRecorder
	Metrics  *Metrics
	Log      logr.Logger

	events    chan virt.Event
	connected atomic.Bool
}

// New returns an agent with its event queue.
func New(c client.Client, node string, e *Engine, s Starter, rec events.EventRecorder, m *Metrics, log logr.Logger) *Agent {
	if m == nil {
		m = NewMetrics(nil)
	}
	return &Agent{Client: c, Node: node, Engine: e, Starter: s, Recorder: rec, Metrics: m, Log: log, events: make(chan virt.Event, 4096)}
}

// OnEvent queues a lifecycle event. It runs on libvirt's event loop, so it
// never blocks: an overflowing queue is counted and logged.
func (a *Agent) OnEvent(e virt.Event) {
	select {
	case a.events <- e:
	default:
		a.Metrics.Dropped.Inc()
		a.Log.Info("Event queue full, dropped a lifecycle event", "domain", e.Name, "kind", e.Kind)
	}
}

// OnConnection reports a node that loses (or regains) libvirt.
func (a *Agent) OnConnection(connected bool, err error) {
	was := a.connected.Swap(connected)
	if connected {
		a.Metrics.LibvirtUp.Set(1)
		if !was {
			a.Log.Info("Connected to libvirt")
		}
		return
	}
	a.Metrics.LibvirtUp.Set(0)
	if was {
		a.Metrics.LibvirtLost.Inc()
		a.Log.Error(err, "Lost libvirt: domain failures on this node go unseen until it is back")
		a.event(corev1.EventTypeWarning, "LibvirtLost", "Watch", "HA agent lost libvirt: %v", err)
	}
}

// Start handles queued events until ctx ends (a manager Runnable).
func (a *Agent) Start(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-a.events:
			d, act := a.Engine.Observe(ev)
			if !act {
				continue
			}
			a.Metrics.Failures.Inc()
			a.act(ctx, d)
		}
	}
}

// NeedLeaderElection is false: each node's agent guards its own domains.
func (a *Agent) NeedLeaderElection() bool { return false }

// Ready is ready while libvirt is reachable: without it the agent sees nothing.
func (a *Agent) Ready(_ *http.Request) error {
	if !a.connected.Load() {
		return errors.New("not connected to libvirt")
	}
	return nil
}

func (a *Agent) act(ctx context.Context, d Decision) {
	log := a.Log.WithValues("domain", d.Domain.Name, "uuid", d.Domain.UUID, "action", d.Action)
	switch d.Action {
	case ActionRestart:
		if err := a.Starter.StartDomain(d.Domain.UUID); err != nil {
			a.Metrics.Actions.WithLabelValues(string(ActionRestart), "error").Inc()
			log.Error(err, "Restart failed")
			a.event(corev1.EventTypeWarning, "RestartFailed", "Restart", "%s; restarting it failed: %v", d.Reason, err)
			// A domain that cannot be restarted here is handled like a flapping one.
			if a.Engine.Policy.OnFlapping == ActionEvict {
				a.evict(ctx, Decision{Action: ActionEvict, Domain: d.Domain, Reason: d.Reason + "; restarting it failed"})
			}
			return
		}
		a.Metrics.Actions.WithLabelValues(string(ActionRestart), "ok").Inc()
		log.Info("Restarted a domain that stopped unexpectedly", "reason", d.Reason)
		a.event(corev1.EventTypeNormal, "DomainRestarted", "Restart", "%s; restarted it", d.Reason)
	case ActionEvict:
		a.evict(ctx, d)
	case ActionReport:
		a.Metrics.Actions.WithLabelValues(string(ActionReport), "ok").Inc()
		log.Info("Domain stopped unexpectedly; the policy only reports it", "reason", d.Reason)
		a.event(corev1.EventTypeWarning, "DomainFailed", "Report", "%s", d.Reason)
	}
}

// EvictionName is the one Eviction the agent ever creates for its node:
// while it exists, the node is being evacuated and further failures have
// nothing to add.
func EvictionName(node string) string { return node + "-ha" }

func (a *Agent) evict(ctx context.Context, d Decision) {
	ev := &kvmv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: EvictionName(a.Node), Labels: map[string]string{"app.kubernetes.io/managed-by": "c5c3-ha-agent"}},
		Spec:       kvmv1.EvictionSpec{Hypervisor: a.Node, Reason: truncate(d.Reason, 1024)},
	}
	err := a.Client.Create(ctx, ev)
	switch {
	case apierrors.IsAlreadyExists(err):
		a.Metrics.Actions.WithLabelValues(string(ActionEvict), "already-evicting").Inc()
		a.Log.Info("Node already being evacuated", "eviction", ev.Name, "reason", d.Reason)
	case err != nil:
		a.Metrics.Actions.WithLabelValues(string(ActionEvict), "error").Inc()
		a.Log.Error(err, "Cannot request the node's evacuation", "eviction", ev.Name)
		a.event(corev1.EventTypeWarning, "EvictionFailed", "Evict", "%s; requesting evacuation failed: %v", d.Reason, err)
	default:
		a.Metrics.Actions.WithLabelValues(string(ActionEvict), "ok").Inc()
		a.Log.Info("Requested the node's evacuation", "eviction", ev.Name, "reason", d.Reason)
		a.event(corev1.EventTypeWarning, "EvictionRequested", "Evict", "%s; requested evacuation (Eviction %s)", d.Reason, ev.Name)
	}
}

func (a *Agent) event(kind, reason, action, format string, args ...any) {
	if a.Recorder == nil {
		return
	}
	// Events are about the node, as the kubelet's are.
	a.Recorder.Eventf(&corev1.ObjectReference{Kind: "Node", Name: a.Node, APIVersion: "v1"}, nil, kind, reason, action, format, args...)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Metrics are the HA agent's Prometheus metrics.
type Metrics struct {
	Failures    prometheus.Counter
	Actions     *prometheus.CounterVec
	LibvirtUp   prometheus.Gauge
	LibvirtLost prometheus.Counter
	Dropped     prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg (when not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "c5c3_ha_agent_unexpected_stops_total",
			Help: "Domain failures acted on (each failure once)."}),
		Actions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c5c3_ha_agent_actions_total",
			Help: "Actions taken on failures, by action and result."}, []string{"action", "result"}),
		LibvirtUp: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_ha_agent_libvirt_up",
			Help: "1 while the HA agent holds a libvirt connection."}),
		LibvirtLost: prometheus.NewCounter(prometheus.CounterOpts{Name: "c5c3_ha_agent_libvirt_lost_total",
			Help: "Times the node lost libvirt."}),
		Dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "c5c3_ha_agent_dropped_events_total",
			Help: "Lifecycle events dropped because the queue was full."}),
	}
	if reg != nil {
		reg.MustRegister(m.Failures, m.Actions, m.LibvirtUp, m.LibvirtLost, m.Dropped)
	}
	return m
}
