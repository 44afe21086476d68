package main

import (
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/c5c3/consumer-plane/internal/pool"
)

// A cloud's compute runs on the nodes its hypervisor pools bound to it, in
// two parts, as in a landscape:
//
//   - the c5c3-operator's (deployCompute): for each hypervisor pool a
//     ControlPlane names (spec.compute.hypervisorClusters) it logs into
//     the pool's cluster with the kubeconfig the cloud was given there
//     (Secret hypervisor-<pool>-kubeconfig in the ControlPlane's
//     namespace: a ServiceAccount limited to the cloud's namespace and
//     nodes) and deploys nova-compute, a DaemonSet in the cloud's
//     namespace on the nodes labelled with the cloud (pool.LabelCloud);
//   - the kubelet's on those nodes and nova-compute's own (runCompute): in
//     every cluster each node a nova-compute DaemonSet selects becomes a
//     compute host of the local Nova (-register-compute), and one no
//     DaemonSet selects any more (the pool gave the node back, the cloud
//     or the pool is gone) is removed from it (-deregister-compute).
//
// What this does not simulate: nova-compute itself (a host is a row in the
// local Nova's database and runs nothing), one Nova per cloud (a node moved
// between two clouds stays a host of the one local Nova), and the pod's
// placement rules beyond its nodeSelector.

// novaCompute names the DaemonSet and labels its pods.
const novaCompute = "nova-compute"

// labelName is the label the DaemonSet selects its pods by.
const labelName = "app.kubernetes.io/name"

// labelCloud names, on a pool's node, the cloud it serves (the hypervisor
// pool function's NodeLabel): the cloud's composite, whose name its
// ControlPlane carries.
const labelCloud = pool.LabelCloud

// Keys of a pool's kubeconfig Secret (the provider's ClusterAccess).
const (
	keyKubeconfig = "kubeconfig"
	keyNamespaces = "namespaces"
)

// deployCompute deploys nova-compute on the hypervisor pools every
// ControlPlane of c names, with each pool's kubeconfig of the cloud.
func (s *standin) deployCompute(ctx context.Context, c *cluster) error {
	for key, at := range s.deployed {
		if time.Since(at) >= redeployAfter {
			delete(s.deployed, key) // looked at again below, if it is still wanted
		}
	}
	// Every entry left is recent.
	l, err := c.list(ctx, controlPlanes)
	if err != nil {
		return fmt.Errorf("cannot list ControlPlanes: %w", err)
	}
	for _, cp := range l {
		if cp.GetDeletionTimestamp() != nil {
			continue
		}
		cloud := cp.GetName()
		pools, _, _ := unstructured.NestedStringSlice(cp.Object, "spec", "compute", "hypervisorClusters")
		for _, pool := range pools {
			secret := "hypervisor-" + pool + "-kubeconfig"
			sec, err := c.secret(ctx, cp.GetNamespace(), secret)
			if apierrors.IsNotFound(err) {
				continue // not given yet: the operator waits for it
			}
			if err != nil {
				return err
			}
			// What was deployed with this version of the Secret is looked
			// at again once in a while, not at every sweep: each look is a
			// request to the pool's API server.
			key := sec.Namespace + "/" + sec.Name + "@" + sec.ResourceVersion + ":" + cloud
			if _, ok := s.deployed[key]; ok {
				continue
			}
			if err := s.deployComputeIn(ctx, sec, cloud); err != nil {
				return fmt.Errorf("ControlPlane %s/%s: cannot deploy nova-compute on hypervisor pool %s with Secret %s: %w", cp.GetNamespace(), cp.GetName(), pool, secret, err)
			}
			s.deployed[key] = time.Now()
		}
	}
	return nil
}

// redeployAfter is how often a cloud's nova-compute, once deployed, is
// looked at again in its pool.
const redeployAfter = 30 * time.Second

