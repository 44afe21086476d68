package openstack

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// BenchmarkCloudTLS measures what a cloud with its own CA bundle keeps on
// the heap once its client has made a request: "system-pool-per-cloud" is
// how the provider built it before (a copy of the system's roots with the
// bundle added, per cloud), "bundle-per-cloud" how it does now (the bundle
// alone, the system's roots shared). retained_B/cloud is the heap still in
// use per cloud after a GC, with the clients kept and their connections
// closed.
//
//	go test -run '^$' -bench BenchmarkCloudTLS -benchtime 1000x ./provider/internal/clients/openstack/
func BenchmarkCloudTLS(b *testing.B) {
	ca := newCA(b, "cloud")
	srv := serveKeystone(b, ca, "127.0.0.1")
	// Each answer closes its connection: what is measured is the client's
	// TLS configuration, not a connection's buffers.
	srv.Config.SetKeepAlivesEnabled(false)
	cfg := Config{CABundle: ca.CertPEM()}
	base := pooled(DefaultCallsPerSession)

	ways := []struct {
		name string
		make func(b *testing.B) http.RoundTripper
	}{
		{"system-pool-per-cloud", func(b *testing.B) http.RoundTripper {
			pool, err := x509.SystemCertPool()
			if err != nil {
				b.Fatal(err)
			}
			pool.AppendCertsFromPEM(cfg.CABundle)
			t := base.Clone()
			t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
			return t
		}},
		{"bundle-per-cloud", func(b *testing.B) http.RoundTripper {
			t, err := (&Cache{transport: base}).transportFor(cfg)
			if err != nil {
				b.Fatal(err)
			}
			return t
		}},
	}
	for _, way := range ways {
		b.Run(way.name, func(b *testing.B) {
			kept := make([]http.RoundTripper, 0, b.N)
			before := heapInUse()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				t := way.make(b)
				resp, err := (&http.Client{Transport: t, Timeout: 10 * time.Second}).Get(srv.URL + "/v3")
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				kept = append(kept, t)
			}
			b.StopTimer()
			b.ReportMetric(float64(heapInUse()-before)/float64(b.N), "retained_B/cloud")
			runtime.KeepAlive(kept)
		})
	}
}

func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc) //nolint:gosec // a heap is far below 2^63
}
