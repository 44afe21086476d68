package gardenerstandin

import (
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/c5c3/consumer-plane/internal/gardener"
)

// Worker is what a Shoot's worker pool says of its machines.
type Worker struct {
	// Labels every node of the pool carries (spec.provider.workers[].labels).
	Labels map[string]string
	// Zones the machines are spread over, in order.
	Zones []string
	// Machines the pool has at least (spec.provider.workers[].minimum).
	Machines int
}

// Spec is what of a Shoot its cluster is started with.
type Spec struct {
	// UID of the Shoot.
	UID string
	// Kind is the pool kind of the Shoot (its c5c3.io/pool-kind label):
	// which operators' CRDs its cluster gets.
	Kind string
	// Worker is its first worker pool: the cluster gets its Nodes
	// (Worker.Nodes), as gardenlet's machine controller would register
	// them.
	Worker Worker
	// Plugins are the admission plugins it enables (AdmissionPlugins): its
	// kube-apiserver runs them, beside what a Shoot's always runs.
	Plugins []string
}

// SpecOf reads a Shoot's Spec.
func SpecOf(shoot *unstructured.Unstructured) Spec {
	return Spec{UID: string(shoot.GetUID()), Kind: shoot.GetLabels()[gardener.LabelPoolKind], Worker: FirstWorker(shoot), Plugins: AdmissionPlugins(shoot)}
}

// FirstWorker reads the first worker pool of a Shoot; a Shoot without one
// has no machines.
func FirstWorker(shoot *unstructured.Unstructured) Worker {
	workers, _, _ := unstructured.NestedSlice(shoot.Object, "spec", "provider", "workers")
	if len(workers) == 0 {
		return Worker{}
	}
	w, _ := workers[0].(map[string]any)
	out := Worker{}
	out.Labels, _, _ = unstructured.NestedStringMap(w, "labels")
	out.Zones, _, _ = unstructured.NestedStringSlice(w, "zones")
	minimum, _, _ := unstructured.NestedInt64(w, "minimum")
	out.Machines = int(minimum)
	return out
}

// Nodes are the Nodes of the cluster k (namespace.shoot): the worker's
// first machines, at most max (at least one, so every cluster has the node
// its agents run on), named <k>-node-<i> and spread over its zones in
// turn, as the machine controller spreads a pool's machines.
func (w Worker) Nodes(k string, maxNodes int) []corev1.Node {
	n := min(w.Machines, max(maxNodes, 1))
	n = max(n, 1)
	nodes := make([]corev1.Node, 0, n)
	for i := range n {
		labels := maps.Clone(w.Labels)
		if labels == nil {
			labels = map[string]string{}
		}
		if len(w.Zones) > 0 {
			labels[corev1.LabelTopologyZone] = w.Zones[i%len(w.Zones)]
		}
		nodes = append(nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-node-%d", k, i), Labels: labels}})
	}
	return nodes
}

// AdmissionPlugins are the kube-apiserver admission plugins a Shoot enables
// (spec.kubernetes.kubeAPIServer.admissionPlugins, those not disabled).
func AdmissionPlugins(shoot *unstructured.Unstructured) []string {
	plugins, _, _ := unstructured.NestedSlice(shoot.Object, "spec", "kubernetes", "kubeAPIServer", "admissionPlugins")
	var names []string
	for _, p := range plugins {
		m, _ := p.(map[string]any)
		name, _ := m["name"].(string)
		if disabled, _ := m["disabled"].(bool); name != "" && !disabled {
			names = append(names, name)
		}
	}
	return names
}
