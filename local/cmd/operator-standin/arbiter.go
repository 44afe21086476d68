package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// arbiters does the external-arbiter-operator's part with the credential
// the storage function gave it: it logs into the arbiter cluster with the
// RemoteCluster's kubeconfig and places the monitor's objects in the
// RemoteCluster's namespace there, as the real operator does, so a
// credential that cannot do that shows on the pool's claim. No monitor
// runs (its Deployment has no replicas, and these clusters no nodes).
func (s *standin) arbiters(ctx context.Context, c *cluster) error {
	done := func(o *unstructured.Unstructured) bool {
		st, _, _ := unstructured.NestedString(o.Object, "status", "state")
		return st == "Ready"
	}
	if err := each(ctx, c, remoteClusters, done, func(o *unstructured.Unstructured) error {
		remote, ns, err := remoteClient(ctx, c, o.GetNamespace(), o)
		if err == nil {
			_, err = remote.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		}
		setState(o, err, "")
		return nil
	}); err != nil {
		return err
	}
	return each(ctx, c, remoteArbiters, done, func(o *unstructured.Unstructured) error {
		name, _, _ := unstructured.NestedString(o.Object, "spec", "remoteCluster", "name")
		rc, err := c.dyn.Resource(remoteClusters).Namespace(o.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			setState(o, fmt.Errorf("RemoteCluster %s: %w", name, err), "")
			return nil
		}
		remote, ns, err := remoteClient(ctx, c, o.GetNamespace(), rc)
		if err == nil {
			err = placeMonitor(ctx, remote, ns, o.GetName())
		}
		// The operator names the monitor its prefix and the first free
		// letter (webhook default prefix ext-).
		prefix, _, _ := unstructured.NestedString(o.Object, "spec", "monIdPrefix")
		if prefix == "" {
			prefix = "ext-"
		}
		setState(o, err, prefix+"a")
		return nil
	})
}

// remoteClient logs into the arbiter cluster a RemoteCluster names, with
// the kubeconfig of its Secret, and returns the namespace it deploys into.
func remoteClient(ctx context.Context, c *cluster, namespace string, rc *unstructured.Unstructured) (kubernetes.Interface, string, error) {
	secret, _, _ := unstructured.NestedString(rc.Object, "spec", "accesskeyRef", "name")
	key, _, _ := unstructured.NestedString(rc.Object, "spec", "accesskeyRef", "key")
	ns, _, _ := unstructured.NestedString(rc.Object, "spec", "namespace")
	sec, err := c.secret(ctx, namespace, secret)
	if err != nil {
		return nil, "", fmt.Errorf("the access Secret %s/%s: %w", namespace, secret, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(sec.Data[key])
	if err != nil {
		return nil, "", fmt.Errorf("the kubeconfig in Secret %s/%s key %s: %w", namespace, secret, key, err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	return kube, ns, err
}

// placeMonitor creates the monitor's ConfigMap and Deployment, as the
// operator does; both already there is fine.
func placeMonitor(ctx context.Context, remote kubernetes.Interface, ns, name string) error {
	meta := metav1.ObjectMeta{Name: "ceph-arbiter-mon-" + name, Namespace: ns, Labels: map[string]string{"app": "ceph-arbiter-mon", "ceph-cluster": name}}
	cm := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"note": "operator-standin: no monitor runs"}}
	if _, err := remote.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](0),
		Selector: &metav1.LabelSelector{MatchLabels: meta.Labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mon", Image: "quay.io/ceph/ceph:v19.2.3"}}}},
	}}
	if _, err := remote.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// setState reports the operator's state: Ready (with the monitor's ID for
// a RemoteArbiter), or Error with what failed, retried at the next sweep.
func setState(o *unstructured.Unstructured, err error, monID string) {
	if err != nil {
		o.Object["status"] = map[string]any{"state": "Error", "message": "operator-standin: " + err.Error()}
		return
	}
	st := map[string]any{"state": "Ready"}
	if monID != "" {
		st["monId"] = monID
	}
	o.Object["status"] = st
}
