package integration

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/endpoints"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/regions"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/services"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// The OpenStack case of the fault suite (#54): a cloud's Keystone, then its
// Nova, unreachable for a while.

// outage is how long a service stays unreachable: long enough for the
// controllers' backoff (1 s doubling to 60 s per resource) to reach its
// longer steps, so that the attempts counted show its shape.
const outage = 60 * time.Second

// TestFaultOpenStackUnreachable: a cloud's Keystone, and another cloud's
// Nova, refuse connections for the outage. Each cloud's provider reaches
// its Keystone and Nova through links the test can cut, as a landscape's
// provider reaches a cloud's public endpoints (a region of its own in the
// local Keystone, whose catalog names the links). For each:
//
//   - the cloud's resource on the lost service says on its Synced condition
//     that the service cannot be reached, naming its address; one created
//     meanwhile waits, saying the same (the function puts that reason on
//     the claim: TestCloudSaysWhyItsObjectsWait);
//   - the provider tries again with a backoff, not at its poll rate: the
//     outage's second half sees fewer failed requests than its first, and
//     at most one a second for the cloud (its metric
//     cobaltcore_provider_openstack_requests_total, code "error");
//   - the cloud's resource on the other service stays Ready and Synced (a
//     Keystone outage does not stop Nova: the session's token stays valid);
//   - the service back: both resources Ready within recoverBound, and each
//     exists once in the cloud (no second project or aggregate from the
//     retries).
func TestFaultOpenStackUnreachable(t *testing.T) {
	t.Parallel()
	h := withOpenStack(t)
	for _, lost := range []string{"Keystone", "Nova"} {
		t.Run(lost+" unreachable", func(t *testing.T) {
			t.Parallel()
			cloudLosesAService(t, h, lost)
		})
	}
}

func cloudLosesAService(t *testing.T, h *harness, lost string) {
	ctx := context.Background()
	region := h.name("lost-" + strings.ToLower(lost))
	keystone, nova := cloudLink(t, h, region)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: region, Namespace: "crossplane-system"}, StringData: map[string]string{
		"clouds.yaml": strings.Replace(strings.Replace(cloudsYAML, keystoneURL, keystone.url("/v3"), 1), "region_name: RegionOne", "region_name: "+region, 1),
	}}
	h.create(t, secret)
	h.create(t, cloudsYAMLConfig(region, "crossplane-system", region, region))
	t.Cleanup(func() {
		_ = h.kube.Delete(context.Background(), cloudsYAMLConfig(region, "", "", ""))
		_ = h.kube.Delete(context.Background(), secret)
	})

	project := func(name string) *keystonev1alpha1.Project {
		return &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.ProjectSpec{
			ClusterManagedResourceSpec: managedBy(region),
			ForProvider:                keystonev1alpha1.ProjectParameters{Name: name, Description: "a cloud's project through an outage", Tags: []string{"cobaltcore-test"}},
		}}
	}
	aggregate := func(name string) *novav1alpha1.Aggregate {
		return &novav1alpha1.Aggregate{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: novav1alpha1.AggregateSpec{
			ClusterManagedResourceSpec: managedBy(region),
			ForProvider:                novav1alpha1.AggregateParameters{Name: name, AvailabilityZone: name},
		}}
	}
	p1, a1 := project(region+"-project"), aggregate(region+"-az")
	p2, a2 := project(region+"-new-project"), aggregate(region+"-new-az")
	t.Cleanup(func() {
		for _, mg := range []resource.Managed{p1, a1, p2, a2} {
			_ = h.kube.Delete(context.Background(), mg)
		}
	})
	h.create(t, p1)
	h.create(t, a1)
	h.waitReady(t, p1)
	h.waitReady(t, a1)

	l, down, created, up := keystone, resource.Managed(p1), resource.Managed(p2), resource.Managed(a1)
	if lost == "Nova" {
		l, down, created, up = nova, a1, a2, p1
	}
	l.cut()
	cutAt, before := time.Now(), failedRequests(t, l.addr)
	h.create(t, created)
	msg := h.waitSyncError(t, down, l.addr, "connection refused")
	t.Logf("%s's %s says: %s", lost, down.GetName(), msg)
	h.waitSyncError(t, created, l.addr, "connection refused")

	// Half-way and at the end of the outage, what the provider tried.
	time.Sleep(time.Until(cutAt.Add(outage / 2)))
	half := failedRequests(t, l.addr)
	time.Sleep(time.Until(cutAt.Add(outage)))
	first, second := half-before, failedRequests(t, l.addr)-half
	perSecond := int64(outage / 2 / time.Second)
	t.Logf("%s: %d failed requests in the outage's first %s, %d in its second (at the poll interval, %s, each of its 2 resources alone would make %d, with the client's retries %d)",
		lost, first, outage/2, second, pollInterval, int64(outage/2/pollInterval), 4*int64(outage/2/pollInterval))
	if second >= first || second > perSecond {
		t.Errorf("the provider sent %s %d failing requests in the outage's last %s (%d in its first), want fewer than in the first and at most one a second: it does not back off", lost, second, outage/2, first)
	}
	for _, ct := range []xpv2.ConditionType{xpv2.TypeReady, xpv2.TypeSynced} {
		if got, err := h.condition(t, up, ct); err != nil || got.Status != corev1.ConditionTrue {
			t.Errorf("%T %s while %s was unreachable: %s=%s %q (%v), want True", up, up.GetName(), lost, ct, got.Status, got.Message, err)
		}
	}

	l.restore(t)
	back := time.Now()
	h.waitReadyWithin(t, recoverBound, down)
	h.waitReadyWithin(t, recoverBound-time.Since(back), created)
	t.Logf("%s back: the cloud's resources Ready %s later", lost, time.Since(back).Round(time.Second))

	sc, err := h.cloud.Service(openstack.ServiceIdentity)
	if err != nil {
		t.Fatal(err)
	}
	// Each object of the cloud exists once: the three it has.
	for _, mg := range []resource.Managed{p1, a1, created} {
		var n int
		switch mg := mg.(type) {
		case *keystonev1alpha1.Project:
			pages, err := projects.List(sc, projects.ListOpts{Name: mg.Name}).AllPages(ctx)
			if err != nil {
				t.Fatal(err)
			}
			found, err := projects.ExtractProjects(pages)
			if err != nil {
				t.Fatal(err)
			}
			n = len(found)
		case *novav1alpha1.Aggregate:
			all, err := h.clients(t).nova.ListAggregates(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, got := range all {
				if got.Name == mg.Name {
					n++
				}
			}
		}
		if n != 1 {
			t.Errorf("%d of %T %s in the cloud, want 1", n, mg, mg.GetName())
		}
	}
}

