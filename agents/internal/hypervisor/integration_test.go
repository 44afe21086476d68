//go:build libvirt

package hypervisor_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"github.com/go-logr/logr/testr"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"libvirt.org/go/libvirt"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/agents/internal/hypervisor"
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

// TestIntegrationHypervisorAgent runs the agent against libvirt's test
// driver, in process and through a libvirtd without qemu, publishing into a
// real kube-apiserver with the operator's Hypervisor CRD. Its resync is an
// hour: every change after the first publication arrives because libvirt
// announced it.
func TestIntegrationHypervisorAgent(t *testing.T) {
	t.Run("test-driver", func(t *testing.T) { runAgent(t, "hv-test-driver", "test:///default", "test:///default", nil) })
	// As it runs on a node: read-only, through libvirt's read-only socket;
	// the test changes domains through the read-write one.
	t.Run("libvirtd", func(t *testing.T) {
		d := virttest.StartLibvirtd(t)
		runAgent(t, "hv-libvirtd", d.ReadOnlyURI(), d.URI(), d)
	})
}

// TestIntegrationReadOnlyConnectionChangesNothing shows what the hypervisor
// agent's connection cannot do: the daemon refuses a domain's start on it,
// while the read-write connection the HA agent keeps may.
func TestIntegrationReadOnlyConnectionChangesNothing(t *testing.T) {
	d := virttest.StartLibvirtd(t)
	rw, err := libvirt.NewConnect(d.URI())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = rw.Close() })
	uuid := "6f8c1b1e-0000-4000-8000-00000000c0de"
	dom, err := rw.DomainDefineXML(virttest.DomainXML("ro-check", uuid, 1, 128))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dom.Free() }()

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for _, c := range []struct {
		name     string
		readOnly bool
		uri      string
	}{{"read-only", true, d.ReadOnlyURI()}, {"read-write", false, d.URI()}} {
		w := &virt.Watcher{URI: c.uri, ReadOnly: c.readOnly, RetryInterval: 100 * time.Millisecond}
		go func() { _ = w.Run(ctx) }()
		deadline := time.Now().Add(10 * time.Second)
		for !w.Connected() && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if _, err := w.Snapshot(); err != nil {
			t.Fatalf("%s: cannot introspect: %v", c.name, err)
		}
		err := w.StartDomain(uuid)
		if c.readOnly && err == nil {
			t.Fatal("the read-only connection started a domain")
		}
		if !c.readOnly && err != nil {
			t.Fatalf("the read-write connection cannot start a domain: %v", err)
		}
	}
	if on, _ := dom.IsActive(); !on {
		t.Error("the domain the read-write connection started is not running")
	}
}

