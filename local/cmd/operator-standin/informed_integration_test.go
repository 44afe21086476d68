package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

// The API server serves Rook's kinds, not the c5c3 ControlPlane: a
// storage Shoot's.
func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, "../../../cluster/crds/rook")) }

// TestIntegrationInformedSweepsMakeNoRequests: once a cluster's informers
// have synced, what the sweeps read costs its API server no request, a
// change rings the loops, and a kind the cluster does not serve is not
// found without asking.
func TestIntegrationInformedSweepsMakeNoRequests(t *testing.T) {
	cfg := kubetest.Config(t)
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(cfg)
	cfg.Timeout = 10 * time.Second // as the stand-in's clients have it
	c := &cluster{name: "st-pool-a", cfg: cfg, dyn: dynamic.NewForConfigOrDie(cfg), kube: kube}
	rang := newWakeup()
	c.inform(rang.ring)
	t.Cleanup(c.forget)
	in := c.informed.Load()
	if in == nil {
		t.Fatal("the cluster is not informed: its kinds could not be discovered")
	}
	kubetest.Until(t, "every informer synced", 30*time.Second, func() error {
		for _, inf := range []cache.SharedIndexInformer{in.secrets, in.nodes, in.namespaces, in.daemonSets, in.dyn.ForResource(cephClusters).Informer()} {
			if !inf.HasSynced() {
				return errors.New("not yet")
			}
		}
		return nil
	})
	select { // what the first lists added
	case <-rang:
	default:
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-rang:
	case <-time.After(10 * time.Second):
		t.Fatal("no ring after a namespace was created")
	}
	cc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ceph.rook.io/v1", "kind": "CephCluster",
		"metadata": map[string]any{"name": "st-pool-a", "namespace": "rook-ceph"},
		"spec":     map[string]any{},
	}}
	if _, err := c.dyn.Resource(cephClusters).Namespace("rook-ceph").Create(ctx, cc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().Secrets("rook-ceph").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-mon"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubetest.Until(t, "the informers hold the CephCluster and the Secret", 30*time.Second, func() error {
		l, err := c.list(ctx, cephClusters)
		if err != nil || len(l) != 1 {
			return errors.Join(err, errors.New("no CephCluster listed"))
		}
		_, err = c.secret(ctx, "rook-ceph", "rook-ceph-mon")
		return err
	})

	before, start := kubetest.APIRequests(t, cfg), time.Now()
	for range 20 {
		if l, err := c.list(ctx, cephClusters); err != nil || len(l) != 1 {
			t.Fatalf("CephClusters: %d, %v", len(l), err)
		}
		if _, err := c.list(ctx, controlPlanes); !apierrors.IsNotFound(err) {
			t.Fatalf("ControlPlanes of a cluster without the c5c3 CRD: %v, want NotFound", err)
		}
		if _, err := c.secret(ctx, "rook-ceph", "rook-ceph-mon"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.secret(ctx, "rook-ceph", "missing"); !apierrors.IsNotFound(err) {
			t.Fatalf("a missing Secret: %v, want NotFound", err)
		}
		if _, err := c.daemonSet(ctx, "rook-ceph", "storage-agent"); !apierrors.IsNotFound(err) {
			t.Fatalf("a missing DaemonSet: %v, want NotFound", err)
		}
		if _, err := c.nodes(ctx); err != nil {
			t.Fatal(err)
		}
		if ns, err := c.namespaces(ctx); err != nil || len(ns) == 0 {
			t.Fatalf("namespaces: %d, %v", len(ns), err)
		}
	}
	// Past two of the clients' 10-s timeouts: the informers' watches
	// outlast them.
	time.Sleep(time.Until(start.Add(21 * time.Second)))
	d := kubetest.APIRequests(t, cfg).Sub(before)
	for _, k := range []string{"LIST cephclusters", "LIST controlplanes", "GET secrets", "GET daemonsets", "LIST nodes", "LIST namespaces",
		"WATCH secrets", "WATCH namespaces", "WATCH cephclusters"} {
		if d[k] > 0 {
			t.Errorf("%s: %v requests while reading an informed cluster for 21 s (%s)", k, d[k], d)
		}
	}

	// What is read is a copy: a step that changes it changes no other
	// step's view.
	l, _ := c.list(ctx, cephClusters)
	l[0].Object["status"] = map[string]any{"phase": "Ready"}
	if again, _ := c.list(ctx, cephClusters); again[0].Object["status"] != nil {
		t.Error("a change to a listed object reached the informer's store")
	}
}

// TestIntegrationInformedSeesLayerCRDs: a cluster informed before Flux
// applied its layer learns the layer's kinds once their CRDs are there,
// and reads them through informers from then on (the layer brings Rook's
// CRDs to a storage pool, the ControlPlane's to a control-plane cluster,
// after the cluster is up). Runs after the test above, which needs the
// ControlPlane CRD absent.
func TestIntegrationInformedSeesLayerCRDs(t *testing.T) {
	cfg := kubetest.Config(t)
	ctx := context.Background()
	cfg.Timeout = 10 * time.Second
	c := &cluster{name: "cp-eu-de-1", cfg: cfg, dyn: dynamic.NewForConfigOrDie(cfg), kube: kubernetes.NewForConfigOrDie(cfg)}
	rang := newWakeup()
	c.inform(rang.ring)
	t.Cleanup(c.forget)
	first := c.informed.Load()
	if first == nil || first.served[controlPlanes] {
		t.Fatal("the cluster is not informed, or serves ControlPlanes before their CRD exists")
	}
	if _, err := c.list(ctx, controlPlanes); !apierrors.IsNotFound(err) {
		t.Fatalf("ControlPlanes before their CRD: %v, want NotFound", err)
	}

	b, err := os.ReadFile("../../../cluster/crds/c5c3/c5c3.io_controlplanes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(b, &crd.Object); err != nil {
		t.Fatal(err)
	}
	crds := c.dyn.Resource(apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	kubetest.Until(t, "the new CRD marks the cluster's informers stale and rings the loops", 30*time.Second, func() error {
		select {
		case <-rang:
		default:
		}
		if first.staleSince.Load() == 0 {
			return errors.New("not stale")
		}
		return nil
	})
	kubetest.Until(t, "informed anew, ControlPlanes listed through an informer", 30*time.Second, func() error {
		c.reinform(rang.ring) // what the next sweep does
		in := c.informed.Load()
		if in == first || !in.served[controlPlanes] {
			return errors.New("ControlPlanes not served yet")
		}
		if !in.dyn.ForResource(controlPlanes).Informer().HasSynced() {
			return errors.New("the ControlPlanes' informer has not synced")
		}
		l, err := c.list(ctx, controlPlanes)
		if err != nil || len(l) != 0 {
			return fmt.Errorf("ControlPlanes: %d, %v", len(l), err)
		}
		return nil
	})
	if !first.dyn.ForResource(cephClusters).Informer().IsStopped() {
		t.Error("the stale informers still run")
	}
}