// recoverBound is how long a cloud's resources may take to be Ready once
// its service answers again: the longest step of the controllers' backoff
// (60 s), a reconcile and a poll, on two cores shared with the other tests.
const recoverBound = 90 * time.Second

// cloudLink gives the local OpenStack a region of its own for one cloud,
// whose Keystone (identity endpoint and auth URL) and Nova (compute
// endpoint) the provider reaches through links the test can cut. The
// region and its endpoints go when the test ends.
func cloudLink(t *testing.T, h *harness, region string) (keystone, nova *link) {
	t.Helper()
	ctx := context.Background()
	sc, err := h.cloud.Service(openstack.ServiceIdentity)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := regions.Create(ctx, sc, regions.CreateOpts{ID: region, Description: "a cloud of the fault suite"}).Extract(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = regions.Delete(context.Background(), sc, region).ExtractErr() })
	for _, kind := range []string{"identity", "compute"} {
		svc, public := serviceEndpoint(t, sc, kind)
		u, err := url.Parse(public)
		if err != nil {
			t.Fatal(err)
		}
		l := newLink(t, u.Host)
		u.Host = l.addr
		ep, err := endpoints.Create(ctx, sc, endpoints.CreateOpts{Availability: gophercloud.AvailabilityPublic, Name: kind, Region: region, URL: u.String(), ServiceID: svc}).Extract()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = endpoints.Delete(context.Background(), sc, ep.ID).ExtractErr() })
		if kind == "identity" {
			keystone = l
		} else {
			nova = l
		}
	}
	return keystone, nova
}

