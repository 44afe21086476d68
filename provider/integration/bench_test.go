package integration

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	novav1alpha1 "github.com/c5c3/consumer-plane/apis/nova/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// benchMix is how many of each kind the convergence benchmark declares.
var benchMix = []struct {
	kind  string
	count int
}{{"keystone/Project", 200}, {"nova/Aggregate", 150}, {"cinder/VolumeType", 150}}

// BenchmarkConverge500 declares 500 managed resources (projects,
// aggregates, volume types) and measures, against the local OpenStack:
// the time until all are Ready, the Keystone tokens and API calls of the
// provider per steady-state poll, and the process RSS; then a plain
// gophercloud loop makes the same create and observe calls in the same run.
// Run: make bench-provider (see docs/benchmarks.md). One iteration is the
// whole experiment, so run it with -benchtime=1x.
func BenchmarkConverge500(b *testing.B) {
	h := withOpenStack(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		run := fmt.Sprintf("bench%d-%s", i, h.run)

		// The same calls from a plain gophercloud loop first, on an idle
		// cloud: one session, create each object, observe each once.
		plain, plainCalls, plainTokens := plainLoop(b, run)

		// The provider.
		reconcilesBefore, requestsBefore := benchReconciles(b), kubetest.APIRequests(b, h.config)
		profiled := profileAPIServer(b, h)
		start, before := time.Now(), openstack.ReadCounts()
		var mrs []resource.Managed
		for _, m := range benchMix {
			k := kindByName(m.kind)
			for j := 0; j < m.count; j++ {
				mg := k.newMR(fmt.Sprintf("%s-%s-%03d", strings.ToLower(strings.SplitN(m.kind, "/", 2)[1]), run, j), "bench")
				if err := h.kube.Create(ctx, mg); err != nil {
					b.Fatal(err)
				}
				mrs = append(mrs, mg)
			}
		}
		waitAllReady(b, h, mrs)
		converge, created := time.Since(start), openstack.ReadCounts().Sub(before)
		reconciles := benchReconciles(b) - reconcilesBefore
		requests := kubetest.APIRequests(b, h.config).Sub(requestsBefore)
		<-profiled
		b.Logf("API server requests while converging, by verb and resource (the benchmark's own watch and creates included): %s", requests)
		lastCreate := lastCreateRecorded(b, h, mrs).Sub(start)

		// Steady state: several poll intervals with nothing to do.
		const polls = 5
		before = openstack.ReadCounts()
		time.Sleep(polls * pollInterval)
		steady := openstack.ReadCounts().Sub(before)
		rss := rssMB()

		b.ReportMetric(converge.Seconds(), "provider-converge-s")
		b.ReportMetric(float64(created.Requests), "provider-converge-calls")
		b.ReportMetric(float64(created.Tokens), "provider-converge-tokens")
		b.ReportMetric(float64(reconciles)/float64(len(mrs)), "provider-reconciles/resource")
		b.ReportMetric(lastCreate.Seconds(), "provider-last-create-s")
		b.ReportMetric(requests.Total()/float64(len(mrs)), "apiserver-requests/resource")
		b.ReportMetric(float64(steady.Tokens)/polls, "provider-tokens/poll")
		b.ReportMetric(float64(steady.Requests)/polls, "provider-calls/poll")
		b.ReportMetric(rss, "process-rss-MB")
		b.ReportMetric(plain.Seconds(), "gophercloud-loop-s")
		b.ReportMetric(float64(plainCalls), "gophercloud-loop-calls")
		b.ReportMetric(float64(plainTokens), "gophercloud-loop-tokens")

		// Clean up without 500 deletes through the provider: orphan the
		// resources, then delete their objects directly.
		b.StopTimer()
		for _, mg := range mrs {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(mg), mg)
			mg.(resource.LegacyManaged).SetDeletionPolicy(xpv2.DeletionOrphan)
			_ = h.kube.Update(ctx, mg)
			_ = h.kube.Delete(ctx, mg)
		}
		for _, mg := range mrs {
			waitGoneB(b, h, mg)
			deleteDirectly(ctx, h, mg)
		}
		b.StartTimer()
	}
}

