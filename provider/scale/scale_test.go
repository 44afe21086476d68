// Package scale measures the provider at landscape scale (#55): the
// provider binary, as its Deployment runs it, against a real kube-apiserver
// holding the managed resources of N clouds, each cloud its own stub
// OpenStack (test/openstackstub: its own address, CA, Keystone and tokens,
// answering at once). Run: make bench-scale (docs/benchmarks.md).
package scale

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/scale/ovnstub"
	"github.com/c5c3/consumer-plane/test/kubetest"
	"github.com/c5c3/consumer-plane/test/openstackstub"
)

// TestMain starts the API server only for the benchmark: make test runs
// this package too, and has nothing to measure here.
func TestMain(m *testing.M) {
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		os.Exit(m.Run())
	}
	os.Exit(kubetest.Main(m, "../package/crds"))
}

// BenchmarkLandscape runs the provider against COBALTCORE_SCALE_CLOUDS
// clouds (default 500) of 14 managed resources each (10 without OVN), with the provider
// flags of COBALTCORE_SCALE_FLAGS (default: none, the binary's defaults),
// and reports, in order:
//
//   - converge_s: from the provider's start to every resource Ready (the
//     catch-up of a provider that starts on a landscape), and
//     converge_cpu_s, the CPU the provider used meanwhile;
//   - over a steady window of two poll intervals: rss_MiB (and peak_MiB),
//     cpu_cores, observes/s (the provider's looks at its objects in the
//     clouds), reconciles/s (controller-runtime's count, which includes the
//     reconciles the rate limiter turned back), api_req/s (the provider's requests to the
//     API server), auths/cloud/min and calls/cloud/min (what each cloud's
//     Keystone and APIs are asked), writes/cloud/min (which must be zero:
//     the benchmark fails on a write in the steady window);
//   - age_p50_s, age_p99_s, age_max_s: at the window's end, the time since
//     each resource was last read from its cloud (a resource looked at once
//     per poll interval is at most that old);
//   - new1_first_s, new1_ready_s: one new cloud created beside the steady
//     ones: until its cloud is first asked anything, and until its ten
//     resources are Ready;
//   - new100_p50_s, new100_max_s: 100 new clouds at once, until each is
//     Ready;
//   - drift_s: an aggregate's metadata changed behind the provider's back,
//     until the provider sets it back; with OVN, ovn_drift_s, an HA chassis
//     priority changed; with Ceph (COBALTCORE_SCALE_CEPH clouds' storage
//     in the local Ceph), ceph_drift_s, a pool's quota changed, and a
//     command that changes the Ceph in the steady window fails it;
//   - restart_s: the provider killed and started again, until every
//     resource was read from its cloud again.
//
// With COBALTCORE_SCALE_CONVERGE_WITHIN set, a landscape not Ready by then
// ends the experiment with how far it got (behind).
//
// One iteration is the whole experiment: run it with -benchtime=1x.
func BenchmarkLandscape(b *testing.B) {
	kube, n, flags, poll, kubeconfig := setUp(b)
	ctx := context.Background()

	for i := 0; i < b.N; i++ {
		start := time.Now()
		land := newLandscape(b, n)
		steady := fmt.Sprintf("steady-%d", i)
		mustTB(b, createClouds(ctx, kube, steady, land, land.Clouds, 16))
		say(b, "%d clouds (%d managed resources) created in %s", n, resourcesIn(land.Clouds), time.Since(start).Round(time.Second))

		// A provider starting on a landscape: everything to catch up on.
		requestsBefore := kubetest.APIRequests(b, kubetest.Config(b))
		p := startProcess(b, kubeconfig, flags)
		started := time.Now()
		timeout := deadlineFor(resourcesIn(land.Clouds))
		if convergeWithin > 0 {
			timeout = convergeWithin
		}
		_, err := waitBatchReady(b, kubetest.Config(b), p, steady, n, timeout)
		if nr := (*notReady)(nil); convergeWithin > 0 && errors.As(err, &nr) {
			behind(ctx, b, kube, p, land, poll, nr, i)
			continue
		}
		mustTB(b, err)
		converge := time.Since(started)
		// What catching up asked of the API server (the provider's requests,
		// and the harness's watches of the resources).
		requests := kubetest.APIRequests(b, kubetest.Config(b)).Sub(requestsBefore)
		say(b, "API server requests while it converged: %.0f (%.1f a second), the most frequent: %s",
			requests.Total(), requests.Total()/converge.Seconds(), requests.Top(8, converge.Seconds()))
		conflicts := requests.Conflicts()
		say(b, "of them refused on a conflict: %.0f, the most: %s; reads that waited for the cache to hold the provider's own write: %s", conflicts.Total(), conflicts.Top(6, 1), p.cacheWaits())
		// What catching up cost the provider: the work that grows with the
		// landscape while every cloud's resources start to use its
		// ProviderConfig (counting its users, among others).
		convergeCPU := p.cpu().Seconds()
		say(b, "every resource Ready %s after the provider started, having used %.0f CPU-seconds (%.2f cores)",
			converge.Round(time.Second), convergeCPU, convergeCPU/converge.Seconds())
		b.ReportMetric(convergeCPU, "converge_cpu_s")

		// The steady state: two poll intervals after a first one to settle.
		time.Sleep(poll)
		window := 2 * poll
		before, cephBefore := sample(b, p, land), p.cephCommands(b)
		time.Sleep(window)
		after, cephAfter := sample(b, p, land), p.cephCommands(b)
		ages := ageQuantiles(land.Clouds[:n], after.at)
		rss, peak := p.rss()
		minutes := window.Minutes()
		steadyCPU := (after.cpu - before.cpu).Seconds() / window.Seconds()
		say(b, "steady: RSS %d MiB (peak %d), %.2f cores, %.1f observes/s, %.1f reconciles/s, %.1f API requests/s, %.2f authentications and %.1f calls per cloud per minute; since last read: p50 %.0fs p99 %.0fs max %.0fs",
			rss>>20, peak>>20, steadyCPU, float64(after.observes-before.observes)/window.Seconds(), (after.reconciles-before.reconciles)/window.Seconds(), (after.apiRequests-before.apiRequests)/window.Seconds(),
			float64(after.auths-before.auths)/float64(n)/minutes, float64(after.calls-before.calls)/float64(n)/minutes, ages[0], ages[1], ages[2])

		// A converged landscape has nothing to change: a write in the window
		// is churn (stop 79's stub gave credentials no project, and every
		// poll made them again; the figures alone did not show it).
		if w := after.writes - before.writes; w > 0 {
			b.Errorf("the provider wrote %d times to the clouds in the steady window (%.2f per cloud per minute): steady state must change nothing", w, float64(w)/float64(n)/minutes)
		}
		if land.ovn != nil {
			// A connection per cloud and database, kept: a reconnect in the
			// steady window is a handshake (TLS, schema, leader check) per
			// poll, which a landscape's OVN servers would pay for.
			say(b, "steady: OVN connections open %.2f per cloud, %d opened in the window", float64(after.ovnOpen)/float64(n), after.ovnConnects-before.ovnConnects)
			if c := after.ovnConnects - before.ovnConnects; c > 0 {
				b.Errorf("the provider connected %d times to the clouds' OVN databases in the steady window: a connection must be kept", c)
			}
			b.ReportMetric(float64(after.ovnOpen)/float64(n), "ovn_conns/cloud")
		}

		if cephShare > 0 {
			cephSteady(b, cephBefore, cephAfter, minutes)
		}

		profile, top := p.heapTop(25)
		say(b, "heap in use at the steady window's end (profile %s):\n%s", profile, top)

		// What the API server was asked meanwhile: the provider is its only
		// client in the window (the harness only reads its metrics).
		say(b, "API server requests a second, the most frequent: %s", after.apiserver.Sub(before.apiserver).Top(6, window.Seconds()))
		say(b, "events recorded in the steady window: %s", eventsSince(ctx, b, kube, before.at))

		// One new cloud beside the steady ones, then 100 at once.
		first, ready, err := newClouds(ctx, b, kube, p, land, fmt.Sprintf("new1-%d", i), 1, newCloudsWithin(1))
		mustTB(b, err)
		say(b, "one new cloud: first asked %.1fs, Ready %.1fs after its objects were created", first[0], ready[0])
		_, ready100, err := newClouds(ctx, b, kube, p, land, fmt.Sprintf("new100-%d", i), 100, newCloudsWithin(100))
		mustTB(b, err)
		say(b, "100 new clouds: Ready p50 %.1fs, max %.1fs after their objects were created", quantile(ready100, 0.5), ready100[len(ready100)-1])

		// A drift in one cloud, repaired.
		drift := repairTime(b, p, land.Clouds[0])
		say(b, "an aggregate's metadata changed behind the provider: set back %.1fs later", drift)
		if land.ovn != nil {
			ovnDrift := ovnRepairTime(b, p, land.ovn.Clouds[0])
			say(b, "an HA chassis group member's priority changed behind the provider: set back %.1fs later", ovnDrift)
			b.ReportMetric(ovnDrift, "ovn_drift_s")
		}
		if cephShare > 0 {
			cephDrift := cephRepairTime(b, p, poll)
			say(b, "a pool's quota changed behind the provider: set back %.1fs later", cephDrift)
			b.ReportMetric(cephDrift, "ceph_drift_s")
		}

		// The provider killed and started again.
		p.kill()
		restarted := time.Now()
		p = startProcess(b, kubeconfig, flags)
		catchUp := allReadSince(b, p, land, land.Clouds, restarted, deadlineFor(resourcesIn(land.Clouds)))
		say(b, "after a restart, every resource read again within %.1fs", catchUp)

		b.ReportMetric(float64(n), "clouds")
		b.ReportMetric(converge.Seconds(), "converge_s")
		b.ReportMetric(float64(rss>>20), "rss_MiB")
		b.ReportMetric(float64(peak>>20), "peak_MiB")
		b.ReportMetric(steadyCPU, "cpu_cores")
		b.ReportMetric(float64(after.observes-before.observes)/window.Seconds(), "observes/s")
		b.ReportMetric((after.reconciles-before.reconciles)/window.Seconds(), "reconciles/s")
		b.ReportMetric((after.apiRequests-before.apiRequests)/window.Seconds(), "api_req/s")
		b.ReportMetric(float64(after.auths-before.auths)/float64(n)/minutes, "auths/cloud/min")
		b.ReportMetric(float64(after.calls-before.calls)/float64(n)/minutes, "calls/cloud/min")
		b.ReportMetric(float64(after.writes-before.writes)/float64(n)/minutes, "writes/cloud/min")
		b.ReportMetric(ages[0], "age_p50_s")
		b.ReportMetric(ages[1], "age_p99_s")
		b.ReportMetric(ages[2], "age_max_s")
		b.ReportMetric(first[0], "new1_first_s")
		b.ReportMetric(ready[0], "new1_ready_s")
		b.ReportMetric(quantile(ready100, 0.5), "new100_p50_s")
		b.ReportMetric(ready100[len(ready100)-1], "new100_max_s")
		b.ReportMetric(drift, "drift_s")
		b.ReportMetric(catchUp, "restart_s")
		if u := unknownCalls(land); u > 0 {
			b.Errorf("the provider made %d calls the stub does not serve: the measurement misses them", u)
		}
	}
}

