package hypervisor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

// Source introspects the node (virt.Watcher on a real node).
type Source interface {
	Snapshot() (virt.Snapshot, error)
}

// Agent publishes introspections of Source into the node's Hypervisor.
type Agent struct {
	Client client.Client
	// Node names the Hypervisor (the operator names it after the node).
	Node   string
	Source Source
	// Resync is the longest time between two introspections (default 60s);
	// events make them happen sooner.
	Resync time.Duration
	// Debounce gathers a burst of events into one introspection (default 200ms).
	Debounce time.Duration
	Metrics  *Metrics
	Log      logr.Logger

	once      sync.Once
	trigger   chan struct{}
	published atomic.Bool
	lastErr   atomic.Pointer[string]
}

func (a *Agent) init() {
	a.once.Do(func() {
		a.trigger = make(chan struct{}, 1)
		if a.Resync == 0 {
			a.Resync = 60 * time.Second
		}
		if a.Debounce == 0 {
			a.Debounce = 200 * time.Millisecond
		}
		if a.Metrics == nil {
			a.Metrics = NewMetrics(nil)
		}
	})
}

// Trigger asks for an introspection soon. It never blocks.
func (a *Agent) Trigger() {
	a.init()
	select {
	case a.trigger <- struct{}{}:
	default:
	}
}

// OnEvent is the libvirt lifecycle event handler: count it and look again.
func (a *Agent) OnEvent(e virt.Event) {
	a.init()
	a.Metrics.Events.WithLabelValues(string(e.Kind)).Inc()
	a.Trigger()
}

// OnConnection records libvirt's reachability and publishes it at once.
func (a *Agent) OnConnection(connected bool, err error) {
	a.init()
	if connected {
		a.Metrics.Connected.Set(1)
		a.Log.Info("Connected to libvirt")
	} else {
		a.Metrics.Connected.Set(0)
		a.Log.Error(err, "Lost libvirt")
	}
	a.Trigger()
}

// Start runs the publishing loop until ctx ends (a manager Runnable).
func (a *Agent) Start(ctx context.Context) error {
	a.init()
	resync := time.NewTicker(a.Resync)
	defer resync.Stop()
	a.Trigger()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-resync.C:
			// A full look: sizes the source caches between events too.
			if inv, ok := a.Source.(interface{ InvalidateAll() }); ok {
				inv.InvalidateAll()
			}
		case <-a.trigger:
			// Let a burst of events (a domain defined then started) settle.
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(a.Debounce):
			}
			select {
			case <-a.trigger:
			default:
			}
		}
		if err := a.Publish(ctx); err != nil {
			msg := err.Error()
			a.lastErr.Store(&msg)
			a.Log.Error(err, "Cannot publish the hypervisor's status")
			if apierrors.IsConflict(err) {
				a.Trigger()
			}
			continue
		}
		a.lastErr.Store(nil)
	}
}

// NeedLeaderElection is false: each node's agent publishes its own node.
func (a *Agent) NeedLeaderElection() bool { return false }

// errNoHypervisor says the operator has not created the node's Hypervisor yet.
var errNoHypervisor = errors.New("the hypervisor operator has not created this node's Hypervisor yet")

// Publish introspects once and writes the Hypervisor's status when it changed.
func (a *Agent) Publish(ctx context.Context) error {
	a.init()
	hv := &kvmv1.Hypervisor{}
	if err := a.Client.Get(ctx, client.ObjectKey{Name: a.Node}, hv); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("hypervisor %s: %w", a.Node, errNoHypervisor)
		}
		return fmt.Errorf("cannot read hypervisor %s: %w", a.Node, err)
	}
	start := time.Now()
	snap, err := a.Source.Snapshot()
	a.Metrics.Duration.Observe(time.Since(start).Seconds())
	orig := hv.DeepCopy()
	if err != nil {
		a.Metrics.Introspections.WithLabelValues("error").Inc()
		markUnreachable(&hv.Status, err, hv.Generation)
	} else {
		a.Metrics.Introspections.WithLabelValues("success").Inc()
		applySnapshot(&hv.Status, hv.Spec, snap, hv.Generation)
		a.Metrics.observe(snap)
	}
	if !equality.Semantic.DeepEqual(orig.Status, hv.Status) {
		// The optimistic lock keeps the operator's concurrent status writes:
		// on a conflict the loop reads again and re-applies.
		if perr := a.Client.Status().Patch(ctx, hv, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); perr != nil {
			return fmt.Errorf("cannot write the status of hypervisor %s: %w", a.Node, perr)
		}
		a.Metrics.Publications.Inc()
	}
	if err != nil {
		return err
	}
	a.published.Store(true)
	return nil
}

// Ready is the readiness check: ready once a fresh introspection is
// published and the last attempt succeeded.
func (a *Agent) Ready(_ *http.Request) error {
	if p := a.lastErr.Load(); p != nil {
		return errors.New(*p)
	}
	if !a.published.Load() {
		return errors.New("no introspection published yet")
	}
	return nil
}

// Metrics are the hypervisor agent's Prometheus metrics.
type Metrics struct {
	Introspections *prometheus.CounterVec
	Duration       prometheus.Histogram
	Publications   prometheus.Counter
	Events         *prometheus.CounterVec
	Connected      prometheus.Gauge
	Domains        *prometheus.GaugeVec
	VCPUs          prometheus.Gauge
	MemoryBytes    prometheus.Gauge
}

// NewMetrics creates the metrics and registers them with reg (when not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Introspections: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c5c3_hypervisor_agent_introspections_total",
			Help: "Introspections of libvirt, by result."}, []string{"result"}),
		Duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "c5c3_hypervisor_agent_introspection_duration_seconds",
			Help: "How long one introspection of libvirt took.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)}),
		Publications: prometheus.NewCounter(prometheus.CounterOpts{Name: "c5c3_hypervisor_agent_publications_total",
			Help: "Status writes to the node's Hypervisor (an unchanged introspection writes nothing)."}),
		Events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c5c3_hypervisor_agent_lifecycle_events_total",
			Help: "libvirt domain lifecycle events received, by kind."}, []string{"kind"}),
		Connected: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_hypervisor_agent_libvirt_connected",
			Help: "1 while the agent holds a libvirt connection."}),
		Domains: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "c5c3_hypervisor_agent_domains",
			Help: "Domains on the node, by state."}, []string{"state"}),
		VCPUs: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_hypervisor_agent_allocated_vcpus",
			Help: "vCPUs given to active domains."}),
		MemoryBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_hypervisor_agent_allocated_memory_bytes",
			Help: "Memory given to active domains."}),
	}
	if reg != nil {
		reg.MustRegister(m.Introspections, m.Duration, m.Publications, m.Events, m.Connected, m.Domains, m.VCPUs, m.MemoryBytes)
	}
	return m
}

func (m *Metrics) observe(s virt.Snapshot) {
	m.Domains.Reset()
	for _, d := range s.Domains {
		m.Domains.WithLabelValues(string(d.State)).Inc()
	}
	vcpus, mem := s.Allocated()
	m.VCPUs.Set(float64(vcpus))
	m.MemoryBytes.Set(float64(mem))
}
