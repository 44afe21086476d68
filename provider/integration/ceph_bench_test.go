//go:build ceph

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	"github.com/c5c3/consumer-plane/test/cephtest"
)

// BenchmarkConvergeCeph20 declares 20 RBD pools with quotas and
// compression against the local Ceph and measures the time until all are
// Ready, the monitor commands sent and the process RSS; a plain loop over
// one librados connection sends the same commands (create, application,
// owner key, size, compression, quota) for 20 other pools first, in the
// same run. Run: make bench-provider-ovn-ceph (docs/benchmarks.md).
func BenchmarkConvergeCeph20(b *testing.B) {
	h := start(b)
	ctx := context.Background()
	key, err := os.ReadFile(filepath.Join(cephtest.Run(), "admin.key"))
	if err != nil {
		b.Fatalf("needs the local Ceph (make ceph-up): %v", err)
	}
	for i := 0; i < b.N; i++ {
		conn, err := ceph.DialRados(ceph.Config{MonHost: "127.0.0.1:6789", User: "admin", Key: strings.TrimSpace(string(key))})
		if err != nil {
			b.Fatal(err)
		}
		c := &ceph.Client{Conn: conn}
		start, cmds := time.Now(), ceph.CommandCount()
		for j := range 20 {
			name := h.name(fmt.Sprintf("plain-%d-%02d", i, j))
			for _, f := range []func() error{
				func() error { return c.CreatePool(ctx, name, "", 0) },
				func() error { return c.EnableApplication(ctx, name, "rbd") },
				func() error { return c.SetApplicationKey(ctx, name, "rbd", "cobaltcore.c5c3.io_resource", name) },
				func() error { return c.SetPool(ctx, name, "size", "1") },
				func() error { return c.SetPool(ctx, name, "compression_mode", "passive") },
				func() error { return c.SetQuota(ctx, name, "max_bytes", 1<<30) },
			} {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
		}
		plain, plainCmds := time.Since(start), ceph.CommandCount()-cmds

		pc := cephProviderConfig(b, h)
		start, cmds = time.Now(), ceph.CommandCount()
		var mrs []resource.Managed
		for j := range 20 {
			name := h.name(fmt.Sprintf("bench-%d-%02d", i, j))
			mg := &v1alpha1.Pool{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.PoolSpec{ClusterManagedResourceSpec: managedBy(pc),
				ForProvider: v1alpha1.PoolParameters{Name: name, Size: 1, CompressionMode: "passive", QuotaMaxBytes: ptr(1 << 30)}}}
			if err := h.kube.Create(ctx, mg); err != nil {
				b.Fatal(err)
			}
			mrs = append(mrs, mg)
		}
		waitAllReady(b, h, mrs)
		converge, convergeCmds := time.Since(start), ceph.CommandCount()-cmds
		steady, rss := steadyPerPoll(ceph.CommandCount), rssMB()

		b.ReportMetric(plain.Seconds(), "plain-loop-s")
		b.ReportMetric(float64(plainCmds), "plain-loop-commands")
		b.ReportMetric(converge.Seconds(), "provider-converge-s")
		b.ReportMetric(float64(convergeCmds), "provider-converge-commands")
		b.ReportMetric(steady, "provider-commands/poll")
		b.ReportMetric(rss, "RSS-MB")

		deleteAllB(b, h, mrs)
		for j := range 20 {
			if err := c.DeletePool(ctx, h.name(fmt.Sprintf("plain-%d-%02d", i, j))); err != nil {
				b.Fatal(err)
			}
		}
		conn.Shutdown()
	}
}