// eventsSince says which events were recorded (or recorded again) since t,
// by kind, reason and message, the most first (counted over each event's
// life): a converged landscape has nothing to
// say, and every event is a write to the API server.
func eventsSince(ctx context.Context, tb testing.TB, kube client.Client, t time.Time) string {
	tb.Helper()
	var events corev1.EventList
	mustTB(tb, kube.List(ctx, &events))
	counts := map[string]int32{}
	for _, e := range events.Items {
		if e.LastTimestamp.Time.Before(t) && e.EventTime.Time.Before(t) {
			continue
		}
		counts[e.InvolvedObject.Kind+" "+e.Reason+": "+e.Message] += max(e.Count, 1)
	}
	if len(counts) == 0 {
		return "none"
	}
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
	var out []string
	for _, k := range keys[:min(len(keys), 6)] {
		out = append(out, fmt.Sprintf("%d× %s", counts[k], k))
	}
	return strings.Join(out, "; ")
}

// setUp readies what a benchmark of the provider needs: the API server's
// client, COBALTCORE_SCALE_CLOUDS (default 500), the provider's flags
// (COBALTCORE_SCALE_FLAGS, then extra) and their poll interval, a
// kubeconfig for the provider, the namespace it runs in, and with
// COBALTCORE_SCALE_CEPH the storage pool in the local Ceph (setUpCeph).
func setUp(b *testing.B, extra ...string) (kube client.Client, n int, flags []string, poll time.Duration, kubeconfig string) {
	b.Helper()
	kube = kubetest.Client(b)
	n = envInt("COBALTCORE_SCALE_CLOUDS", 500)
	flags = append(strings.Fields(os.Getenv("COBALTCORE_SCALE_FLAGS")), extra...)
	poll = pollOf(flags)
	if v := os.Getenv("COBALTCORE_SCALE_CONVERGE_WITHIN"); v != "" && convergeWithin == 0 {
		b.Fatalf("CONVERGE_WITHIN (COBALTCORE_SCALE_CONVERGE_WITHIN) %q is not a positive duration: give one such as 40m", v)
	}
	raiseFileLimit(b, uint64(8*n+4096))
	kubeconfig = filepath.Join(b.TempDir(), "kubeconfig")
	mustTB(b, os.WriteFile(kubeconfig, kubetest.Kubeconfig(b, kubetest.Config(b)), 0o600))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "crossplane-system"}}
	if err := kube.Create(context.Background(), ns); err != nil && !kerrors.IsAlreadyExists(err) {
		b.Fatal(err)
	}
	setUpCeph(b, kube)
	return kube, n, flags, poll, kubeconfig
}

