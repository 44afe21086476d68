package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/c5c3/consumer-plane/internal/cephcaps"
	"github.com/c5c3/consumer-plane/internal/gardener"
)

// The node agents run as containers, one per node of a Shoot cluster: the
// demo's Shoot clusters have Nodes but no kubelets, so the DaemonSets the
// pool functions place there schedule nothing. For a DaemonSet of the
// agents' bundle (cluster/agents) the stand-in does what a kubelet on each
// node would:
// containerd (the local node's, -containerd) pulls the image the DaemonSet
// names, through the node's registry configuration (-containerd-hosts: a
// landscape's nodes mirror xpkg.c5c3.io to its registry), and runs it as the
// image's user in the node's network, with the cluster's kubeconfig mounted
// and the pod's environment; and, for the hypervisor agent, what the
// hypervisor operator does first: create the node's Hypervisor. The
// hypervisor agent reads libvirt's test driver, a node of its own
// (nodeXMLPath: no instance until a test adds one); the storage agent
// reads the local Ceph. What it does not simulate: the HA and OVS agents
// (no libvirtd or Open vSwitch per node), instances started through Nova
// (nova-compute runs nothing, compute.go), or the rest of the DaemonSet's
// pod spec (probes, limits, restarts with back-off, the
// container's user: ctr 1.6's run cannot set one, so every agent runs as
// its image's; the hypervisor agent's own, against a real libvirtd, is
// tested by TestIntegrationAgentContainerCannotWrite).

// containerdNamespace holds the agents' images and containers, apart from
// the local node's pods (k8s.io).
const containerdNamespace = "shoot-nodes"

// agentUID is the user the agents' images run as (tools/packaging/build.sh);
// it must read the mounted kubeconfig.
const agentUID = 65532

var hypervisors = schema.GroupVersionResource{Group: "kvm.cloud.sap", Version: "v1", Resource: "hypervisors"}

// nodeAgent is a DaemonSet of the bundle the stand-in runs.
type nodeAgent struct {
	namespace, daemonSet string
	// args of the agent on the cluster's i-th node.
	args func(s *standin, i int) []string
	// firstNodeOnly: it runs on the first node only (it elects a leader,
	// and one of them does all its work).
	firstNodeOnly bool
	// env is what the DaemonSet's pod reads from the cluster (nil: nothing);
	// errNotYet while it does not exist, as a kubelet holds a pod whose
	// Secret is missing.
	env func(ctx context.Context, s *standin, c *cluster) ([]string, error)
}

// nodeXMLPath is where a hypervisor agent's container finds its node's
// libvirt: the file <-agent-logs>/<container>/libvirt.xml, written with
// emptyNodeXML unless it exists. A running instance there is a <domain>
// added to it (the test driver runs every domain of its file), read when
// the agent starts again: kill its container, the next sweep starts it.
const nodeXMLPath = "/var/run/node/libvirt.xml"

// emptyNodeXML is a node of libvirt's test driver that runs no instance:
// 16 CPUs and 16 GiB.
const emptyNodeXML = `<node>
  <cpu><nodes>1</nodes><sockets>2</sockets><cores>4</cores><threads>2</threads><active>16</active><mhz>2000</mhz><model>x86_64</model></cpu>
  <memory>16777216</memory>
</node>
`

// errNotYet: what an agent's pod needs is not in its cluster yet.
var errNotYet = errors.New("not yet")

