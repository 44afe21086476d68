// Command dns-standin gives the one component of the local management plane
// that is not a pod — Crossplane core, a process on this machine — the
// names cluster DNS gives a pod: each Service's
// <name>.<namespace>[.svc[.cluster.local]] resolves to its ClusterIP, which
// kube-proxy routes to the Service's pods on the local node, or, for a
// headless Service, to the addresses of its ready endpoints.
//
// Core needs them: with its Deployment runtime it gives each function a
// headless Service, records its endpoint as
// dns:///<service>.<namespace>:9443 and dials it for every composition. In a cluster, core is a pod and asks CoreDNS. Here it runs in
// a mount namespace of its own whose /etc/hosts is the file this command
// keeps (local/demo/up.sh bind-mounts it): the machine's own hosts
// entries, then one line per Service with a ClusterIP. Go's resolver reads
// the file again when it changes.
//
// With -dns it is also the pods' cluster DNS (dns.go): it answers on that
// address, and Service kube-system/kube-dns with the kubelet's clusterDNS
// (-cluster-dns) leads there through kube-proxy. Pods look up the
// Services' names, and the clouds' public endpoints: a cloud's
// ProviderConfig logs in only at its composed Keystone
// (https://keystone.<cloud>.<endpoint domain>), which -public-domain
// resolves to where the operator stand-in serves it, as a landscape's
// wildcard record resolves it to its ingress.
//
// What it does not simulate: pods' own names, SRV and AAAA records, DNS
// over TCP, forwarding to the machine's resolver.
//
// Usage: dns-standin -kubeconfig FILE -hosts FILE [-base /etc/hosts]
//
//	[-dns ADDR:PORT -cluster-dns IP] [-public-domain DOMAIN=IP ...]
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listersv1 "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the management cluster")
	hosts := flag.String("hosts", "", "the hosts file to keep (written in place: it is bind-mounted)")
	base := flag.String("base", "/etc/hosts", "the machine's hosts file, copied at the top")
	dns := flag.String("dns", "", "address (IP:port) to answer the pods' DNS queries on (UDP); empty: no DNS server")
	clusterDNS := flag.String("cluster-dns", "", "the kubelet's clusterDNS: made the ClusterIP of Service kube-system/kube-dns, whose endpoint is -dns")
	var public []publicDomain
	flag.Func("public-domain", "DOMAIN=IP: every name under DOMAIN resolves to IP (repeatable), as a landscape's wildcard record for its clouds' public endpoints", func(s string) error {
		p, err := parsePublicDomain(s)
		public = append(public, p)
		return err
	})
	flag.Parse()
	if *kubeconfig == "" || *hosts == "" {
		fmt.Fprintln(os.Stderr, "dns-standin: -kubeconfig and -hosts are required")
		os.Exit(2)
	}
	var at netip.AddrPort
	if *dns != "" {
		var err error
		if at, err = netip.ParseAddrPort(*dns); err != nil {
			fmt.Fprintf(os.Stderr, "dns-standin: -dns %q: want IP:port, e.g. 10.244.0.1:53\n", *dns)
			os.Exit(2)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, *kubeconfig, *hosts, *base, dnsServer{at: at, clusterIP: *clusterDNS, public: public}); err != nil {
		fmt.Fprintln(os.Stderr, "dns-standin:", err)
		os.Exit(1)
	}
}

// dnsServer is what -dns, -cluster-dns and -public-domain ask for.
type dnsServer struct {
	at        netip.AddrPort // invalid: no DNS server
	clusterIP string
	public    []publicDomain
}

func run(ctx context.Context, kubeconfig, hosts, base string, dns dnsServer) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	machine, err := os.ReadFile(base) //nolint:gosec // the operator names it
	if err != nil {
		return err
	}
	f := informers.NewSharedInformerFactory(cs, 0)
	svcs := f.Core().V1().Services()
	slices := f.Discovery().V1().EndpointSlices()
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	for _, i := range []cache.SharedIndexInformer{svcs.Informer(), slices.Informer()} {
		if _, err := i.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: poke, UpdateFunc: func(_, n any) { poke(n) }, DeleteFunc: poke,
		}); err != nil {
			return err
		}
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), svcs.Informer().HasSynced, slices.Informer().HasSynced) {
		return fmt.Errorf("the Services' and EndpointSlices' caches did not sync")
	}
	if dns.at.IsValid() {
		conn, err := net.ListenPacket("udp", dns.at.String())
		if err != nil {
			return fmt.Errorf("cannot answer DNS on %s: %w", dns.at, err)
		}
		n := &names{services: svcs.Lister(), slices: slices.Lister(), public: dns.public}
		go func() {
			if err := serveDNS(ctx, conn, n); err != nil {
				fmt.Fprintln(os.Stderr, "dns-standin: DNS:", err)
			}
		}()
		if dns.clusterIP != "" {
			if err := clusterDNSService(ctx, cs, dns.clusterIP, dns.at); err != nil {
				return err
			}
		}
		fmt.Println("answering DNS on", dns.at, "for the Services and", len(dns.public), "public domain(s); cluster DNS", dns.clusterIP)
	}
	fmt.Println("keeping", hosts, "with the ClusterIPs of the Services")
	var last []byte
	for {
		b, err := render(machine, svcs.Lister(), slices.Lister())
		if err != nil {
			return err
		}
		if !bytes.Equal(b, last) {
			if err := writeInPlace(hosts, b); err != nil {
				return err
			}
			last = b
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			// Coalesce a burst of events (core creates several Services at once).
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// render is the machine's hosts file, then a line per address of each
// Service (its ClusterIP, or a headless one's ready endpoints), sorted so
// that an unchanged set of Services writes nothing.
func render(machine []byte, services listersv1.ServiceLister, slices discoverylisters.EndpointSliceLister) ([]byte, error) {
	all, err := services.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, s := range all {
		ips, err := addresses(s, slices)
		if err != nil {
			return nil, err
		}
		n := s.Name + "." + s.Namespace
		for _, ip := range ips {
			lines = append(lines, fmt.Sprintf("%s\t%s %s.svc %s.svc.cluster.local", ip, n, n, n))
		}
	}
	sort.Strings(lines)
	var b bytes.Buffer
	b.Write(machine)
	if len(machine) > 0 && machine[len(machine)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString("# The cluster's Services (dns-standin)\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return b.Bytes(), nil
}

// addresses are what cluster DNS answers for the Service: its ClusterIP, or
// for a headless Service the addresses of its ready endpoints (none while
// no pod is ready: a caller retries, as it would against CoreDNS).
func addresses(s *corev1.Service, slices discoverylisters.EndpointSliceLister) ([]string, error) {
	switch {
	case s.Spec.Type == corev1.ServiceTypeExternalName:
		return nil, nil
	case s.Spec.ClusterIP != corev1.ClusterIPNone:
		if s.Spec.ClusterIP == "" {
			return nil, nil
		}
		return []string{s.Spec.ClusterIP}, nil
	}
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: s.Name})
	all, err := slices.EndpointSlices(s.Namespace).List(sel)
	if err != nil {
		return nil, err
	}
	var ips []string
	for _, sl := range all {
		for _, e := range sl.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			ips = append(ips, e.Addresses...)
		}
	}
	return ips, nil
}

// writeInPlace rewrites the file's content without replacing the file: a
// bind mount holds the inode, so a rename would not be seen through it.
func writeInPlace(file string, b []byte) error {
	return os.WriteFile(file, b, 0o644) //nolint:gosec // a hosts file is world-readable
}