// runAgent runs the agent on a read-only connection to uri and changes
// domains through a read-write connection to refURI.
func runAgent(t *testing.T, node, uri, refURI string, daemon *virttest.Libvirtd) {
	kube := kubetest.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	hv := &kvmv1.Hypervisor{ObjectMeta: metav1.ObjectMeta{Name: node}}
	if err := kube.Create(ctx, hv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), hv) })

	a := &hypervisor.Agent{Client: kube, Node: node, Resync: time.Hour, Debounce: 50 * time.Millisecond, Log: testr.New(t)}
	w := &virt.Watcher{URI: uri, ReadOnly: true, OnEvent: a.OnEvent, OnConnection: a.OnConnection, RetryInterval: 200 * time.Millisecond}
	a.Source = w
	go func() { _ = w.Run(ctx) }()
	go func() { _ = a.Start(ctx) }()

	ref, err := libvirt.NewConnect(refURI)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = ref.Close() })
	info, err := ref.GetNodeInfo()
	if err != nil {
		t.Fatal(err)
	}

	// The host as libvirt reports it to an independent connection.
	eventually(t, kube, node, "the host's capabilities", func(st kvmv1.HypervisorStatus) error {
		if got := st.Capabilities.HostCpus.Value(); got != int64(info.Cpus) {
			return fmt.Errorf("capabilities.cpus = %d, libvirt says %d", got, info.Cpus)
		}
		if got := st.Capabilities.HostMemory.Value(); got != int64(info.Memory)<<10 {
			return fmt.Errorf("capabilities.memory = %d, libvirt says %d KiB", got, info.Memory)
		}
		if st.LibVirtVersion == "" || st.HypervisorVersion == "" || st.Capabilities.HostCpuArch == "" || len(st.Cells) == 0 {
			return fmt.Errorf("versions, arch or NUMA cells missing: %+v", st)
		}
		if c := meta.FindStatusCondition(st.Conditions, hypervisor.ConditionLibvirt); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition %s not True: %+v", hypervisor.ConditionLibvirt, c)
		}
		return matchDomains(ref, st)
	})

	// A domain defined, started, crashed, restarted, destroyed and undefined.
	uuid := fmt.Sprintf("6f8c1b1e-0000-4000-8000-%012x", time.Now().UnixNano()&0xffffffffffff)
	dom, err := ref.DomainDefineXML(virttest.DomainXML(node+"-vm", uuid, 3, 768))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dom.Free() }()
	eventually(t, kube, node, "the defined domain", instanceIs(ref, uuid, false))
	if err := dom.Create(); err != nil {
		t.Fatal(err)
	}
	eventually(t, kube, node, "the started domain", instanceIs(ref, uuid, true))
	// The test driver's core dump with VIR_DUMP_CRASH crashes the domain:
	// STOPPED/crashed, as a guest that dies under a real hypervisor.
	if err := dom.CoreDumpWithFormat(os.DevNull, libvirt.DOMAIN_CORE_DUMP_FORMAT_RAW, libvirt.DUMP_CRASH); err != nil {
		t.Fatal(err)
	}
	eventually(t, kube, node, "the crashed domain", instanceIs(ref, uuid, false))
	if err := dom.Create(); err != nil {
		t.Fatal(err)
	}
	eventually(t, kube, node, "the restarted domain", instanceIs(ref, uuid, true))
	if err := dom.Destroy(); err != nil {
		t.Fatal(err)
	}
	eventually(t, kube, node, "the destroyed domain", instanceIs(ref, uuid, false))
	if err := dom.Undefine(); err != nil {
		t.Fatal(err)
	}
	eventually(t, kube, node, "the undefined domain gone", func(st kvmv1.HypervisorStatus) error {
		for _, i := range st.Instances {
			if i.ID == uuid {
				return fmt.Errorf("instance %s still published", uuid)
			}
		}
		return matchDomains(ref, st)
	})

	if daemon == nil {
		return
	}
	// The node loses libvirt: the condition says so; it comes back.
	daemon.Kill()
	eventually(t, kube, node, "libvirt reported unreachable", func(st kvmv1.HypervisorStatus) error {
		if c := meta.FindStatusCondition(st.Conditions, hypervisor.ConditionLibvirt); c == nil || c.Status != metav1.ConditionFalse || c.Reason != hypervisor.ReasonUnreachable {
			return fmt.Errorf("condition %s: %+v", hypervisor.ConditionLibvirt, c)
		}
		return nil
	})
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, kube, node, "libvirt reachable again", func(st kvmv1.HypervisorStatus) error {
		if c := meta.FindStatusCondition(st.Conditions, hypervisor.ConditionLibvirt); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("condition %s: %+v", hypervisor.ConditionLibvirt, c)
		}
		return nil
	})
}

// instanceIs checks the published instance and the whole allocation against
// libvirt.
func instanceIs(ref *libvirt.Connect, uuid string, active bool) func(kvmv1.HypervisorStatus) error {
	return func(st kvmv1.HypervisorStatus) error {
		found := false
		for _, i := range st.Instances {
			if i.ID == uuid {
				found = true
				if i.Active != active {
					return fmt.Errorf("instance %s active=%v, want %v", uuid, i.Active, active)
				}
			}
		}
		if !found {
			return fmt.Errorf("instance %s not published", uuid)
		}
		return matchDomains(ref, st)
	}
}

// matchDomains compares the published count and allocation with what libvirt
// lists right now.
func matchDomains(ref *libvirt.Connect, st kvmv1.HypervisorStatus) error {
	doms, err := ref.ListAllDomains(0)
	if err != nil {
		return err
	}
	var vcpus, mem int64
	for i := range doms {
		if on, _ := doms[i].IsActive(); on {
			di, err := doms[i].GetInfo()
			if err != nil {
				return err
			}
			vcpus += int64(di.NrVirtCpu)
			mem += int64(di.Memory) << 10
		}
		_ = doms[i].Free()
	}
	if st.NumInstances != len(doms) {
		return fmt.Errorf("numInstances = %d, libvirt lists %d", st.NumInstances, len(doms))
	}
	cpu, memory := st.Allocation[kvmv1.ResourceCPU], st.Allocation[kvmv1.ResourceMemory]
	if cpu.Value() != vcpus || memory.Value() != mem {
		return fmt.Errorf("allocation cpu=%d memory=%d, libvirt's active domains have %d vCPUs, %d bytes", cpu.Value(), memory.Value(), vcpus, mem)
	}
	return nil
}

func eventually(t *testing.T, kube client.Client, node, what string, check func(kvmv1.HypervisorStatus) error) {
	t.Helper()
	kubetest.Until(t, what+" published", 20*time.Second, func() error {
		hv := &kvmv1.Hypervisor{}
		if err := kube.Get(context.Background(), client.ObjectKey{Name: node}, hv); err != nil {
			return err
		}
		return check(hv.Status)
	})
}