// serviceEndpoint returns the ID of the catalog's service of a type and its
// public URL in RegionOne.
func serviceEndpoint(t *testing.T, sc *gophercloud.ServiceClient, kind string) (id, public string) {
	t.Helper()
	ctx := context.Background()
	pages, err := services.List(sc, services.ListOpts{ServiceType: kind}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	svcs, err := services.ExtractServices(pages)
	if err != nil || len(svcs) == 0 {
		t.Fatalf("no %s service in the local Keystone: %v", kind, err)
	}
	pages, err = endpoints.List(sc, endpoints.ListOpts{ServiceID: svcs[0].ID, Availability: gophercloud.AvailabilityPublic, RegionID: "RegionOne"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eps, err := endpoints.ExtractEndpoints(pages)
	if err != nil || len(eps) == 0 {
		t.Fatalf("no public %s endpoint in RegionOne: %v", kind, err)
	}
	return svcs[0].ID, eps[0].URL
}

// A link forwards TCP connections to a service until it is cut; cut, it
// listens no more, so the kernel refuses every connection as it does on a
// host whose service is down, and the connections under way break.
type link struct {
	addr, target string

	mu    sync.Mutex
	ln    net.Listener // nil while cut
	conns map[net.Conn]struct{}
}

func newLink(t *testing.T, target string) *link {
	t.Helper()
	l := &link{target: target, conns: map[net.Conn]struct{}{}}
	low := ephemeralLow(t)
	var err error
	for try := 0; try < 50; try++ {
		// A port below the kernel's ephemeral range: the port the link
		// gives up while cut must still be free when it listens again,
		// and in the range another test's listener on port 0 or an
		// outgoing connection may take it meanwhile (CI saw "address
		// already in use" on a restore). From 20000 up: the local
		// plane's own fixed ports are below (18xxx).
		l.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(linkPorts+rand.IntN(low-linkPorts)))
		if err = l.listen(); err == nil {
			t.Cleanup(l.cut)
			return l
		}
	}
	t.Fatalf("the link to %s finds no free port below %d: %v", target, low, err)
	return nil
}

// linkPorts is the first port a link may listen on.
const linkPorts = 20000

// ephemeralLow is the first port of the kernel's ephemeral range, from
// which it picks the ports of listeners on port 0 and of outgoing
// connections.
func ephemeralLow(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatalf("the kernel's ephemeral port range: %v", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		t.Fatalf("the kernel's ephemeral port range %q: want two ports", b)
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= linkPorts+1000 {
		t.Fatalf("the kernel's ephemeral port range %q: the fault suite's links want it to start above %d (sysctl net.ipv4.ip_local_port_range)", b, linkPorts+1000)
	}
	return low
}

func (l *link) listen() error {
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.ln, l.addr = ln, ln.Addr().String()
	l.mu.Unlock()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go l.serve(conn)
		}
	}()
	return nil
}

// url is the link's address as an https URL with path.
func (l *link) url(path string) string { return "https://" + l.addr + path }

func (l *link) serve(conn net.Conn) {
	up, err := net.Dial("tcp", l.target)
	if err != nil {
		_ = conn.Close()
		return
	}
	if !l.track(conn, up) {
		return
	}
	defer l.untrack(conn, up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, conn)
	go pipe(conn, up)
	<-done
}

// track keeps a connection's two ends to break them when the link is cut;
// on a link cut meanwhile it closes them and reports false.
func (l *link) track(cs ...net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		if l.ln == nil {
			_ = c.Close()
			continue
		}
		l.conns[c] = struct{}{}
	}
	return l.ln != nil
}

func (l *link) untrack(cs ...net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range cs {
		delete(l.conns, c)
		_ = c.Close()
	}
}

// cut stops listening and breaks the connections under way.
func (l *link) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		_ = l.ln.Close()
		l.ln = nil
	}
	for c := range l.conns {
		_ = c.Close()
		delete(l.conns, c)
	}
}

// restore listens again on the link's address.
func (l *link) restore(t *testing.T) {
	t.Helper()
	if err := l.listen(); err != nil {
		t.Fatalf("the link to %s cannot listen on %s again: %v", l.target, l.addr, err)
	}
}

// failedRequests is how many of the provider's OpenStack requests to a
// host failed without an answer, from its metric
// cobaltcore_provider_openstack_requests_total{code="error"}: what an
// operator's dashboard reads.
func failedRequests(t *testing.T, host string) int64 {
	t.Helper()
	return int64(counterSum(t, "cobaltcore_provider_openstack_requests_total", func(l map[string]string) bool {
		return l["host"] == host && l["code"] == "error"
	}))
}

// counterSum is the sum of a counter of this process's metrics (the
// provider's, controller-runtime's) over the series whose labels match.
func counterSum(tb testing.TB, name string, match func(labels map[string]string) bool) float64 {
	tb.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if match(labels) {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return n
}