// plainLoop makes the provider's create and observe calls directly and
// deletes what it made (not timed).
func plainLoop(b *testing.B, run string) (time.Duration, int64, int64) {
	ctx := context.Background()
	before := openstack.ReadCounts()
	start := time.Now()
	c, err := providerconfig.ParseCredentials(openstackv1alpha1.CredentialsFormatCloudsYAML, "admin", []byte(cloudsYAML))
	if err != nil {
		b.Fatal(err)
	}
	c.CABundle = openstackCA
	s, err := openstack.NewCache(1, time.Hour).Session(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	ks, _ := openstack.NewIdentity(s)
	nova, _ := openstack.NewCompute(s)
	cinder, _ := openstack.NewBlockStorage(s)
	var projectIDs, typeIDs []string
	var aggIDs []int
	public := true
	for _, m := range benchMix {
		for j := 0; j < m.count; j++ {
			name := fmt.Sprintf("plain-%s-%d-%s", strings.SplitN(m.kind, "/", 2)[1], j, run)
			switch m.kind {
			case "keystone/Project":
				p, err := ks.CreateProject(ctx, projects.CreateOpts{Name: name, DomainID: "default", Description: "bench", Tags: []string{"cobaltcore-test"}})
				if err != nil {
					b.Fatal(err)
				}
				projectIDs = append(projectIDs, p.ID)
			case "nova/Aggregate":
				a, err := nova.CreateAggregate(ctx, aggregates.CreateOpts{Name: name, AvailabilityZone: "az-" + name})
				if err != nil {
					b.Fatal(err)
				}
				if err := nova.SetAggregateMetadata(ctx, a.ID, map[string]any{"pool": "bench"}); err != nil {
					b.Fatal(err)
				}
				aggIDs = append(aggIDs, a.ID)
			case "cinder/VolumeType":
				if _, err := cinder.Backends(ctx); err != nil { // the provider checks the backend before creating
					b.Fatal(err)
				}
				v, err := cinder.CreateVolumeType(ctx, volumetypes.CreateOpts{Name: name, IsPublic: &public,
					ExtraSpecs: map[string]string{"tier": "bench", "volume_backend_name": "ceph-st-pool-a"}})
				if err != nil {
					b.Fatal(err)
				}
				typeIDs = append(typeIDs, v.ID)
			}
		}
	}
	for _, id := range projectIDs {
		if _, err := ks.GetProject(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	for _, id := range aggIDs {
		if _, err := nova.GetAggregate(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	for _, id := range typeIDs {
		if _, err := cinder.GetVolumeType(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
	took, counts := time.Since(start), openstack.ReadCounts().Sub(before)
	for _, id := range projectIDs {
		_ = ks.DeleteProject(ctx, id)
	}
	for _, id := range aggIDs {
		_ = nova.DeleteAggregate(ctx, id)
	}
	for _, id := range typeIDs {
		_ = cinder.DeleteVolumeType(ctx, id)
	}
	return took, counts.Requests, counts.Tokens
}

func deleteDirectly(ctx context.Context, h *harness, mg resource.Managed) {
	c := clientsOf(h)
	id := meta.GetExternalName(mg)
	switch mg.(type) {
	case *keystonev1alpha1.Project:
		_ = c.keystone.DeleteProject(ctx, id)
	case *novav1alpha1.Aggregate:
		n, _ := strconv.Atoi(id)
		_ = c.nova.DeleteAggregate(ctx, n)
	case *cinderv1alpha1.VolumeType:
		_ = c.cinder.DeleteVolumeType(ctx, id)
	}
}

func clientsOf(h *harness) clients {
	k, _ := openstack.NewIdentity(h.cloud)
	n, _ := openstack.NewCompute(h.cloud)
	c, _ := openstack.NewBlockStorage(h.cloud)
	return clients{keystone: k, nova: n, cinder: c}
}

func kindByName(name string) kindCase {
	for _, k := range kinds {
		if k.kind == name {
			return k
		}
	}
	panic("no kind " + name)
}

// waitAllReady waits until every one of mrs is Ready, reading them from a
// watch of their kinds, as kubectl wait does. (Reading each object with a
// GET every 20 ms, as it did before, sent the API server 50 requests a
// second that competed for the same two cores as the provider measured.)
func waitAllReady(b *testing.B, h *harness, mrs []resource.Managed) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := cache.New(h.config, cache.Options{Scheme: h.kube.Scheme()})
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }() //nolint:errcheck // ends with ctx
	if !c.WaitForCacheSync(ctx) {
		b.Fatal("the watch of the benchmark's kinds did not sync")
	}
	deadline := time.Now().Add(20 * time.Minute)
	for i := 0; i < len(mrs); {
		mg := mrs[i]
		if err := c.Get(ctx, client.ObjectKeyFromObject(mg), mg); err == nil &&
			mg.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue {
			i++ // the next; one not Ready yet is read again after a pause
			continue
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s not ready: %+v", mg.GetName(), mg.GetCondition(xpv2.TypeSynced))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// profileAPIServer records, when COBALTCORE_BENCH_APISERVER_PROFILE names
// a file, a CPU profile of the API server over the next 40 s into it (go
// tool pprof reads it). The returned channel closes when it is written.
func profileAPIServer(b *testing.B, h *harness) <-chan struct{} {
	done := make(chan struct{})
	file := os.Getenv("COBALTCORE_BENCH_APISERVER_PROFILE")
	if file == "" {
		close(done)
		return done
	}
	cs, err := kubernetes.NewForConfig(h.config)
	if err != nil {
		b.Fatal(err)
	}
	go func() {
		defer close(done)
		raw, err := cs.RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", "40").Timeout(time.Minute).DoRaw(context.Background())
		if err == nil {
			err = os.WriteFile(file, raw, 0o600)
		}
		if err != nil {
			b.Errorf("profiling the API server: %v", err)
		}
	}()
	return done
}

// benchReconciles is how many reconciles the benchmark's kinds have run in
// this process (controller-runtime's controller_runtime_reconcile_total).
func benchReconciles(b *testing.B) float64 {
	return counterSum(b, "controller_runtime_reconcile_total", func(l map[string]string) bool { return benchController(l["controller"]) })
}

func benchController(name string) bool {
	for _, m := range benchMix {
		// managed.ControllerName: "managed/" + the lower-cased group kind.
		if strings.HasPrefix(name, "managed/"+strings.ToLower(strings.SplitN(m.kind, "/", 2)[1])+".") {
			return true
		}
	}
	return false
}

// lastCreateRecorded is when the provider recorded its last create (the
// external-create-succeeded annotations, to the second).
func lastCreateRecorded(b *testing.B, h *harness, mrs []resource.Managed) time.Time {
	var last time.Time
	for _, mg := range mrs {
		if err := h.kube.Get(context.Background(), client.ObjectKeyFromObject(mg), mg); err != nil {
			b.Fatal(err)
		}
		if t := meta.GetExternalCreateSucceeded(mg); t.After(last) {
			last = t
		}
	}
	return last
}

// steadyPerPoll is how much count grows per poll interval while the
// provider, with every resource converged, has nothing to do.
func steadyPerPoll(count func() int64) float64 {
	before := count()
	time.Sleep(steadyPolls * pollInterval)
	return float64(count()-before) / steadyPolls
}

// steadyPolls is how many polls steadyPerPoll counts over.
const steadyPolls = 5

// deleteAllB deletes the resources through the provider and waits until
// they are gone.
func deleteAllB(b *testing.B, h *harness, mrs []resource.Managed) {
	for _, mg := range mrs {
		_ = h.kube.Delete(context.Background(), mg)
	}
	for _, mg := range mrs {
		waitGoneB(b, h, mg)
	}
}

func waitGoneB(b *testing.B, h *harness, mg resource.Managed) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		if err := h.kube.Get(context.Background(), client.ObjectKeyFromObject(mg), mg); err != nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.Fatalf("%s not deleted", mg.GetName())
}

// rssMB is this process's resident set (the provider's controllers run in
// it, with the test's own clients: an upper bound of the provider's).
func rssMB() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
