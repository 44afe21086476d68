package scale

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/c5c3/consumer-plane/internal/shard"
	"github.com/c5c3/consumer-plane/test/kubetest"
	"github.com/c5c3/consumer-plane/test/openstackstub"
)

// shards is how many shards BenchmarkShards splits the landscape into,
// one replica each.
const shards = 2

// BenchmarkShards runs the provider as a Deployment of two replicas with
// --shards=2 runs (#55 §4), each with the flags of COBALTCORE_SCALE_FLAGS,
// against COBALTCORE_SCALE_CLOUDS clouds (default 500), and checks and
// reports, in order:
//
//   - each replica takes its own shard's Lease, and holds exactly the
//     managed resources of its shard's buckets (crossplane-runtime's
//     crossplane_managed_resource_exists): together every resource, each
//     in one replica; with OVN, each cloud's OVN connections are held by
//     its shard's replica alone (checked again with one replica killed:
//     its shard's clouds then have none open);
//   - converge_s: from the replicas' start to every resource Ready;
//   - over a steady window of two poll intervals: each replica's RSS and
//     CPU (rss_MiB, cpu_cores: the larger replica), and the time since each
//     resource was last read (age_p99_s);
//   - one replica killed: every resource of the other shard is read again
//     within two poll intervals while it is down (the other shard does not
//     stall), then the replica started again takes its shard back once the
//     old Lease expires, and restart_s is the time until every resource of
//     its shard was read again.
//
// One iteration is the whole experiment: run it with -benchtime=1x
// (make bench-scale SHARDS=2).
func BenchmarkShards(b *testing.B) {
	kube, n, flags, poll, kubeconfig := setUp(b, fmt.Sprintf("--shards=%d", shards))
	ctx := context.Background()

	for i := 0; i < b.N; i++ {
		land := newLandscape(b, n)
		batch := fmt.Sprintf("shards-%d", i)
		mustTB(b, createClouds(ctx, kube, batch, land, land.Clouds, 16))
		of := cloudsByShard(land.Clouds)
		say(b, "%d clouds (%d managed resources) created: %d and %d clouds in shards 0 and 1", n, resourcesIn(land.Clouds), len(of[0]), len(of[1]))

		requestsBefore := kubetest.APIRequests(b, kubetest.Config(b))
		started := time.Now()
		r := replicas{startProcess(b, kubeconfig, flags), startProcess(b, kubeconfig, flags)}
		serving := make([]int, len(r))
		for j, p := range r {
			serving[j] = servedShard(b, p, r)
		}
		if serving[0] == serving[1] {
			b.Fatalf("both replicas serve shard %d", serving[0])
		}
		_, err := waitBatchReady(b, kubetest.Config(b), r, batch, n, deadlineFor(resourcesIn(land.Clouds)))
		mustTB(b, err)
		converge := time.Since(started)
		// What converging asked of the API server, as BenchmarkLandscape
		// says it for one replica: side by side, where two cost more.
		requests := kubetest.APIRequests(b, kubetest.Config(b)).Sub(requestsBefore)
		conflicts := requests.Conflicts()
		say(b, "API server requests while they converged: %.0f (%.1f a second), the most frequent: %s; refused on a conflict: %.0f, the most: %s",
			requests.Total(), requests.Total()/converge.Seconds(), requests.Top(8, converge.Seconds()), conflicts.Total(), conflicts.Top(6, 1))
		say(b, "reads that waited for the cache to hold the replica's own write: replica 0: %s; replica 1: %s", r[0].cacheWaits(), r[1].cacheWaits())
		for j, p := range r {
			holdsItsShard(b, p, r, serving[j], resourcesIn(of[serving[j]]))
		}
		say(b, "every resource Ready %s after the replicas started; replica 0 serves shard %d, replica 1 shard %d, each holding exactly its shard's resources",
			converge.Round(time.Second), serving[0], serving[1])
		// Both replicas up: every cloud's OVN is held by one of them (its
		// Northbound and Southbound clients), not by both.
		checkOVNHeld(b, land, of, func(int) int64 { return 2 })

		time.Sleep(poll)
		window := 2 * poll
		cpu0 := []time.Duration{r[0].cpu(), r[1].cpu()}
		time.Sleep(window)
		ages := ageQuantiles(land.Clouds, time.Now())
		var rssMax int64
		var cpuMax float64
		for j, p := range r {
			rss, peak := p.rss()
			cores := (p.cpu() - cpu0[j]).Seconds() / window.Seconds()
			rssMax, cpuMax = max(rssMax, rss), max(cpuMax, cores)
			say(b, "steady: replica %d (shard %d): RSS %d MiB (peak %d), %.2f cores", j, serving[j], rss>>20, peak>>20, cores)
		}
		say(b, "steady: since last read: p50 %.0fs p99 %.0fs max %.0fs", ages[0], ages[1], ages[2])

		// Replica 0 killed, as a node's loss does: the other shard goes on.
		down := serving[0]
		r[0].kill()
		killed := time.Now()
		other := of[1-down]
		for time.Since(killed) < 2*poll && !allReadAfter(other, killed) {
			mustTB(b, r[1].crashed())
			time.Sleep(time.Second)
		}
		if !allReadAfter(other, killed) {
			b.Errorf("with the replica of shard %d down, not every resource of shard %d was read within two poll intervals (%s)", down, 1-down, 2*poll)
		}
		say(b, "replica of shard %d killed: every resource of shard %d read again within %.1fs", down, 1-down, time.Since(killed).Seconds())
		// The killed replica's connections are gone with it: a cloud of its
		// shard still connected would have been dialed by the other replica
		// too, whose memory then holds OVN clients of both shards.
		checkOVNHeld(b, land, of, func(s int) int64 {
			if s == down {
				return 0
			}
			return 2
		})

		restarted := time.Now()
		r[0] = startProcess(b, kubeconfig, flags)
		if got := servedShard(b, r[0], r); got != down {
			b.Fatalf("the restarted replica serves shard %d, want %d (the other is held)", got, down)
		}
		restart := allReadSince(b, r, land, of[down], restarted, deadlineFor(resourcesIn(of[down])))
		say(b, "started again: shard %d taken back and every one of its resources read again within %.1fs (it takes the old Lease once it has read it unrenewed for 60 s)", down, restart)

		b.ReportMetric(float64(n), "clouds")
		b.ReportMetric(converge.Seconds(), "converge_s")
		b.ReportMetric(float64(rssMax>>20), "rss_MiB")
		b.ReportMetric(cpuMax, "cpu_cores")
		b.ReportMetric(ages[1], "age_p99_s")
		b.ReportMetric(restart, "restart_s")
		if u := unknownCalls(land); u > 0 {
			b.Errorf("the provider made %d calls the stub does not serve: the measurement misses them", u)
		}
	}
}