// say logs a step's figure, and prints it at once: a run at 5,000 clouds
// takes an hour, and a benchmark's log shows only at its end.
func say(tb testing.TB, format string, args ...any) {
	tb.Helper()
	tb.Logf(format, args...)
	fmt.Fprintf(os.Stderr, "[scale %s] "+format+"\n", append([]any{time.Now().Format(time.TimeOnly)}, args...)...)
}

// pollOf is the --poll of flags, or the binary's default.
func pollOf(flags []string) time.Duration {
	for _, f := range flags {
		if v, ok := strings.CutPrefix(f, "--poll="); ok {
			if d, err := time.ParseDuration(v); err == nil {
				return d
			}
		}
	}
	return time.Minute
}

// A snapshot of the provider and the clouds.
type snapshot struct {
	at                      time.Time
	cpu                     time.Duration
	reconciles, apiRequests float64
	auths, calls, observes  int64
	writes                  int64 // to OpenStack and OVN
	ovnConnects, ovnOpen    int64
	apiserver               kubetest.RequestCounts
}

func sample(tb testing.TB, p *process, land *landscape) snapshot {
	s := snapshot{at: time.Now(), cpu: p.cpu(), apiserver: kubetest.APIRequests(tb, kubetest.Config(tb))}
	sums := p.sums(tb, "controller_runtime_reconcile_total", "rest_client_requests_total")
	s.reconciles, s.apiRequests = sums[0], sums[1]
	for _, c := range land.Clouds {
		n := c.Counts()
		s.auths += n.Auths
		s.calls += n.Auths + n.Reads + n.Writes
		s.writes += n.Writes
		s.observes += n.Observes
	}
	if land.ovn != nil {
		for _, c := range land.ovn.Clouds {
			n := c.Counts()
			s.writes += n.Writes
			s.ovnConnects += n.Connects
			s.ovnOpen += n.Open
		}
	}
	return s
}

