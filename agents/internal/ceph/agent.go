package ceph

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/c5c3/consumer-plane/agents/apis/storage/v1alpha1"
)

// Agent reads the cluster on an interval and publishes it.
type Agent struct {
	Client client.Client
	// Name of the CephStatus object.
	Name     string
	Mon      MonCommander
	Interval time.Duration
	Metrics  *Metrics
	Log      logr.Logger
}

// Start publishes until ctx ends (a manager Runnable that needs the leader
// lease: the cluster is one, whichever node reads it).
func (a *Agent) Start(ctx context.Context) error {
	if a.Metrics == nil {
		a.Metrics = NewMetrics(nil)
	}
	if a.Interval == 0 {
		a.Interval = 30 * time.Second
	}
	t := time.NewTicker(a.Interval)
	defer t.Stop()
	for {
		if err := a.Publish(ctx); err != nil {
			a.Log.Error(err, "Cannot publish the Ceph cluster's status")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// NeedLeaderElection is true: one replica publishes the cluster.
func (a *Agent) NeedLeaderElection() bool { return true }

// Publish reads the cluster once and writes its CephStatus, with the time
// of the report: written every interval, even when nothing else changed,
// the time is how the pool tells a current report from a stale one.
func (a *Agent) Publish(ctx context.Context) error {
	if a.Metrics == nil {
		a.Metrics = NewMetrics(nil)
	}
	obj := &storagev1alpha1.CephStatus{ObjectMeta: metav1.ObjectMeta{Name: a.Name}}
	if err := a.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); apierrors.IsNotFound(err) {
		if err := a.Client.Create(ctx, obj); err != nil {
			return fmt.Errorf("cannot create CephStatus %s: %w", a.Name, err)
		}
	} else if err != nil {
		return err
	}
	orig := obj.DeepCopy()
	st, rerr := Read(a.Mon)
	if rerr != nil {
		a.Metrics.Reads.WithLabelValues("error").Inc()
		meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
			Reason: "MonitorsUnreachable", Message: rerr.Error(), ObservedGeneration: obj.Generation})
	} else {
		a.Metrics.Reads.WithLabelValues("ok").Inc()
		a.Metrics.observe(st)
		st.Conditions = obj.Status.Conditions
		obj.Status = st
		meta.SetStatusCondition(&obj.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue,
			Reason: "Read", Message: fmt.Sprintf("%s, %d/%d OSDs up", st.Health, st.OSDs.Up, st.OSDs.Total), ObservedGeneration: obj.Generation})
	}
	obj.Status.ReportedAt = &metav1.Time{Time: time.Now()}
	if a.Interval > 0 {
		obj.Status.ReportInterval = &metav1.Duration{Duration: a.Interval}
	}
	if err := a.Client.Status().Patch(ctx, obj, client.MergeFrom(orig)); err != nil {
		return errors.Join(rerr, fmt.Errorf("cannot write the status of CephStatus %s: %w", a.Name, err))
	}
	return rerr
}

// Metrics are the storage agent's Prometheus metrics.
type Metrics struct {
	Reads        *prometheus.CounterVec
	Health       prometheus.Gauge
	Capacity     *prometheus.GaugeVec
	PoolStored   *prometheus.GaugeVec
	PoolUsed     *prometheus.GaugeVec
	PoolObjects  *prometheus.GaugeVec
	PoolMaxAvail *prometheus.GaugeVec
	OSDs         *prometheus.GaugeVec
	OSDUp        *prometheus.GaugeVec
}

// NewMetrics creates the metrics and registers them with reg (when not nil).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "c5c3_storage_agent_" + name, Help: help}, labels)
	}
	m := &Metrics{
		Reads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c5c3_storage_agent_reads_total",
			Help: "Reads of the cluster from its monitors, by result."}, []string{"result"}),
		Health: prometheus.NewGauge(prometheus.GaugeOpts{Name: "c5c3_storage_agent_health",
			Help: "Cluster health: 0 HEALTH_OK, 1 HEALTH_WARN, 2 HEALTH_ERR."}),
		Capacity:     g("capacity_bytes", "Raw capacity, by kind (total, used, available).", "kind"),
		PoolStored:   g("pool_stored_bytes", "Bytes clients stored in a pool.", "pool"),
		PoolUsed:     g("pool_used_bytes", "Bytes a pool uses, replication included.", "pool"),
		PoolObjects:  g("pool_objects", "Objects in a pool.", "pool"),
		PoolMaxAvail: g("pool_max_available_bytes", "Bytes clients may still write to a pool.", "pool"),
		OSDs:         g("osds", "OSDs, by state (total, up, in).", "state"),
		OSDUp:        g("osd_up", "1 while an OSD is up.", "osd", "host"),
	}
	if reg != nil {
		reg.MustRegister(m.Reads, m.Health, m.Capacity, m.PoolStored, m.PoolUsed, m.PoolObjects, m.PoolMaxAvail, m.OSDs, m.OSDUp)
	}
	return m
}

func (m *Metrics) observe(st storagev1alpha1.CephStatusStatus) {
	m.Health.Set(map[string]float64{"HEALTH_OK": 0, "HEALTH_WARN": 1, "HEALTH_ERR": 2}[st.Health])
	m.Capacity.WithLabelValues("total").Set(float64(st.Capacity.TotalBytes))
	m.Capacity.WithLabelValues("used").Set(float64(st.Capacity.UsedBytes))
	m.Capacity.WithLabelValues("available").Set(float64(st.Capacity.AvailableBytes))
	// Pools and OSDs that went must not linger as stale series.
	for _, v := range []*prometheus.GaugeVec{m.PoolStored, m.PoolUsed, m.PoolObjects, m.PoolMaxAvail, m.OSDUp} {
		v.Reset()
	}
	for _, p := range st.Pools {
		m.PoolStored.WithLabelValues(p.Name).Set(float64(p.StoredBytes))
		m.PoolUsed.WithLabelValues(p.Name).Set(float64(p.UsedBytes))
		m.PoolObjects.WithLabelValues(p.Name).Set(float64(p.Objects))
		m.PoolMaxAvail.WithLabelValues(p.Name).Set(float64(p.MaxAvailableBytes))
	}
	m.OSDs.WithLabelValues("total").Set(float64(st.OSDs.Total))
	m.OSDs.WithLabelValues("up").Set(float64(st.OSDs.Up))
	m.OSDs.WithLabelValues("in").Set(float64(st.OSDs.In))
	for _, o := range st.OSDs.States {
		up := 0.0
		if o.Up {
			up = 1
		}
		m.OSDUp.WithLabelValues(strconv.FormatInt(o.ID, 10), o.Host).Set(up)
	}
}
