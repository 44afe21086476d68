//go:build libvirt

package hypervisor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	kvmv1 "github.com/cobaltcore-dev/openstack-hypervisor-operator/api/v1"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"libvirt.org/go/libvirt"

	"github.com/c5c3/consumer-plane/agents/internal/hypervisor"
	"github.com/c5c3/consumer-plane/agents/internal/virt"
	"github.com/c5c3/consumer-plane/agents/internal/virttest"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// BenchmarkIntrospect1000 measures one introspection cycle of a node with
// 1,000 domains (half of them running) on libvirt's test driver, in process
// and through a libvirtd without qemu (libvirt's remote protocol, as on a
// hypervisor), side by side:
//
//	snapshot-cold - reading the host and every domain from libvirt with
//	                nothing cached (the first cycle, and every resync)
//	snapshot      - the same between events: four filtered domain lists,
//	                the domains' sizes from the cache
//	publish       - a full event-driven cycle: snapshot, building the
//	                Hypervisor status and writing it to the kube-apiserver
//	                (every cycle writes: one domain changes state between
//	                cycles, through libvirt, so its event drops its cache entry)
//
// make bench-agents runs it; the figures are in docs/benchmarks.md.
func BenchmarkIntrospect1000(b *testing.B) {
	d := virttest.StartLibvirtd(b)
	for _, uri := range []struct{ name, uri string }{{"test-driver", "test:///default"}, {"libvirtd", d.URI()}} {
		ref, err := libvirt.NewConnect(uri.uri)
		if err != nil {
			b.Fatal(err)
		}
		toggle := defineDomains(b, ref, "bench-"+uri.name, 1000)
		w := &virt.Watcher{URI: uri.uri}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = w.Run(ctx) }()
		for !w.Connected() {
			time.Sleep(10 * time.Millisecond)
		}
		b.Run(uri.name+"/snapshot-cold", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w.InvalidateAll()
				s, err := w.Snapshot()
				if err != nil {
					b.Fatal(err)
				}
				if len(s.Domains) < 1000 {
					b.Fatalf("%d domains", len(s.Domains))
				}
			}
		})
		b.Run(uri.name+"/snapshot", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := w.Snapshot()
				if err != nil {
					b.Fatal(err)
				}
				if len(s.Domains) < 1000 {
					b.Fatalf("%d domains", len(s.Domains))
				}
			}
		})
		b.Run(uri.name+"/publish", func(b *testing.B) {
			kube := kubetest.Client(b)
			node := "bench-" + uri.name
			if err := kube.Create(context.Background(), &kvmv1.Hypervisor{ObjectMeta: metav1.ObjectMeta{Name: node}}); err != nil {
				b.Fatal(err)
			}
			a := &hypervisor.Agent{Client: kube, Node: node, Source: w, Log: logr.Discard()}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				toggle()
				b.StartTimer()
				if err := a.Publish(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
		cancel()
		_, _ = ref.Close()
	}
}

// defineDomains defines n domains (every other one started) and returns a
// function that flips one domain's state, so consecutive cycles differ.
func defineDomains(b *testing.B, c *libvirt.Connect, prefix string, n int) func() {
	b.Helper()
	var doms []*libvirt.Domain
	for i := range n {
		d, err := c.DomainDefineXML(virttest.DomainXML(fmt.Sprintf("%s-%04d", prefix, i), fmt.Sprintf("b0000000-0000-4000-8000-%012d", i), 2, 1024))
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			if err := d.Create(); err != nil {
				b.Fatal(err)
			}
		}
		doms = append(doms, d)
	}
	b.Cleanup(func() {
		for _, d := range doms {
			_ = d.Destroy()
			_ = d.Undefine()
			_ = d.Free()
		}
	})
	next := 1
	return func() {
		d := doms[next]
		if on, _ := d.IsActive(); on {
			_ = d.Destroy()
		} else {
			_ = d.Create()
		}
		next = (next + 2) % n
	}
}
