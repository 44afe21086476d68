package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/go-logr/logr"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	"github.com/c5c3/consumer-plane/test/ovntest"
)

// BenchmarkConvergeOVN200 declares 200 OVN rows (100 logical switches, 50
// logical routers, 50 HA chassis groups of two chassis) against a
// 3-member Raft Northbound and measures the time until all are Ready, the
// transactions and reads sent and the process RSS; a plain loop writes the
// same rows (same name-guarded inserts, one transaction each) in the same
// run, first. Run: make bench-provider-ovn-ceph (docs/benchmarks.md).
func BenchmarkConvergeOVN200(b *testing.B) {
	h := start(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		o := ovntest.Start(b, true)
		for j, c := range []string{"hv-1", "hv-2"} {
			o.SBCtl(b, "chassis-add", c, "geneve", fmt.Sprintf("127.0.1.%d", j+1))
		}

		// The plain loop, on its own names.
		conn, err := ovn.Dial(ctx, ovn.Config{Northbound: o.NB, Southbound: []string{o.SB}, LeaderOnly: true}, logr.Discard())
		if err != nil {
			b.Fatal(err)
		}
		start, tx := time.Now(), ovn.TransactionCount()
		for j := range 200 {
			name := fmt.Sprintf("plain-%03d", j)
			var models []model.Model
			table := nbdb.LogicalSwitchTable
			switch {
			case j < 100:
				models = []model.Model{&nbdb.LogicalSwitch{UUID: "r", Name: name, OtherConfig: map[string]string{"subnet": "10.0.0.0/24"}}}
			case j < 150:
				table = nbdb.LogicalRouterTable
				models = []model.Model{&nbdb.LogicalRouter{UUID: "r", Name: name}}
			default:
				table = nbdb.HAChassisGroupTable
				models = []model.Model{&nbdb.HAChassisGroup{UUID: "r", Name: name, HaChassis: []string{"a", "b"}},
					&nbdb.HAChassis{UUID: "a", ChassisName: "hv-1", Priority: 20}, &nbdb.HAChassis{UUID: "b", ChassisName: "hv-2", Priority: 10}}
			}
			ops, err := conn.NB.Insert(models...)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := ovn.Transact(ctx, conn.NB, append([]ovsdb.Operation{ovn.NameIsFree(table, name)}, ops...)...); err != nil {
				b.Fatal(err)
			}
		}
		plain, plainTx := time.Since(start), ovn.TransactionCount()-tx
		conn.Close()

		// The provider.
		pc := h.name(fmt.Sprintf("ovn-bench-%d", i))
		h.kube.Create(ctx, &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: pc}, Spec: v1alpha1.ProviderConfigSpec{ //nolint:errcheck // checked by the resources becoming Ready
			Northbound: v1alpha1.Database{Endpoints: o.NB}, Southbound: &v1alpha1.Database{Endpoints: []string{o.SB}}}})
		start, tx = time.Now(), ovn.TransactionCount()
		var mrs []resource.Managed
		for j := range 200 {
			name := fmt.Sprintf("bench-%03d", j)
			meta := metav1.ObjectMeta{Name: h.name(fmt.Sprintf("ovn-bench-%d-%03d", i, j))}
			var mg resource.Managed
			switch {
			case j < 100:
				mg = &v1alpha1.LogicalSwitch{ObjectMeta: meta, Spec: v1alpha1.LogicalSwitchSpec{ClusterManagedResourceSpec: managedBy(pc),
					ForProvider: v1alpha1.LogicalSwitchParameters{Name: name, OtherConfig: map[string]string{"subnet": "10.0.0.0/24"}}}}
			case j < 150:
				mg = &v1alpha1.LogicalRouter{ObjectMeta: meta, Spec: v1alpha1.LogicalRouterSpec{ClusterManagedResourceSpec: managedBy(pc),
					ForProvider: v1alpha1.LogicalRouterParameters{Name: name}}}
			default:
				mg = &v1alpha1.HAChassisGroup{ObjectMeta: meta, Spec: v1alpha1.HAChassisGroupSpec{ClusterManagedResourceSpec: managedBy(pc),
					ForProvider: v1alpha1.HAChassisGroupParameters{Name: name, Chassis: []v1alpha1.HAChassis{{Name: "hv-1", Priority: 20}, {Name: "hv-2", Priority: 10}}}}}
			}
			if err := h.kube.Create(ctx, mg); err != nil {
				b.Fatal(err)
			}
			mrs = append(mrs, mg)
		}
		waitAllReady(b, h, mrs)
		converge, convergeTx := time.Since(start), ovn.TransactionCount()-tx
		// Writes and reads counted over the same polls.
		reads := ovn.ReadCount()
		steady := steadyPerPoll(ovn.TransactionCount)
		steadyReads, rss := float64(ovn.ReadCount()-reads)/steadyPolls, rssMB()

		b.ReportMetric(plain.Seconds(), "plain-loop-s")
		b.ReportMetric(float64(plainTx), "plain-loop-transactions")
		b.ReportMetric(converge.Seconds(), "provider-converge-s")
		b.ReportMetric(float64(convergeTx), "provider-converge-transactions")
		b.ReportMetric(steady, "provider-transactions/poll")
		b.ReportMetric(steadyReads, "provider-reads/poll")
		b.ReportMetric(rss, "RSS-MB")

		start = time.Now()
		deleteAllB(b, h, mrs)
		b.ReportMetric(time.Since(start).Seconds(), "provider-delete-s")
		if left := rows(b, o, "Logical_Switch", "name"); len(left) != 100 {
			b.Fatalf("%d switches left, want the plain loop's 100", len(left))
		}
	}
}