var nodeAgents = []nodeAgent{
	// Each node's libvirt is a node of libvirt's test driver, read from a
	// file of the node's (nodeXML), so a test can start and stop a
	// tenant's instance there.
	{namespace: "c5c3-agents", daemonSet: "hypervisor-agent", args: func(*standin, int) []string {
		return []string{"-libvirt-uri", "test://" + nodeXMLPath, "-resync", "30s"}
	}},
	// As the DaemonSet runs it: Rook's monitor endpoints and the key of the
	// read-only user the storage function composes (a CephClient, which the
	// stand-in creates in the local Ceph as Rook would, cephClients).
	{namespace: "rook-ceph", daemonSet: "storage-agent", firstNodeOnly: true, args: func(s *standin, _ int) []string {
		return []string{"-ceph-conf=", "-ceph-user", cephcaps.StorageAgentUser, "-leader-election-namespace", "rook-ceph", "-interval", "15s"}
	}, env: func(ctx context.Context, s *standin, c *cluster) ([]string, error) {
		sec, err := c.secret(ctx, "rook-ceph", rookClientSecret(cephcaps.StorageAgentUser))
		if apierrors.IsNotFound(err) {
			return nil, errNotYet
		}
		if err != nil {
			return nil, err
		}
		ceph, err := s.cephOf(ctx, c)
		if err != nil {
			return nil, err
		}
		if ceph == nil {
			return nil, errNotYet
		}
		return []string{"CEPH_MON_ENDPOINTS=" + ceph.mon, "CEPH_KEY=" + string(sec.Data[cephcaps.StorageAgentUser])}, nil
	}},
}

