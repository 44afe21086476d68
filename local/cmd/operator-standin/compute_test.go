package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRunCompute: a node a cloud's nova-compute DaemonSet selects becomes a
// compute host once; one it no longer selects, or of a cluster that is
// gone, is removed; nodes of no cloud are never registered. (The demo's
// e2e runs the whole path, with the cloud's own kubeconfig: 6b, 6d, 9e.)
func TestRunCompute(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	script := filepath.Join(dir, "compute.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1 $2\" >> "+log+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	node := func(name, cloud string) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"c5c3.io/pool": "hv-pool-a"}}}
		if cloud != "" {
			n.Labels[labelCloud] = cloud
		}
		return n
	}
	ds := func(ns, cloud string) *appsv1.DaemonSet {
		return &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: novaCompute, Namespace: ns, Labels: map[string]string{labelName: novaCompute}},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				NodeSelector: map[string]string{labelCloud: cloud},
			}}},
		}
	}
	kube := fake.NewClientset(node("n0", "team-a"), node("n1", "team-b"), node("n2", ""), ds("openstack-team-a", "team-a"))
	s := &standin{config: config{registerCompute: script + " register", deregisterCompute: script + " deregister"}, computes: map[string]string{}}
	c := &cluster{name: "garden-c5c3.hv-pool-a", kube: kube}
	ctx := context.Background()
	step := func(what string, want ...string) {
		t.Helper()
		if err := s.runCompute(ctx, c); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		b, _ := os.ReadFile(log) //nolint:errcheck // no file: nothing ran
		if got := strings.Fields(strings.ReplaceAll(string(b), "\n", ",")); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: commands %q, want %q", what, got, want)
		}
		_ = os.Remove(log) //nolint:errcheck // may not exist
	}
	step("team-a's nova-compute selects n0", "register", "n0,")
	step("again: nothing more")
	// team-b's control plane deploys its nova-compute: n1 too.
	if _, err := kube.AppsV1().DaemonSets("openstack-team-b").Create(ctx, ds("openstack-team-b", "team-b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	step("team-b's nova-compute selects n1", "register", "n1,")
	// The pool takes n0 back from team-a: its label goes.
	if _, err := kube.CoreV1().Nodes().Update(ctx, node("n0", ""), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	step("n0 released", "deregister", "n0,")
	if got := s.computes; len(got) != 1 || got["n1"] != c.name {
		t.Errorf("compute hosts %v, want n1 of %s", got, c.name)
	}
	// The pool's cluster goes: its hosts go with it.
	if err := s.removeComputes(ctx, func(cl, _ string) bool { return cl == c.name }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log) //nolint:errcheck // checked below
	if strings.TrimSpace(string(b)) != "deregister n1" {
		t.Errorf("the cluster gone: commands %q, want deregister n1", b)
	}
}
