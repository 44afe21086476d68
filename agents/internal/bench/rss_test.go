//go:build libvirt && ceph

// Package bench measures the agents as the binaries they ship as.
package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"libvirt.org/go/libvirt"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovsv1alpha1 "github.com/c5c3/consumer-plane/agents/apis/ovs/v1alpha1"
	storagev1alpha1 "github.com/c5c3/consumer-plane/agents/apis/storage/v1alpha1"
	"github.com/c5c3/consumer-plane/agents/internal/ovstest"
	"github.com/c5c3/consumer-plane/agents/internal/virttest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

func TestMain(m *testing.M) {
	for _, add := range []func(*runtime.Scheme) error{kvmv1.AddToScheme, ovsv1alpha1.AddToScheme, storagev1alpha1.AddToScheme} {
		if err := add(clientgoscheme.Scheme); err != nil {
			panic(err)
		}
	}
	os.Exit(kubetest.Main(m, "../../../cluster/crds/hypervisor-operator", "../../../cluster/crds/agents"))
}

// BenchmarkAgentsRSS runs the four agent binaries against real components —
// the hypervisor and HA agents on a libvirtd with 1,000 domains (half
// running), the OVS agent on an ovsdb-server with 10 bridges of 20 ports,
// the storage agent on the local Ceph — until each has published, drives a
// few more cycles, and reports each process's peak RSS (VmHWM). One run is
// the measurement (it outlasts the default benchtime, so it runs once).
func BenchmarkAgentsRSS(b *testing.B) {
	kube := kubetest.Client(b)
	cfg := kubetest.Config(b)
	dir := b.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kubetest.Kubeconfig(b, cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	build := exec.Command("go", "build", "-tags", "netgo,osusergo,libvirt,ceph,pacific", "-o", dir+"/", "./cmd/...")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v: %s", err, out)
	}

	lv := virttest.StartLibvirtd(b)
	ref, err := libvirt.NewConnect(lv.URI())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _, _ = ref.Close() }()
	var doms []*libvirt.Domain
	for i := range 1000 {
		d, err := ref.DomainDefineXML(virttest.DomainXML(fmt.Sprintf("rss-%04d", i), fmt.Sprintf("d0000000-0000-4000-8000-%012d", i), 2, 1024))
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			if err := d.Create(); err != nil {
				b.Fatal(err)
			}
		}
		doms = append(doms, d)
	}
	ovs := ovstest.Start(b)
	for i := range 10 {
		args := []string{"add-br", fmt.Sprintf("br-%d", i)}
		for p := range 20 {
			args = append(args, "--", "add-port", fmt.Sprintf("br-%d", i), fmt.Sprintf("p%d-%d", i, p))
		}
		ovs.Vsctl(b, args...)
	}
	cephRun := os.Getenv("COBALTCORE_CEPH_RUN")
	if cephRun == "" {
		cephRun = "/tmp/cobaltcore-ceph"
	}

	const node = "rss-node"
	ctx := context.Background()
	for _, o := range []client.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"c5c3.io/pool": "hv-pool-a"}}},
		&kvmv1.Hypervisor{ObjectMeta: metav1.ObjectMeta{Name: node}},
	} {
		if err := kube.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	policy := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(policy, []byte("action: Restart\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	common := []string{"--node-name=" + node, "--metrics-bind-address=0", "--health-probe-bind-address=0"}
	agents := map[string][]string{
		"hypervisor-agent": append([]string{"--libvirt-uri=" + lv.URI()}, common...),
		"ha-agent":         append([]string{"--libvirt-uri=" + lv.URI(), "--policy=" + policy}, common...),
		"ovs-agent":        append([]string{"--ovsdb=" + ovs.Endpoint()}, common...),
		"storage-agent": append([]string{"--ceph-conf=" + filepath.Join(cephRun, "ceph.conf"), "--interval=1s",
			"--leader-election-namespace=default"}, common...),
	}
	procs := map[string]*exec.Cmd{}
	for name, args := range agents {
		cmd := exec.Command(filepath.Join(dir, name), args...)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		logf, _ := os.Create(filepath.Join(dir, name+".log"))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		procs[name] = cmd
		defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	}

	wait := func(what string, ok func() bool) {
		for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if ok() {
				return
			}
		}
		logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
		for _, l := range logs {
			out, _ := os.ReadFile(l)
			b.Logf("%s:\n%s", l, out)
		}
		b.Fatalf("%s: not published within 90s", what)
	}
	wait("hypervisor", func() bool {
		hv := &kvmv1.Hypervisor{}
		// 1,000 plus the test driver's own "test" domain.
		return kube.Get(ctx, client.ObjectKey{Name: node}, hv) == nil && hv.Status.NumInstances == 1001
	})
	wait("ovs", func() bool {
		o := &ovsv1alpha1.OVSNode{}
		return kube.Get(ctx, client.ObjectKey{Name: node}, o) == nil && o.Status.BridgeCount == 10
	})
	wait("ceph", func() bool {
		o := &storagev1alpha1.CephStatus{}
		return kube.Get(ctx, client.ObjectKey{Name: "ceph"}, o) == nil && meta.IsStatusConditionTrue(o.Status.Conditions, "Ready")
	})
	// A few more cycles: 50 domains change state (hypervisor and HA agents
	// see 50 events), the OVS database changes 10 times.
	for i := 1; i < 100; i += 2 {
		_ = doms[i].Create()
	}
	for i := range 10 {
		ovs.Vsctl(b, "add-port", "br-0", fmt.Sprintf("extra-%d", i))
	}
	wait("the changes", func() bool {
		hv := &kvmv1.Hypervisor{}
		o := &ovsv1alpha1.OVSNode{}
		if kube.Get(ctx, client.ObjectKey{Name: node}, hv) != nil || kube.Get(ctx, client.ObjectKey{Name: node}, o) != nil {
			return false
		}
		active := 0
		for _, in := range hv.Status.Instances {
			if in.Active {
				active++
			}
		}
		// br-0 has its own internal port, 20 ports and the 10 new ones.
		return active == 551 && len(o.Status.Bridges[0].Ports) == 31
	})
	time.Sleep(3 * time.Second)
	for name, cmd := range procs {
		hwm, rss := memory(b, cmd.Process.Pid)
		b.ReportMetric(hwm, name+"-peak-RSS-MiB")
		b.Logf("%-16s peak RSS %6.1f MiB, RSS now %6.1f MiB", name, hwm, rss)
	}
}

// memory reads VmHWM and VmRSS (MiB) of a process.
func memory(b *testing.B, pid int) (hwm, rss float64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "VmHWM:":
			hwm = kb / 1024
		case "VmRSS:":
			rss = kb / 1024
		}
	}
	return hwm, rss
}
