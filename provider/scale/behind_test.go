package scale

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// convergeWithin (COBALTCORE_SCALE_CONVERGE_WITHIN, e.g. 40m) bounds the
// wait for the landscape to converge. The old defaults at 5,000 clouds need
// hours for it; how far they got, and how long a new cloud waits behind
// them, are then the figures. Unset, the wait is deadlineFor's.
var convergeWithin = envDuration("COBALTCORE_SCALE_CONVERGE_WITHIN")

// newBehindWithin bounds the wait for the one new cloud created beside a
// backlog: at the old defaults it may wait behind the whole of it.
const newBehindWithin = 15 * time.Minute

// behind measures a provider that did not converge within convergeWithin
// and ends the experiment: how far it got; over one poll interval, what it
// holds and what it asks (RSS, CPU, observes, and authentications per cloud:
// a session cache smaller than the landscape shows there); how old its
// reads of the objects it made are; and the anchor's measure, one new
// cloud created beside the backlog (its first look and Ready).
func behind(ctx context.Context, b *testing.B, kube client.Client, p *process, land *landscape, poll time.Duration, nr *notReady, i int) {
	b.Helper()
	say(b, "not converged: %s", nr)
	before := sample(b, p, land)
	time.Sleep(poll)
	after := sample(b, p, land)
	window, n := after.at.Sub(before.at), nr.of
	rss, peak := p.rss()
	cpu := (after.cpu - before.cpu).Seconds() / window.Seconds()
	observes := float64(after.observes-before.observes) / window.Seconds()
	auths := float64(after.auths-before.auths) / float64(n) / window.Minutes()
	var ages []float64
	made := 0
	for _, c := range land.Clouds[:n] {
		for _, seen := range c.LastSeen() {
			made++
			if !seen.IsZero() {
				ages = append(ages, after.at.Sub(seen).Seconds())
			}
		}
	}
	slices.Sort(ages)
	say(b, "behind, over one poll: RSS %d MiB (peak %d), %.2f cores, %.1f observes/s, %.1f reconciles/s, %.1f API requests/s, %.2f authentications per cloud per minute; "+
		"%d objects made in the clouds, %d of them read since: p50 %.0fs p99 %.0fs max %.0fs ago",
		rss>>20, peak>>20, cpu, observes, (after.reconciles-before.reconciles)/window.Seconds(), (after.apiRequests-before.apiRequests)/window.Seconds(), auths,
		made, len(ages), quantile(ages, 0.5), quantile(ages, 0.99), quantile(ages, 1))
	profile, top := p.heapTop(15)
	say(b, "heap in use behind (profile %s):\n%s", profile, top)

	first, ready, err := newClouds(ctx, b, kube, p, land, fmt.Sprintf("new1-%d", i), 1, newBehindWithin)
	if err != nil {
		say(b, "one new cloud beside the backlog: %v", err)
	}
	say(b, "one new cloud beside the backlog: first asked %.1fs, Ready %.1fs after its objects were created (-1: not within %s)", first[0], ready[0], newBehindWithin)

	b.ReportMetric(float64(n), "clouds")
	b.ReportMetric(nr.after.Seconds(), "converge_limit_s")
	b.ReportMetric(float64(nr.ready), "ready_at_limit")
	b.ReportMetric(float64(nr.wanted), "resources")
	b.ReportMetric(float64(rss>>20), "rss_MiB")
	b.ReportMetric(float64(peak>>20), "peak_MiB")
	b.ReportMetric(cpu, "cpu_cores")
	b.ReportMetric(observes, "observes/s")
	b.ReportMetric(auths, "auths/cloud/min")
	b.ReportMetric(quantile(ages, 0.99), "age_p99_s")
	b.ReportMetric(first[0], "new1_first_s")
	b.ReportMetric(ready[0], "new1_ready_s")
}
