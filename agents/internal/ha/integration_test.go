//go:build libvirt

package ha_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"github.com/go-logr/logr/testr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	"libvirt.org/go/libvirt"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/agents/internal/ha"
	"github.com/c5c3/consumer-plane/agents/internal/virt"
	"github.com/c5c3/consumer-plane/agents/internal/virttest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) {
	if err := kvmv1.AddToScheme(scheme.Scheme); err != nil {
		panic(err)
	}
	os.Exit(kubetest.Main(m, "../../../cluster/crds/hypervisor-operator"))
}

type harness struct {
	t      *testing.T
	kube   client.Client
	ref    *libvirt.Connect
	agent  *ha.Agent
	node   string
	daemon *virttest.Libvirtd
}

// start runs the HA agent for node against a libvirtd without qemu (its
// test driver) with the given policy.
func start(t *testing.T, node string, p ha.Policy) *harness {
	kube := kubetest.Client(t)
	d := virttest.StartLibvirtd(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	p.Default()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	w := &virt.Watcher{URI: d.URI(), RetryInterval: 200 * time.Millisecond}
	// Events go through a real events.k8s.io recorder into the API server.
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: kubernetes.NewForConfigOrDie(kubetest.Config(t)).EventsV1()})
	stop := make(chan struct{})
	b.StartRecordingToSink(stop)
	t.Cleanup(func() { close(stop); b.Shutdown() })
	a := ha.New(kube, node, ha.NewEngine(p), w, b.NewRecorder(scheme.Scheme, "ha-agent"), nil, testr.New(t))
	w.OnEvent, w.OnConnection = a.OnEvent, a.OnConnection
	go func() { _ = w.Run(ctx) }()
	go func() { _ = a.Start(ctx) }()
	ref, err := libvirt.NewConnect(d.URI())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = ref.Close() })
	h := &harness{t: t, kube: kube, ref: ref, agent: a, node: node, daemon: d}
	h.until("the agent connected", func() error { return a.Ready(nil) })
	return h
}

// domain defines and starts a domain.
func (h *harness) domain(name string) *libvirt.Domain {
	uuid := fmt.Sprintf("7a1d0c2e-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffffffff)
	d, err := h.ref.DomainDefineXML(virttest.DomainXML(name, uuid, 1, 256))
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = d.Free() })
	if err := d.Create(); err != nil {
		h.t.Fatal(err)
	}
	return d
}

// crash makes the test driver crash the domain (VIR_DUMP_CRASH):
// libvirt emits STOPPED/crashed, as for a guest that dies.
func (h *harness) crash(d *libvirt.Domain) {
	if err := d.CoreDumpWithFormat(os.DevNull, libvirt.DOMAIN_CORE_DUMP_FORMAT_RAW, libvirt.DUMP_CRASH); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) actions(action ha.Action, result string) int {
	return int(testutil.ToFloat64(h.agent.Metrics.Actions.WithLabelValues(string(action), result)))
}

func (h *harness) until(what string, check func() error) {
	h.t.Helper()
	kubetest.Until(h.t, what, 20*time.Second, check)
}

// event waits for an event about the node with the given reason.
func (h *harness) event(reason string) {
	h.t.Helper()
	h.until("event "+reason, func() error {
		l := &eventsv1.EventList{}
		if err := h.kube.List(context.Background(), l, client.InNamespace(metav1.NamespaceDefault)); err != nil {
			return err
		}
		for _, e := range l.Items {
			if e.Regarding.Kind == "Node" && e.Regarding.Name == h.node && e.Reason == reason && e.ReportingController == "ha-agent" {
				return nil
			}
		}
		return fmt.Errorf("none among %d events", len(l.Items))
	})
}

func state(d *libvirt.Domain) libvirt.DomainState {
	s, _, _ := d.GetState()
	return s
}

