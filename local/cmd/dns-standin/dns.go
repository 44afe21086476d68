package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/utils/ptr"
)

// The cluster DNS of the management cluster's pods (-dns): what CoreDNS
// answers there, for the names the plane's pods look up.
//
//   - <service>.<namespace>.svc.cluster.local: the Service's ClusterIP, or
//     a headless one's ready endpoints (as the hosts file);
//   - every name under a -public-domain: its address, the wildcard record a
//     landscape's DNS gives the clouds' public endpoints
//     (https://keystone.<cloud>.<endpoint domain>, the address a cloud's
//     ProviderConfig pins its Keystone to). Here the operator stand-in
//     serves them (-public-endpoints).
//
// Anything else is NXDOMAIN: the plane has no other names. UDP only, A
// records only (an AAAA question of a known name is answered empty), TTL
// 5 s as CoreDNS's.

// publicDomain answers every name under domain with addr.
type publicDomain struct {
	domain string // lower case, no trailing dot
	addr   netip.Addr
}

// parsePublicDomain reads DOMAIN=ADDRESS.
func parsePublicDomain(s string) (publicDomain, error) {
	d, a, ok := strings.Cut(s, "=")
	addr, err := netip.ParseAddr(a)
	d = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(d)), ".")
	if !ok || err != nil || !addr.Is4() || d == "" {
		return publicDomain{}, fmt.Errorf("-public-domain %q: want DOMAIN=IPv4 address, e.g. cobaltcore.example=127.0.0.44", s)
	}
	return publicDomain{domain: d, addr: addr}, nil
}

// names is what the DNS stand-in knows.
type names struct {
	services listersv1.ServiceLister
	slices   discoverylisters.EndpointSliceLister
	public   []publicDomain
}

const clusterDomain = ".svc.cluster.local."

// lookup answers a fully qualified name: its addresses, and whether the
// name exists.
func (n *names) lookup(fqdn string) ([]netip.Addr, bool, error) {
	name := strings.ToLower(fqdn)
	for _, p := range n.public {
		if name == p.domain+"." || strings.HasSuffix(name, "."+p.domain+".") {
			return []netip.Addr{p.addr}, true, nil
		}
	}
	rest, ok := strings.CutSuffix(name, clusterDomain)
	if !ok {
		return nil, false, nil
	}
	svc, ns, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(ns, ".") {
		return nil, false, nil
	}
	s, err := n.services.Services(ns).Get(svc)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	ips, err := addresses(s, n.slices)
	if err != nil {
		return nil, false, err
	}
	var addrs []netip.Addr
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip); err == nil {
			addrs = append(addrs, a)
		}
	}
	return addrs, true, nil
}

// answer is the response to one query message.
func (n *names) answer(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, OpCode: h.OpCode, RecursionDesired: h.RecursionDesired}
	addrs, known, err := n.lookup(q.Name.String())
	switch {
	case err != nil:
		rh.RCode = dnsmessage.RCodeServerFailure
	case !known:
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeA || q.Type == dnsmessage.TypeALL {
		for _, a := range addrs {
			if !a.Is4() {
				continue
			}
			if err := b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 5}, dnsmessage.AResource{A: a.As4()}); err != nil {
				return nil, err
			}
		}
	}
	return b.Finish()
}

// serveDNS answers the queries arriving on conn until ctx ends.
func serveDNS(ctx context.Context, conn net.PacketConn, n *names) error {
	go func() {
		<-ctx.Done()
		_ = conn.Close()
	}()
	buf := make([]byte, 1232)
	for {
		nr, from, err := conn.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		rsp, err := n.answer(buf[:nr])
		if err != nil {
			continue // not a query: dropped, as a resolver retries
		}
		_, _ = conn.WriteTo(rsp, from)
	}
}

// clusterDNSService makes ip (the kubelet's clusterDNS) the Service
// kube-system/kube-dns, its one endpoint the stand-in's address: pods
// reach it through kube-proxy, as they reach CoreDNS.
func clusterDNSService(ctx context.Context, cs kubernetes.Interface, ip string, at netip.AddrPort) error {
	const ns, name = "kube-system", "kube-dns"
	port := corev1.ServicePort{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(int32(at.Port()))}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"k8s-app": name}},
		Spec:       corev1.ServiceSpec{ClusterIP: ip, Ports: []corev1.ServicePort{port}},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("cannot create Service %s/%s with ClusterIP %s: %w", ns, name, ip, err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-standin", Namespace: ns, Labels: map[string]string{
			discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: "dns-standin",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{at.Addr().String()}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("dns"), Protocol: ptr.To(corev1.ProtocolUDP), Port: ptr.To(int32(at.Port()))}},
	}
	_, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = cs.DiscoveryV1().EndpointSlices(ns).Update(ctx, slice, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("cannot point Service %s/%s at %s: %w", ns, name, at, err)
	}
	return nil
}
