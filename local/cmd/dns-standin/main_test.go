package main

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// TestRender: a Service with a ClusterIP resolves to it; a headless one to
// its ready endpoints only; an ExternalName one is left to the machine.
func TestRender(t *testing.T) {
	svc := func(name, ip string, typ corev1.ServiceType) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "crossplane-system"},
			Spec: corev1.ServiceSpec{ClusterIP: ip, Type: typ}}
	}
	ep := func(ip string, ready bool) discoveryv1.Endpoint {
		return discoveryv1.Endpoint{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready)}}
	}
	cs := fake.NewClientset(
		svc("provider", "10.96.0.20", corev1.ServiceTypeClusterIP),
		svc("function", corev1.ClusterIPNone, corev1.ServiceTypeClusterIP),
		svc("webhooks", "", corev1.ServiceTypeExternalName),
		&discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: "function-abc", Namespace: "crossplane-system",
				Labels: map[string]string{discoveryv1.LabelServiceName: "function"}},
			Endpoints: []discoveryv1.Endpoint{ep("10.244.0.7", true), ep("10.244.0.8", false)},
		},
	)
	f := informers.NewSharedInformerFactory(cs, 0)
	svcs, slices := f.Core().V1().Services(), f.Discovery().V1().EndpointSlices()
	svcs.Informer()
	slices.Informer()
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	f.WaitForCacheSync(stop)

	b, err := render([]byte("127.0.0.1 localhost"), svcs.Lister(), slices.Lister())
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"127.0.0.1 localhost",
		"# The cluster's Services (dns-standin)",
		"10.244.0.7\tfunction.crossplane-system function.crossplane-system.svc function.crossplane-system.svc.cluster.local",
		"10.96.0.20\tprovider.crossplane-system provider.crossplane-system.svc provider.crossplane-system.svc.cluster.local",
		"",
	}, "\n")
	if string(b) != want {
		t.Errorf("render:\n%s\nwant:\n%s", b, want)
	}
}
