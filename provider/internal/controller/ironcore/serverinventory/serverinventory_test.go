package serverinventory

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	metalv1alpha1 "github.com/ironcore-dev/metal-operator/api/v1alpha1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
)

// server is a Server in state with one processor of threads hardware threads
// (cores when threads is 0) and mem of memory, claimed by claim (ns/name)
// unless empty.
func server(name string, state metalv1alpha1.ServerState, claim string, cores, threads int32, mem string) metalv1alpha1.Server {
	s := metalv1alpha1.Server{ObjectMeta: metav1.ObjectMeta{Name: name}}
	s.Status.State = state
	s.Status.Processors = []metalv1alpha1.Processor{{ID: "cpu0", TotalCores: cores, TotalThreads: threads}}
	if mem != "" {
		q := resource.MustParse(mem)
		s.Status.TotalSystemMemory = &q
	}
	if claim != "" {
		s.Spec.ServerClaimRef = &metalv1alpha1.ImmutableObjectReference{Namespace: "metal", Name: claim}
	}
	return s
}

func TestCount(t *testing.T) {
	unclaimable := server("u", metalv1alpha1.ServerStateAvailable, "", 8, 16, "64Gi")
	unclaimable.Spec.Unclaimable = true
	cases := map[string]struct {
		reason  string
		servers []metalv1alpha1.Server
		prefix  string
		want    v1alpha1.ServerInventoryObservation
	}{
		"Empty": {
			reason: "No server carries the labels: everything is zero.",
		},
		"EveryState": {
			reason: "Each server counts in exactly one state; usable is all but others' and failed ones; capacity sums threads and memory.",
			prefix: "shoot--p--hv-",
			servers: []metalv1alpha1.Server{
				server("a", metalv1alpha1.ServerStateAvailable, "", 32, 64, "512Gi"),
				server("own", metalv1alpha1.ServerStateReserved, "shoot--p--hv-w-z1-1", 32, 64, "512Gi"),
				server("other", metalv1alpha1.ServerStateReserved, "shoot--p--hv2-w-z1-1", 32, 64, "512Gi"),
				server("m", metalv1alpha1.ServerStateMaintenance, "", 32, 64, "512Gi"),
				server("p", metalv1alpha1.ServerStateParked, "", 32, 64, "512Gi"),
				server("r", metalv1alpha1.ServerStateReleased, "", 32, 64, "512Gi"),
				server("d", metalv1alpha1.ServerStateDiscovery, "", 0, 0, ""),
				server("i", "", "", 0, 0, ""),
				server("e", metalv1alpha1.ServerStateError, "shoot--p--hv-w-z1-2", 32, 64, "512Gi"),
				unclaimable,
			},
			want: v1alpha1.ServerInventoryObservation{
				Servers: 10, Available: 1, Claimed: 1, ClaimedByOthers: 1, Released: 1, Discovering: 2, Maintenance: 3, Failed: 1, Usable: 8,
				UsableCapacity:         v1alpha1.ServerCapacity{CPUs: 5*64 + 16, MemoryGiB: 5*512 + 64},
				AvailableCapacity:      v1alpha1.ServerCapacity{CPUs: 64, MemoryGiB: 512},
				ClaimedByOthersServers: []v1alpha1.ClaimedServer{{Server: "other", Claim: "metal/shoot--p--hv2-w-z1-1"}},
				FailedServers:          []string{"e"},
			},
		},
		"NoPrefixEveryClaimIsOthers": {
			reason: "A pool without a Shoot holds no server: every claimed one is another pool's, and a Reserved one without a claim too.",
			servers: []metalv1alpha1.Server{
				server("c", metalv1alpha1.ServerStateReserved, "anything", 4, 0, "8Gi"),
				server("r", metalv1alpha1.ServerStateReserved, "", 4, 0, "8Gi"),
			},
			want: v1alpha1.ServerInventoryObservation{
				Servers: 2, ClaimedByOthers: 2,
				ClaimedByOthersServers: []v1alpha1.ClaimedServer{{Server: "c", Claim: "metal/anything"}, {Server: "r", Claim: "(reserved without a ServerClaim)"}},
			},
		},
		"CoresWithoutThreads": {
			reason:  "A processor that reports no threads counts its cores; memory rounds down to GiB.",
			servers: []metalv1alpha1.Server{server("a", metalv1alpha1.ServerStateAvailable, "", 24, 0, "1536Mi")},
			want: v1alpha1.ServerInventoryObservation{
				Servers: 1, Available: 1, Usable: 1,
				UsableCapacity: v1alpha1.ServerCapacity{CPUs: 24, MemoryGiB: 1}, AvailableCapacity: v1alpha1.ServerCapacity{CPUs: 24, MemoryGiB: 1},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Count(tc.servers, tc.prefix)); diff != "" {
				t.Errorf("%s\nCount(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// drives gives s one storage controller holding drives of the given
// capacities (a drive without capacity when empty).
func drives(s metalv1alpha1.Server, capacities ...string) metalv1alpha1.Server {
	st := metalv1alpha1.Storage{Name: "controller0"}
	for i, c := range capacities {
		d := metalv1alpha1.StorageDrive{Name: fmt.Sprintf("disk%d", i)}
		if c != "" {
			q := resource.MustParse(c)
			d.Capacity = &q
		}
		st.Drives = append(st.Drives, d)
	}
	s.Status.Storages = append(s.Status.Storages, st)
	return s
}

func TestCountDisks(t *testing.T) {
	cases := map[string]struct {
		reason  string
		servers []metalv1alpha1.Server
		want    v1alpha1.ServerInventoryObservation
	}{
		"SmallestOfTheUsable": {
			reason: "Drives sum per server; the smallest usable server sizes a storage pool; failed and others' servers count in neither.",
			servers: []metalv1alpha1.Server{
				drives(server("a", metalv1alpha1.ServerStateAvailable, "", 8, 0, ""), "8Ti", "8Ti", ""),
				drives(server("b", metalv1alpha1.ServerStateAvailable, "", 8, 0, ""), "12Ti"),
				drives(server("e", metalv1alpha1.ServerStateError, "", 8, 0, ""), "1Ti"),
				drives(server("o", metalv1alpha1.ServerStateReserved, "", 8, 0, ""), "1Ti"),
			},
			want: v1alpha1.ServerInventoryObservation{
				Servers: 4, Available: 2, Usable: 2, Failed: 1, ClaimedByOthers: 1, SmallestDiskGiB: 12 << 10,
				UsableCapacity:         v1alpha1.ServerCapacity{CPUs: 16, DiskGiB: 28 << 10},
				AvailableCapacity:      v1alpha1.ServerCapacity{CPUs: 16, DiskGiB: 28 << 10},
				FailedServers:          []string{"e"},
				ClaimedByOthersServers: []v1alpha1.ClaimedServer{{Server: "o", Claim: "(reserved without a ServerClaim)"}},
			},
		},
		"AServerWithoutDrives": {
			reason: "A usable server whose drives are not discovered yet makes the smallest 0: nothing can be sized from the rest.",
			servers: []metalv1alpha1.Server{
				drives(server("a", metalv1alpha1.ServerStateAvailable, "", 8, 0, ""), "8Ti"),
				server("d", metalv1alpha1.ServerStateDiscovery, "", 0, 0, ""),
			},
			want: v1alpha1.ServerInventoryObservation{
				Servers: 2, Available: 1, Discovering: 1, Usable: 2,
				UsableCapacity: v1alpha1.ServerCapacity{CPUs: 8, DiskGiB: 8 << 10}, AvailableCapacity: v1alpha1.ServerCapacity{CPUs: 8, DiskGiB: 8 << 10},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Count(tc.servers, "")); diff != "" {
				t.Errorf("%s\nCount(...): -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCountListsAtMostTen(t *testing.T) {
	var servers []metalv1alpha1.Server
	for i := range 25 {
		servers = append(servers, server(string(rune('a'+i)), metalv1alpha1.ServerStateError, "", 1, 1, ""))
	}
	o := Count(servers, "")
	if o.Failed != 25 || len(o.FailedServers) != listed {
		t.Errorf("Failed = %d with %d names, want 25 with %d (the CRD caps the list)", o.Failed, len(o.FailedServers), listed)
	}
}