// cloudsByShard splits clouds by the shard of their bucket.
func cloudsByShard(clouds []*openstackstub.Cloud) [shards][]*openstackstub.Cloud {
	var of [shards][]*openstackstub.Cloud
	for _, c := range clouds {
		bucket, _ := strconv.Atoi(shard.Of(cloudName(c.Index)))
		of[bucket%shards] = append(of[bucket%shards], c)
	}
	return of
}

// checkOVNHeld checks, with OVN, that every cloud of shard s has want(s)
// connections to its OVN databases open: 2 (the Northbound and Southbound
// clients of the replica serving s) or 0 (that replica down). The stub
// counts connections per cloud, not per client; which replica holds them
// shows once one is killed.
func checkOVNHeld(tb testing.TB, land *landscape, of [shards][]*openstackstub.Cloud, want func(shard int) int64) {
	tb.Helper()
	if land.ovn == nil {
		return
	}
	var wrong []string
	var open int64
	for s, clouds := range of {
		for _, c := range clouds {
			n := land.ovn.Clouds[c.Index].Counts().Open
			open += n
			if n != want(s) {
				wrong = append(wrong, fmt.Sprintf("cloud %d (shard %d): %d open, want %d", c.Index, s, n, want(s)))
			}
		}
	}
	if len(wrong) > 0 {
		tb.Errorf("%d clouds' OVN connections are not held by their shard's replica alone, e.g. %s", len(wrong), strings.Join(wrong[:min(5, len(wrong))], "; "))
		return
	}
	say(tb, "OVN: %d connections open, each cloud's held by its shard's replica alone", open)
}

// servedShard waits until p says which shard it serves
// (cobaltcore_provider_shard).
func servedShard(tb testing.TB, p *process, r replicas) int {
	tb.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		mustTB(tb, r.crashed())
		if families, err := p.scrape(); err == nil {
			for _, m := range families["cobaltcore_provider_shard"].GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "shard" && m.GetGauge().GetValue() == 1 {
						i, _ := strconv.Atoi(l.GetValue())
						return i
					}
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	tb.Fatalf("the replica serves no shard 2 minutes after its start; its log %s:\n%s", p.log, tail(p.log))
	return -1
}

// holdsItsShard checks that p's cache holds want managed resources, those
// of its shard: crossplane-runtime counts what the cache holds every 5 s.
func holdsItsShard(tb testing.TB, p *process, r replicas, i, want int) {
	tb.Helper()
	var got float64
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		mustTB(tb, r.crashed())
		if got = p.sums(tb, "crossplane_managed_resource_exists")[0]; int(got) == want {
			return
		}
	}
	tb.Fatalf("the replica of shard %d holds %.0f managed resources, want %d (those of its buckets)", i, got, want)
}

// allReadAfter reports whether every object of clouds was read after t.
func allReadAfter(clouds []*openstackstub.Cloud, t time.Time) bool {
	for _, c := range clouds {
		for _, seen := range c.LastSeen() {
			if seen.Before(t) {
				return false
			}
		}
	}
	return true
}