// ageQuantiles returns p50, p99 and the maximum of the time since each
// object of clouds was last read, at t.
func ageQuantiles(clouds []*openstackstub.Cloud, t time.Time) [3]float64 {
	var ages []float64
	for _, c := range clouds {
		for _, seen := range c.LastSeen() {
			ages = append(ages, t.Sub(seen).Seconds())
		}
	}
	slices.Sort(ages)
	if len(ages) == 0 {
		return [3]float64{}
	}
	return [3]float64{quantile(ages, 0.5), quantile(ages, 0.99), ages[len(ages)-1]}
}

// quantile of sorted values.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

// newCloudsWithin is how long k new clouds beside a converged landscape
// may take: behind a saturated queue a new cloud can wait many minutes,
// and that is a figure to report, not a reason to stop.
func newCloudsWithin(k int) time.Duration { return 30*time.Minute + deadlineFor(k*perCloud) }

// newClouds adds k clouds to the landscape and creates their objects at
// once; it returns, sorted, the seconds until each cloud was first asked
// anything (-1: never) and until its resources were Ready (-1: not within
// timeout, which is then the error).
func newClouds(ctx context.Context, tb testing.TB, kube client.Client, p *process, land *landscape, batch string, k int,
	timeout time.Duration) (first, ready []float64, err error) {
	tb.Helper()
	clouds := make([]*openstackstub.Cloud, k)
	for j := range clouds {
		clouds[j] = land.add(tb)
	}
	created := time.Now()
	mustTB(tb, createClouds(ctx, kube, batch, land, clouds, 16))
	done, err := waitBatchReady(tb, kubetest.Config(tb), p, batch, k, timeout)
	for _, c := range clouds {
		first = append(first, since(created, c.FirstRequest()))
		ready = append(ready, since(created, done[cloudName(c.Index)]))
	}
	slices.Sort(first)
	slices.Sort(ready)
	return first, ready, err
}

