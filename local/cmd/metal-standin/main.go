// Command metal-standin fills a local API server (which has the
// metal-operator CRDs) with the bare-metal Servers the example pools need,
// so the provider's ServerInventory has a metal cluster to observe. It is a
// stand-in for an IronCore metal cluster, for the demo: it creates Server
// objects with the status the metal-operator would report after discovery
// (Available, one processor, memory and, for a storage pool, eight 4Ti
// drives) — no BMCs, no power, no ServerClaims.
//
// For every HypervisorCluster and StorageCluster claim in the given files it
// creates maxWorkers+spare Servers labelled with the pool's machine pool
// (and, for a dedicated pool, the dedicated-pool label). Existing Servers
// are left as they are.
//
// Usage: metal-standin -kubeconfig FILE [-spare 2] CLAIM.yaml...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	metalv1alpha1 "github.com/ironcore-dev/metal-operator/api/v1alpha1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/internal/gardener"
	"github.com/c5c3/consumer-plane/tools/render"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the API server that plays the metal cluster")
	spare := flag.Int("spare", 2, "Servers per pool beyond its maxWorkers")
	flag.Parse()
	if err := run(*kubeconfig, *spare, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "metal-standin:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, spare int, files []string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// Hundreds of Servers: client-go's default of 5 requests a second
	// would take minutes.
	cfg.QPS, cfg.Burst = 200, 400
	s := runtime.NewScheme()
	if err := metalv1alpha1.AddToScheme(s); err != nil {
		return err
	}
	kube, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	ctx := context.Background()
	for _, f := range files {
		objs, err := render.ReadObjects(f)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if o.GetKind() != "HypervisorCluster" && o.GetKind() != "StorageCluster" {
				continue
			}
			pool, _, _ := unstructured.NestedString(o.Object, "spec", "name")
			machinePool, _, _ := unstructured.NestedString(o.Object, "spec", "ironcore", "machinePool")
			dedicated, _, _ := unstructured.NestedBool(o.Object, "spec", "dedicated")
			maxWorkers, ok := number(o.Object, "spec", "maxWorkers")
			if !ok || machinePool == "" {
				return fmt.Errorf("%s: %s %s needs spec.maxWorkers and spec.ironcore.machinePool", f, o.GetKind(), o.GetName())
			}
			labels := map[string]string{gardener.LabelMachinePool: machinePool}
			if dedicated {
				labels[gardener.LabelDedicatedPool] = pool
			}
			n := int(maxWorkers) + spare
			// A storage pool's servers hold drives its capacity is sized
			// from: 32Ti each, so that st-pool-a's 700Ti and st-pool-b's
			// 1Pi take more nodes than their spec.workers, and the other
			// pools' fit in theirs.
			drives := 0
			if o.GetKind() == "StorageCluster" {
				drives = 8
			}
			for i := 1; i <= n; i++ {
				if err := create(ctx, kube, fmt.Sprintf("%s-%03d", machinePool, i), labels, drives); err != nil {
					return err
				}
			}
			fmt.Printf("%d Servers for pool %s (%v)\n", n, pool, labels)
		}
	}
	return nil
}

func create(ctx context.Context, kube client.Client, name string, labels map[string]string, drives int) error {
	srv := &metalv1alpha1.Server{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       metalv1alpha1.ServerSpec{SystemUUID: "standin-" + name},
	}
	if err := kube.Create(ctx, srv); kerrors.IsAlreadyExists(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("cannot create Server %s: %w", name, err)
	}
	mem := resource.MustParse("1Ti")
	srv.Status = metalv1alpha1.ServerStatus{
		State: metalv1alpha1.ServerStateAvailable, PowerState: metalv1alpha1.ServerOffPowerState, TotalSystemMemory: &mem,
		Processors: []metalv1alpha1.Processor{{ID: "CPU0", TotalCores: 64, TotalThreads: 128}},
	}
	if drives > 0 {
		st := metalv1alpha1.Storage{Name: "RAID.Integrated.1-1"}
		for d := range drives {
			size := resource.MustParse("4Ti")
			st.Drives = append(st.Drives, metalv1alpha1.StorageDrive{Name: fmt.Sprintf("nvme%dn1", d), MediaType: "SSD", Type: "NVMe", Capacity: &size})
		}
		srv.Status.Storages = []metalv1alpha1.Storage{st}
	}
	return kube.Status().Update(ctx, srv)
}

// number reads an integer field, which YAML decoding leaves as int64 or
// float64.
func number(obj map[string]any, path ...string) (int64, bool) {
	v, ok, _ := unstructured.NestedFieldNoCopy(obj, path...)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}
