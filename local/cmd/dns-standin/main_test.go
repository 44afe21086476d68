package main

import (
	"context"
	"errors"
	"net"
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

// TestDNS: the pods' cluster DNS, asked as Go's resolver asks it: a
// Service's name is its ClusterIP, every name under a public domain its
// address (the clouds' Keystone endpoints), anything else does not exist.
func TestDNS(t *testing.T) {
	cs := fake.NewClientset(&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "provider", Namespace: "crossplane-system"},
		Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.20"}})
	f := informers.NewSharedInformerFactory(cs, 0)
	svcs, slices := f.Core().V1().Services(), f.Discovery().V1().EndpointSlices()
	svcs.Informer()
	slices.Informer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	pub, err := parsePublicDomain("cobaltcore.example=127.0.0.44")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = serveDNS(ctx, conn, &names{services: svcs.Lister(), slices: slices.Lister(), public: []publicDomain{pub}})
	}()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", conn.LocalAddr().String())
	}}
	for name, want := range map[string]string{
		"keystone.team-a-prod-7xk2p.cloud.cobaltcore.example.": "127.0.0.44",
		"Keystone.x.v2.cobaltcore.example.":                    "127.0.0.44",
		"provider.crossplane-system.svc.cluster.local.":        "10.96.0.20",
		"missing.crossplane-system.svc.cluster.local.":         "",
		"keystone.team-a-prod-7xk2p.cloud.example.":            "",
		"cobaltcore.example.evil.":                             "",
	} {
		got, err := r.LookupHost(ctx, name)
		var dnsErr *net.DNSError
		switch {
		case want == "" && !(errors.As(err, &dnsErr) && dnsErr.IsNotFound):
			t.Errorf("%s: %v, %v; want not found", name, got, err)
		case want != "" && (err != nil || len(got) != 1 || got[0] != want):
			t.Errorf("%s: %v, %v; want %s", name, got, err, want)
		}
	}
	for _, bad := range []string{"cobaltcore.example", "cobaltcore.example=::1", "=127.0.0.1", "cobaltcore.example=host"} {
		if _, err := parsePublicDomain(bad); err == nil || !strings.Contains(err.Error(), "DOMAIN=IPv4") {
			t.Errorf("parsePublicDomain(%q) = %v, want an error naming DOMAIN=IPv4", bad, err)
		}
	}
}