// TestIntegrationHARestartsOnceAndStopsWhenFlapping: each crash is restarted
// once; after maxRestarts within the window the domain is left stopped and
// only reported.
func TestIntegrationHARestartsOnceAndStopsWhenFlapping(t *testing.T) {
	h := start(t, "ha-restart", ha.Policy{Action: ha.ActionRestart, MaxRestarts: 2, Window: ha.Duration{Duration: 10 * time.Minute}, OnFlapping: ha.ActionReport})
	d := h.domain("ha-restart-vm")
	for i := 1; i <= 2; i++ {
		h.crash(d)
		h.until(fmt.Sprintf("restart %d", i), func() error {
			if n := h.actions(ha.ActionRestart, "ok"); n != i {
				return fmt.Errorf("%d restarts", n)
			}
			if s := state(d); s != libvirt.DOMAIN_RUNNING {
				return fmt.Errorf("domain state %d, want running", s)
			}
			return nil
		})
	}
	// Third crash within the window: flapping, reported, not restarted.
	h.crash(d)
	h.until("the flapping domain reported", func() error {
		if n := h.actions(ha.ActionReport, "ok"); n != 1 {
			return fmt.Errorf("%d reports", n)
		}
		return nil
	})
	if n := h.actions(ha.ActionRestart, "ok"); n != 2 {
		t.Fatalf("restarts = %d after flapping, want 2", n)
	}
	if s := state(d); s == libvirt.DOMAIN_RUNNING {
		t.Fatal("the flapping domain was restarted")
	}
	// A deliberate stop is none of the agent's business.
	other := h.domain("ha-restart-other")
	if err := other.Destroy(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if n := testutil.ToFloat64(h.agent.Metrics.Failures); n != 3 {
		t.Fatalf("failures acted on = %v, want 3 (a destroy is deliberate)", n)
	}
	h.event("DomainRestarted")
	h.event("DomainFailed")

	// The node loses libvirt: reported by metric and event.
	h.daemon.Kill()
	h.until("libvirt reported lost", func() error {
		if n := testutil.ToFloat64(h.agent.Metrics.LibvirtLost); n != 1 {
			return fmt.Errorf("libvirt_lost_total = %v", n)
		}
		if h.agent.Ready(nil) == nil {
			return fmt.Errorf("still ready without libvirt")
		}
		return nil
	})
	h.event("LibvirtLost")
}

// TestIntegrationHAEvictsOnce: with the Evict policy, two domains failing on
// one node request the node's evacuation exactly once.
func TestIntegrationHAEvictsOnce(t *testing.T) {
	h := start(t, "ha-evict", ha.Policy{Action: ha.ActionEvict})
	a, b := h.domain("ha-evict-a"), h.domain("ha-evict-b")
	h.crash(a)
	h.until("the eviction", func() error {
		ev := &kvmv1.Eviction{}
		if err := h.kube.Get(context.Background(), client.ObjectKey{Name: ha.EvictionName(h.node)}, ev); err != nil {
			return err
		}
		if ev.Spec.Hypervisor != h.node {
			return fmt.Errorf("eviction for %q", ev.Spec.Hypervisor)
		}
		return nil
	})
	h.crash(b)
	h.until("the second failure handled", func() error {
		if n := h.actions(ha.ActionEvict, "already-evicting"); n != 1 {
			return fmt.Errorf("%d already-evicting", n)
		}
		return nil
	})
	list := &kvmv1.EvictionList{}
	if err := h.kube.List(context.Background(), list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		if e.Spec.Hypervisor == h.node {
			n++
		}
	}
	if n != 1 || h.actions(ha.ActionEvict, "ok") != 1 {
		t.Fatalf("%d Evictions for %s (%d created), want exactly 1", n, h.node, h.actions(ha.ActionEvict, "ok"))
	}
	if state(a) == libvirt.DOMAIN_RUNNING || state(b) == libvirt.DOMAIN_RUNNING {
		t.Fatal("the Evict policy restarted a domain")
	}
	h.event("EvictionRequested")
}