// since is the seconds from start to t, or -1 for a zero t (not yet).
func since(start, t time.Time) float64 {
	if t.IsZero() {
		return -1
	}
	return t.Sub(start).Seconds()
}

// repairTime changes an aggregate of c behind the provider's back and
// returns the seconds until the provider has set it back.
func repairTime(tb testing.TB, p *process, c *openstackstub.Cloud) float64 {
	tb.Helper()
	name := cloudName(c.Index) + "-" + pools[0]
	mustTB(tb, c.DriftAggregate(name, "c5c3.io_allocated_nodes", "99"))
	changed := time.Now()
	for time.Since(changed) < 10*time.Minute {
		mustTB(tb, p.crashed())
		md, err := c.AggregateMetadata(name)
		mustTB(tb, err)
		if md["c5c3.io_allocated_nodes"] == "20" {
			return time.Since(changed).Seconds()
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("aggregate %s: the drift was not repaired within 10 minutes", name)
	return 0
}

// allReadSince waits until every object of clouds (of land) was read after
// t, and their OVN databases connected to (a new process reads OVN rows
// over connections it makes), and returns the seconds that took.
func allReadSince(tb testing.TB, p crasher, land *landscape, clouds []*openstackstub.Cloud, t time.Time, timeout time.Duration) float64 {
	tb.Helper()
	for time.Since(t) < timeout {
		mustTB(tb, p.crashed())
		stale := 0
		for _, c := range clouds {
			for _, seen := range c.LastSeen() {
				if seen.Before(t) {
					stale++
				}
			}
			if land.ovn != nil && land.ovn.Clouds[c.Index].LastConnect().Before(t) {
				stale++
			}
		}
		if stale == 0 {
			return time.Since(t).Seconds()
		}
		time.Sleep(time.Second)
	}
	tb.Fatalf("not every resource was read again within %s of the restart", timeout)
	return 0
}

// ovnRepairTime changes the priority of a member of c's first HA chassis
// group behind the provider's back and returns the seconds until the
// provider has set it back.
func ovnRepairTime(tb testing.TB, p *process, c *ovnstub.Cloud) float64 {
	tb.Helper()
	ctx := context.Background()
	group, member := cloudName(c.Index)+"-"+pools[0], gateways()[pools[0]][0]
	mustTB(tb, c.DriftPriority(ctx, group, member.Name, 1))
	changed := time.Now()
	for time.Since(changed) < 10*time.Minute {
		mustTB(tb, p.crashed())
		got, err := c.Priority(ctx, group, member.Name)
		mustTB(tb, err)
		if got == member.Priority {
			return time.Since(changed).Seconds()
		}
		time.Sleep(100 * time.Millisecond)
	}
	tb.Fatalf("HA chassis group %s: the drift was not repaired within 10 minutes", group)
	return 0
}

func unknownCalls(land *landscape) int64 {
	var n int64
	for _, c := range land.Clouds {
		n += c.Counts().Unknown
	}
	return n
}
