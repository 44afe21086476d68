package gardenerstandin

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/c5c3/consumer-plane/local/garden"
)

var (
	gvrConfigMaps      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrInternalSecrets = schema.GroupVersionResource{Group: "core.gardener.cloud", Version: "v1beta1", Resource: "internalsecrets"}
)

// Publish does, in the garden, gardenlet's part for a Shoot whose cluster
// serves: it publishes what the real shoots/adminkubeconfig subresource
// reads to issue a kubeconfig — the cluster's CA (ConfigMap
// <shoot>.ca-cluster), its client CA with key (InternalSecret
// <shoot>.ca-client), both owned by the Shoot so they go with it — and
// reports the Shoot created and healthy with the cluster's address
// (status.advertisedAddresses "external").
func Publish(ctx context.Context, gardenAPI dynamic.Interface, shoot *unstructured.Unstructured, c Cluster) error {
	ns, name := shoot.GetNamespace(), shoot.GetName()
	owner := []any{map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot", "name": name, "uid": string(shoot.GetUID()),
	}}
	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name + ".ca-cluster", "namespace": ns, "ownerReferences": owner},
		"data":     map[string]any{"ca.crt": string(c.ServingCA)},
	}}
	is := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "core.gardener.cloud/v1beta1", "kind": "InternalSecret",
		"metadata": map[string]any{"name": name + ".ca-client", "namespace": ns, "ownerReferences": owner},
		"type":     "Opaque",
		"data": map[string]any{
			"ca.crt": base64.StdEncoding.EncodeToString(c.ClientCA.CertPEM()),
			"ca.key": base64.StdEncoding.EncodeToString(garden.KeyPEM(c.ClientCA.Key)),
		},
	}}
	for _, o := range []struct {
		gvr schema.GroupVersionResource
		obj *unstructured.Unstructured
	}{{gvrConfigMaps, cm}, {gvrInternalSecrets, is}} {
		// Server-side apply: a cluster started anew replaces what an earlier
		// one of the same Shoot published.
		if err := garden.ServerSideApply(ctx, gardenAPI.Resource(o.gvr).Namespace(ns), o.obj, "gardener-standin"); err != nil {
			return fmt.Errorf("cannot publish %s %s/%s: %w", o.obj.GetKind(), ns, o.obj.GetName(), err)
		}
	}
	markReady(shoot, c.Server)
	if _, err := gardenAPI.Resource(garden.GVRShoots).Namespace(ns).UpdateStatus(ctx, shoot, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("cannot report Shoot %s/%s ready: %w", ns, name, err)
	}
	return nil
}

// Published says whether the Shoot's status reports the cluster c as ready,
// so a cluster started anew (another address) is published again.
func Published(shoot *unstructured.Unstructured, c Cluster) bool {
	st, _, _ := unstructured.NestedString(shoot.Object, "status", "lastOperation", "state")
	addrs, _, _ := unstructured.NestedSlice(shoot.Object, "status", "advertisedAddresses")
	for _, a := range addrs {
		if m, ok := a.(map[string]any); ok && m["url"] == c.Server {
			return st == "Succeeded"
		}
	}
	return false
}

// markReady sets what gardenlet reports of a healthy Shoot. The technical ID
// is shoot--<project>--<name>, the project being the namespace without
// Gardener's "garden-" prefix.
func markReady(s *unstructured.Unstructured, server string) {
	now := time.Now().UTC().Format(time.RFC3339)
	cond := func(t, reason, msg string) any {
		return map[string]any{"type": t, "status": "True", "reason": reason, "message": msg, "lastTransitionTime": now, "lastUpdateTime": now}
	}
	project := strings.TrimPrefix(s.GetNamespace(), "garden-")
	s.Object["status"] = map[string]any{
		"gardener":    map[string]any{"id": "gardener-standin", "name": "gardener-standin", "version": "v1.138.0"},
		"hibernated":  false,
		"uid":         string(s.GetUID()),
		"technicalID": "shoot--" + project + "--" + s.GetName(),
		"advertisedAddresses": []any{
			map[string]any{"name": "external", "url": server},
		},
		"lastOperation": map[string]any{
			"type": "Create", "state": "Succeeded", "progress": int64(100),
			"description": "Shoot cluster has been successfully reconciled (gardener-standin).", "lastUpdateTime": now,
		},
		"conditions": []any{
			cond("APIServerAvailable", "HealthzRequestSucceeded", "API server /healthz endpoint responded with success status code."),
			cond("ControlPlaneHealthy", "ControlPlaneRunning", "All control plane components are healthy."),
			cond("EveryNodeReady", "EveryNodeReady", "All nodes are ready."),
			cond("SystemComponentsHealthy", "SystemComponentsRunning", "All system components are healthy."),
		},
	}
}