// agents starts the agents whose DaemonSet exists in the cluster, once
// per node (the storage agent, which elects a leader, on the first node
// only). A process that ended is started again at the next sweep.
func (s *standin) agents(ctx context.Context, c *cluster) error {
	l, err := c.nodes(ctx)
	if err != nil {
		return err
	}
	nodes := make([]corev1.Node, 0, len(l))
	for _, n := range l {
		if strings.HasPrefix(n.Name, c.name+"-node-") {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	slices.SortFunc(nodes, func(a, b corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	// The pool is its nodes' c5c3.io/pool label (the Shoot's worker label,
	// which the gardener stand-in registers the nodes with); a Shoot of a
	// long-named pool has a derived name (internal/gardener.ShootName).
	pool := nodes[0].Labels[gardener.LabelPool]
	if pool == "" {
		_, pool, _ = strings.Cut(c.name, ".")
	}
	if _, err := c.daemonSet(ctx, "c5c3-agents", "ovs-agent"); err == nil {
		for _, n := range nodes {
			if err := s.registerChassis(ctx, c.name, pool, n.Name); err != nil {
				return err
			}
		}
	} else if !apierrors.IsNotFound(err) {
		return err
	}
	if s.containerd == "" {
		return nil
	}
	for _, a := range nodeAgents {
		ds, err := c.daemonSet(ctx, a.namespace, a.daemonSet)
		if apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return err
		}
		if len(ds.Spec.Template.Spec.Containers) == 0 {
			return fmt.Errorf("DaemonSet %s/%s of cluster %s has no container", a.namespace, a.daemonSet, c.name)
		}
		var env []string
		if a.env != nil {
			if env, err = a.env(ctx, s, c); errors.Is(err, errNotYet) {
				continue
			} else if err != nil {
				return err
			}
		}
		on := nodes
		if a.firstNodeOnly {
			on = nodes[:1]
		}
		for i, n := range on {
			// cluster/daemonset_node-N: short enough for a container ID.
			key := c.name + "/" + a.daemonSet + "_" + strings.TrimPrefix(n.Name, c.name+"-")
			if p, ok := s.procs[key]; ok && p.ProcessState == nil {
				continue // running
			}
			if a.daemonSet == "hypervisor-agent" {
				if err := createHypervisor(ctx, c, n); err != nil {
					return err
				}
			}
			if err := s.start(ctx, key, c, a, n.Name, i, ds.Spec.Template.Spec.Containers[0].Image, env); err != nil {
				return err
			}
		}
	}
	return nil
}

// createHypervisor creates the node's Hypervisor with the spec the
// hypervisor operator gives a new node, in the node's zone; its agent fills
// the status.
func createHypervisor(ctx context.Context, c *cluster, node corev1.Node) error {
	meta := map[string]any{"name": node.Name}
	if z := node.Labels[corev1.LabelTopologyZone]; z != "" {
		meta["labels"] = map[string]any{corev1.LabelTopologyZone: z}
	}
	h := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kvm.cloud.sap/v1", "kind": "Hypervisor",
		"metadata": meta,
		"spec": map[string]any{
			"aggregates": []any{}, "allowedProjects": []any{}, "customTraits": []any{},
			"createCertManagerCertificate": false, "evacuateOnReboot": true, "highAvailability": true,
			"installCertificate": false, "lifecycleEnabled": true, "reboot": false, "skipTests": true,
		},
	}}
	_, err := c.dyn.Resource(hypervisors).Create(ctx, h, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// start runs an agent's image for node against the cluster, as a
// container of the local node's containerd, logging to -agent-logs. The
// ctr client stays attached and passes signals on: the container ends with
// the stand-in (parent-death signal) and when its cluster goes (stopAgents).
func (s *standin) start(ctx context.Context, key string, c *cluster, a nodeAgent, node string, i int, image string, env []string) error {
	if err := s.pull(ctx, image); err != nil {
		return err
	}
	id := strings.NewReplacer("/", "_").Replace(key)
	// A container of an earlier run of this agent (it ended, or the
	// stand-in was killed): gone before the new one.
	_ = s.ctr(ctx, "tasks", "kill", "-s", "SIGKILL", id) //nolint:errcheck // there may be none
	_ = s.ctr(ctx, "containers", "delete", id)           //nolint:errcheck // there may be none
	files := filepath.Join(s.agentLogs, id)
	if err := os.MkdirAll(files, 0o755); err != nil {
		return err
	}
	// What the pod would mount and read: the cluster's kubeconfig, readable
	// by the image's user, and the environment, in a file (not on ctr's
	// command line, where every process could read a key).
	kc, err := os.ReadFile(c.file)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(files, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o400); err != nil {
		return err
	}
	if err := os.Chown(kubeconfig, agentUID, agentUID); err != nil {
		return err
	}
	envFile := filepath.Join(files, "env")
	podEnv := append([]string{"KUBECONFIG=/var/run/shoot/kubeconfig", "POD_NAMESPACE=" + a.namespace}, env...)
	if err := os.WriteFile(envFile, []byte(strings.Join(podEnv, "\n")+"\n"), 0o600); err != nil {
		return err
	}
	nodeXML := filepath.Join(files, "libvirt.xml")
	if _, err := os.Stat(nodeXML); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(nodeXML, []byte(emptyNodeXML), 0o644); err != nil {
			return err
		}
	}
	log, err := os.OpenFile(filepath.Join(s.agentLogs, id+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	args := append([]string{"--address", s.containerd, "-n", containerdNamespace, "run", "--rm", "--net-host",
		"--env-file", envFile, "--mount", "type=bind,src=" + kubeconfig + ",dst=/var/run/shoot/kubeconfig,options=rbind:ro",
		"--mount", "type=bind,src=" + nodeXML + ",dst=" + nodeXMLPath + ",options=rbind:ro",
		image, id,
		// The image's entrypoint (tools/packaging/build.sh) and the pod's arguments.
		"/" + a.daemonSet, "-node-name", node, "-metrics-bind-address", "0", "-health-probe-bind-address", "0"}, a.args(s, i)...)
	cmd := exec.CommandContext(ctx, "ctr", args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start %s for node %s: %w", a.daemonSet, node, err)
	}
	s.procs[key] = cmd
	go func() { _ = cmd.Wait() }() //nolint:errcheck // the exit shows in its log; the next sweep starts it again.
	fmt.Printf("operator-standin: cluster %s: runs %s (%s) for node %s\n", c.name, a.daemonSet, image, node)
	return nil
}

// pull has containerd pull image once, as a kubelet with pull policy
// IfNotPresent would.
func (s *standin) pull(ctx context.Context, image string) error {
	if s.pulled[image] {
		return nil
	}
	if err := s.ctr(ctx, "images", "pull", "--hosts-dir", s.containerdHosts, image); err != nil {
		return fmt.Errorf("cannot pull the node agent's image %s: %w", image, err)
	}
	s.pulled[image] = true
	return nil
}

// ctr runs a ctr command against the node's containerd.
func (s *standin) ctr(ctx context.Context, args ...string) error {
	out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", s.containerd, "-n", containerdNamespace}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// stopAgents ends the agents of clusters that are gone.
func (s *standin) stopAgents(gone func(cluster string) bool) {
	for key, p := range s.procs {
		if gone(filepath.Dir(key)) {
			_ = p.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have ended already.
			delete(s.procs, key)
		}
	}
}
