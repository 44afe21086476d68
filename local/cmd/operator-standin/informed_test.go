package main

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
)

// TestReinformAsksUntilDiscoveryServes: a CRD of a kind the cluster did
// not serve has appeared, and discovery does not serve its kind yet (it
// lags the CRD, and no CRD event follows). Each sweep asks again, for
// discoveryLag after the CRD's last event, then stops asking. The
// integration test above runs the path where discovery does serve it, on a
// real API server.
func TestReinformAsksUntilDiscoveryServes(t *testing.T) {
	c := &cluster{name: "cp-us-east-1", kube: fake.NewClientset()} // its discovery serves none of informedKinds
	in := &informed{served: map[schema.GroupVersionResource]bool{}}
	c.informed.Store(in)

	in.staleSince.Store(time.Now().UnixNano())
	c.reinform(func() {})
	if in.staleSince.Load() == 0 {
		t.Fatal("the first sweep after the CRD appeared, discovery not serving its kind yet, stopped asking: the cluster would never read that kind")
	}
	if c.informed.Load() != in {
		t.Fatal("informed anew though discovery serves nothing new")
	}

	in.staleSince.Store(time.Now().Add(-discoveryLag - time.Second).UnixNano())
	c.reinform(func() {})
	if in.staleSince.Load() != 0 {
		t.Error("still asking discovery more than discoveryLag after the CRD's last event")
	}
}
