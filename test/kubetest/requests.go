package kubetest

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// RequestCounts are the API server's apiserver_request_total, summed by
// verb and resource (with its subresource): "GET secrets",
// "UPDATE projects/status"; the requests refused on a conflict are counted
// apart, with the code: "UPDATE projects/status 409".
type RequestCounts map[string]float64

// APIRequests reads the request counters of the API server cfg reaches,
// from its /metrics.
func APIRequests(tb testing.TB, cfg *rest.Config) RequestCounts {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		tb.Fatal(err)
	}
	counts := RequestCounts{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		key := l["verb"] + " " + l["resource"]
		if l["subresource"] != "" {
			key += "/" + l["subresource"]
		}
		if l["code"] == conflict {
			key += " " + conflict
		}
		counts[key] += m.GetCounter().GetValue()
	}
	return counts
}

// Sub returns the counts since before.
func (c RequestCounts) Sub(before RequestCounts) RequestCounts {
	d := RequestCounts{}
	for k, v := range c {
		if n := v - before[k]; n > 0 {
			d[k] = n
		}
	}
	return d
}

const conflict = "409"

// Conflicts are the counts of the requests refused on a conflict: a write
// of an object whose version had changed since it was read.
func (c RequestCounts) Conflicts() RequestCounts {
	d := RequestCounts{}
	for k, v := range c {
		if strings.HasSuffix(k, " "+conflict) {
			d[k] = v
		}
	}
	return d
}

// Total is the sum of the counts.
func (c RequestCounts) Total() float64 {
	var n float64
	for _, v := range c {
		n += v
	}
	return n
}

// Top lists the n largest counts, each divided by per (a window's seconds
// gives a rate; 1 the counts).
func (c RequestCounts) Top(n int, per float64) string {
	keys := slices.Collect(maps.Keys(c))
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(c[b], c[a]), cmp.Compare(a, b)) })
	var s strings.Builder
	for i, k := range keys {
		if i == n {
			break
		}
		if s.Len() > 0 {
			s.WriteString(", ")
		}
		if per == 1 {
			fmt.Fprintf(&s, "%.0f %s", c[k], k)
		} else {
			fmt.Fprintf(&s, "%.1f %s", c[k]/per, k)
		}
	}
	return s.String()
}

// String lists every count, the largest first.
func (c RequestCounts) String() string { return c.Top(len(c), 1) }
