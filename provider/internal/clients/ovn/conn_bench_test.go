package ovn

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"testing"

	"github.com/go-logr/logr"

	"github.com/c5c3/consumer-plane/provider/scale/ovnstub"
)

// BenchmarkConnPerCloud measures what one cloud's OVN connection (its
// Northbound and Southbound databases) keeps on the heap, leader-only (the
// ProviderConfig's default) and not: each iteration dials another cloud of the scale
// harness's stub (its own databases, two pools of three chassis) and keeps
// the connection, as the provider's Cache does for every cloud it serves.
// retained_B/cloud is the heap still in use per cloud after a GC. The
// stub's servers run in this process, but their databases are made before
// the count starts: what it holds of the servers is each connection's
// session and monitor, the rest is the provider's clients.
//
// A leader-only connection also monitors the server's _Server database
// (to follow the Raft leader). libovsdb's client, which the provider used
// before stop 94, held 2.4 MB a cloud here (an event buffer per database).
//
//	go test -run '^$' -bench BenchmarkConnPerCloud -benchtime 200x ./provider/internal/clients/ovn/
func BenchmarkConnPerCloud(b *testing.B) {
	for _, leaderOnly := range []bool{true, false} {
		b.Run(fmt.Sprintf("leaderOnly=%t", leaderOnly), func(b *testing.B) { benchmarkConnPerCloud(b, leaderOnly) })
	}
}

func benchmarkConnPerCloud(b *testing.B, leaderOnly bool) {
	ctx := context.Background()
	l, err := ovnstub.New(b.N, []string{"hv-pool-a", "hv-pool-b"}, func(i int) net.IP { return net.IPv4(127, 3, byte(i/250), byte(1+i%250)) })
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	conns := make([]*Conn, 0, b.N)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	before := heapInUse()
	b.ReportAllocs()
	b.ResetTimer()
	for _, c := range l.Clouds {
		conn, err := Dial(ctx, Config{Northbound: []string{c.Endpoint}, Southbound: []string{c.Endpoint}, LeaderOnly: leaderOnly}, logr.Discard())
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, conn)
	}
	b.StopTimer()
	b.ReportMetric(float64(heapInUse()-before)/float64(b.N), "retained_B/cloud")
	runtime.KeepAlive(conns)
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc) //nolint:gosec // a heap is far below 2^63
}