// deployComputeIn applies the cloud's nova-compute DaemonSet in the pool
// cluster sec's kubeconfig logs into, in the namespace it names.
func (s *standin) deployComputeIn(ctx context.Context, sec *corev1.Secret, cloud string) error {
	kube, err := s.poolClient(sec)
	if err != nil {
		return err
	}
	ns := strings.TrimSpace(strings.Split(string(sec.Data[keyNamespaces]), ",")[0])
	if ns == "" {
		return fmt.Errorf("the Secret names no namespace (key %s)", keyNamespaces)
	}
	pod := map[string]string{labelName: novaCompute}
	want := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: novaCompute, Namespace: ns, Labels: map[string]string{labelName: novaCompute, labelCloud: cloud}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: pod},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: pod},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{labelCloud: cloud},
					Containers:   []corev1.Container{{Name: novaCompute, Image: "nova-compute (operator-standin: runs nothing)"}},
				},
			},
		},
	}
	got, err := kube.AppsV1().DaemonSets(ns).Get(ctx, novaCompute, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := kube.AppsV1().DaemonSets(ns).Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return err
		}
		fmt.Printf("operator-standin: deployed nova-compute of cloud %s in namespace %s of %s\n", cloud, ns, sec.Namespace+"/"+sec.Name)
		return nil
	case err != nil:
		return err
	case maps.Equal(got.Spec.Template.Spec.NodeSelector, want.Spec.Template.Spec.NodeSelector):
		return nil
	}
	got.Spec.Template.Spec.NodeSelector = want.Spec.Template.Spec.NodeSelector
	_, err = kube.AppsV1().DaemonSets(ns).Update(ctx, got, metav1.UpdateOptions{})
	return err
}

// poolClient logs in with a pool kubeconfig Secret, once per version of
// the Secret (a renewed token is a new version).
func (s *standin) poolClient(sec *corev1.Secret) (kubernetes.Interface, error) {
	key := sec.Namespace + "/" + sec.Name + "@" + sec.ResourceVersion
	if k, ok := s.poolClients[key]; ok {
		return k, nil
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data[keyKubeconfig])
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", keyKubeconfig, err)
	}
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	for old := range s.poolClients {
		if strings.HasPrefix(old, sec.Namespace+"/"+sec.Name+"@") {
			delete(s.poolClients, old)
		}
	}
	s.poolClients[key] = k
	return k, nil
}

// runCompute makes each node of c that a nova-compute DaemonSet selects a
// compute host of the local Nova, and removes those it made that none
// selects any more.
func (s *standin) runCompute(ctx context.Context, c *cluster) error {
	if s.registerCompute == "" {
		return nil
	}
	dss, err := c.daemonSets(ctx, labels.SelectorFromSet(labels.Set{labelName: novaCompute}))
	if err != nil {
		return err
	}
	nodes, err := c.nodes(ctx)
	if err != nil {
		return err
	}
	selected := map[string]bool{}
	for _, ds := range dss {
		if ds.DeletionTimestamp != nil || len(ds.Spec.Template.Spec.NodeSelector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(ds.Spec.Template.Spec.NodeSelector)
		for _, n := range nodes {
			if sel.Matches(labels.Set(n.Labels)) {
				selected[n.Name] = true
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(selected)) {
		if s.computes[n] != "" {
			continue
		}
		if err := s.computeCommand(ctx, s.registerCompute, n); err != nil {
			return err
		}
		s.computes[n] = c.name
		fmt.Printf("operator-standin: cluster %s: nova-compute runs on node %s, a compute host of the local Nova\n", c.name, n)
	}
	return s.removeComputes(ctx, func(cl, node string) bool { return cl == c.name && !selected[node] })
}

// removeComputes removes the compute hosts gone says are gone (by their
// cluster and node).
func (s *standin) removeComputes(ctx context.Context, gone func(cluster, node string) bool) error {
	for _, n := range slices.Sorted(maps.Keys(s.computes)) {
		if !gone(s.computes[n], n) {
			continue
		}
		if err := s.computeCommand(ctx, s.deregisterCompute, n); err != nil {
			return err
		}
		fmt.Printf("operator-standin: cluster %s: nova-compute left node %s, no longer a compute host of the local Nova\n", s.computes[n], n)
		delete(s.computes, n)
	}
	return nil
}

// computeCommand runs -register-compute or -deregister-compute for node.
func (s *standin) computeCommand(ctx context.Context, command, node string) error {
	if command == "" {
		return nil
	}
	args := append(strings.Fields(command), node)
	if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil { //nolint:gosec // the stand-in's own flags
		return fmt.Errorf("%s %s: %w: %s", command, node, err, out)
	}
	return nil
}
