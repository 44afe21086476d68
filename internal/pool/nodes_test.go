package pool

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// pool is n usable, empty nodes named node-00.. spread round-robin over zones.
func poolOf(n int, zones ...string) []Node {
	out := make([]Node, n)
	for i := range out {
		out[i] = Node{Name: fmt.Sprintf("node-%02d", i), Zone: zones[i%len(zones)], Usable: true}
	}
	return out
}

func TestBindNodes(t *testing.T) {
	cases := map[string]struct {
		nodes  []Node
		wants  map[string]int64
		before map[string][]string
		want   map[string]Bound
	}{
		"new clouds get free nodes, spread over zones, served by name": {
			nodes: poolOf(6, "a", "b"),
			wants: map[string]int64{"team-b": 2, "team-a": 3},
			want: map[string]Bound{
				"team-a": {Nodes: []string{"node-00", "node-01", "node-02"}},
				"team-b": {Nodes: []string{"node-03", "node-04"}},
			},
		},
		"a cloud keeps its nodes when another arrives": {
			nodes:  poolOf(6, "a", "b"),
			wants:  map[string]int64{"team-a": 2, "aaa-new": 2},
			before: map[string][]string{"team-a": {"node-04", "node-05"}},
			want: map[string]Bound{
				"aaa-new": {Nodes: []string{"node-00", "node-01"}},
				"team-a":  {Nodes: []string{"node-04", "node-05"}},
			},
		},
		"a failed node is replaced from free ones, never from another cloud": {
			nodes: func() []Node {
				n := poolOf(4, "a")
				n[0].Usable = false
				return n
			}(),
			wants:  map[string]int64{"team-a": 2, "team-b": 2},
			before: map[string][]string{"team-a": {"node-00", "node-01"}, "team-b": {"node-02", "node-03"}},
			want: map[string]Bound{
				"team-a": {Nodes: []string{"node-01"}, Short: 1},
				"team-b": {Nodes: []string{"node-02", "node-03"}},
			},
		},
		"a failed node running the cloud's instances stays its, out of service, and a free node takes its place": {
			nodes: func() []Node {
				n := poolOf(4, "a")
				n[0].Usable, n[0].Instances = false, 2
				n[1].Instances = 1
				return n
			}(),
			wants:  map[string]int64{"team-a": 2},
			before: map[string][]string{"team-a": {"node-00", "node-01"}},
			want: map[string]Bound{
				"team-a": {Nodes: []string{"node-01", "node-02"}, Draining: []string{"node-00"}, OutOfService: []string{"node-00"}, Instances: 3},
			},
		},
		"a failed node is replaced before another cloud grows": {
			nodes: func() []Node {
				n := poolOf(3, "a")
				n[2].Usable = false
				return n
			}(),
			// aaa-new, first by name, asks for the one free node team-a
			// needs to replace node-02.
			wants:  map[string]int64{"aaa-new": 1, "team-a": 2},
			before: map[string][]string{"team-a": {"node-01", "node-02"}},
			want: map[string]Bound{
				"aaa-new": {Short: 1},
				"team-a":  {Nodes: []string{"node-00", "node-01"}},
			},
		},
		"a shrinking share frees empty nodes first and waits for the rest": {
			nodes: func() []Node {
				n := poolOf(4, "a")
				n[0].Instances, n[1].Instances = 3, 1
				return n
			}(),
			wants:  map[string]int64{"team-a": 1},
			before: map[string][]string{"team-a": {"node-00", "node-01", "node-02", "node-03"}},
			// node-00 runs 3 instances, node-01 1.
			want: map[string]Bound{"team-a": {Nodes: []string{"node-00"}, Draining: []string{"node-01"}, Instances: 4}},
		},
		"a node two records name stays with the first": {
			nodes:  poolOf(3, "a"),
			wants:  map[string]int64{"team-a": 1, "team-b": 1},
			before: map[string][]string{"team-a": {"node-01"}, "team-b": {"node-01"}},
			want: map[string]Bound{
				"team-a": {Nodes: []string{"node-01"}},
				"team-b": {Nodes: []string{"node-00"}},
			},
		},
		"a removed node is forgotten": {
			nodes:  poolOf(2, "a"),
			wants:  map[string]int64{"team-a": 2},
			before: map[string][]string{"team-a": {"node-00", "node-07"}},
			want:   map[string]Bound{"team-a": {Nodes: []string{"node-00", "node-01"}}},
		},
		"a dedicated pool's cloud gets every usable node": {
			nodes: func() []Node {
				n := poolOf(5, "a", "b")
				n[4].Usable = false
				return n
			}(),
			wants: map[string]int64{"finance": 4},
			want:  map[string]Bound{"finance": {Nodes: []string{"node-00", "node-01", "node-02", "node-03"}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := BindNodes(tc.nodes, tc.wants, tc.before)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("BindNodes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBindNodesSpreadsOverZones: a cloud's nodes are spread over the pool's
// zones, one zone at most one node ahead of another, while each has free
// nodes.
func TestBindNodesSpreadsOverZones(t *testing.T) {
	nodes := poolOf(30, "a", "b", "c")
	got := BindNodes(nodes, map[string]int64{"team-a": 7, "team-b": 8}, nil)
	for c, b := range got {
		per := map[string]int{}
		for _, n := range b.Nodes {
			per[nodes[slices.IndexFunc(nodes, func(x Node) bool { return x.Name == n })].Zone]++
		}
		lo, hi := len(b.Nodes), 0
		for _, z := range []string{"a", "b", "c"} {
			lo, hi = min(lo, per[z]), max(hi, per[z])
		}
		if hi-lo > 1 {
			t.Errorf("%s's nodes per zone %v: not spread", c, per)
		}
	}
}

// TestBindNodesProperties runs random sequences of arrivals, departures,
// failures, repairs, instances and share changes, and checks after every
// step what BindNodes guarantees.
func TestBindNodesProperties(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		nodes := poolOf(4+r.IntN(30), "a", "b", "c")
		wants := map[string]int64{}
		var bound map[string]Bound
		before := func() map[string][]string {
			out := map[string][]string{}
			for c, b := range bound {
				out[c] = append(slices.Clone(b.Nodes), b.Draining...)
			}
			return out
		}
		for step := range 40 {
			if len(nodes) == 0 {
				nodes = poolOf(1, "a")
			}
			switch r.IntN(6) {
			case 0: // a cloud arrives or changes its share
				wants[fmt.Sprintf("cloud-%d", r.IntN(6))] = int64(r.IntN(len(nodes)/2 + 1))
			case 1: // a cloud leaves
				delete(wants, fmt.Sprintf("cloud-%d", r.IntN(6)))
			case 2: // a node fails or is repaired
				i := r.IntN(len(nodes))
				nodes[i].Usable = !nodes[i].Usable
			case 3: // instances come and go
				nodes[r.IntN(len(nodes))].Instances = int32(r.IntN(3))
			case 4: // a node is added
				nodes = append(nodes, Node{Name: fmt.Sprintf("node-x%02d", step), Zone: []string{"a", "b", "c"}[r.IntN(3)], Usable: true})
			case 5: // a node is removed
				i := r.IntN(len(nodes))
				nodes = slices.Delete(nodes, i, i+1)
			}
			prev := before()
			next := BindNodes(nodes, wants, prev)
			checkBinding(t, seed, step, nodes, wants, prev, next)
			// A cloud that left keeps nothing.
			bound = next
		}
	}
}

func checkBinding(t *testing.T, seed uint64, step int, nodes []Node, wants map[string]int64, prev map[string][]string, got map[string]Bound) {
	t.Helper()
	byName := map[string]Node{}
	for _, n := range nodes {
		byName[n.Name] = n
	}
	holder := map[string]string{}
	for c, b := range got {
		if _, ok := wants[c]; !ok {
			t.Fatalf("seed %d step %d: %s holds nodes without a share", seed, step, c)
		}
		if int64(len(b.Nodes)) > wants[c] {
			t.Fatalf("seed %d step %d: %s holds %d nodes, its share is %d", seed, step, c, len(b.Nodes), wants[c])
		}
		for _, n := range append(slices.Clone(b.Nodes), b.Draining...) {
			if h, taken := holder[n]; taken {
				t.Fatalf("seed %d step %d: %s held by %s and %s", seed, step, n, h, c)
			}
			holder[n] = c
			if _, ok := byName[n]; !ok {
				t.Fatalf("seed %d step %d: %s holds %s, which is not in the pool", seed, step, c, n)
			}
		}
		for _, n := range b.Nodes {
			if !byName[n].Usable {
				t.Fatalf("seed %d step %d: %s holds %s, which is out of service", seed, step, c, n)
			}
		}
		for _, n := range b.Draining {
			if byName[n].Instances == 0 {
				t.Fatalf("seed %d step %d: %s drains %s, which runs nothing", seed, step, c, n)
			}
		}
		// Stable: a usable node the cloud held stays its own while the
		// cloud wants at least as many as it keeps.
		kept := 0
		for _, n := range prev[c] {
			if byName[n].Usable && slices.Contains(b.Nodes, n) {
				kept++
			}
		}
		usableBefore := 0
		for _, n := range prev[c] {
			if node, ok := byName[n]; ok && node.Usable && (holderBefore(prev, n) == c) {
				usableBefore++
			}
		}
		if int64(kept) < min(wants[c], int64(usableBefore)) {
			t.Fatalf("seed %d step %d: %s kept %d of its %d usable nodes with a share of %d", seed, step, c, kept, usableBefore, wants[c])
		}
		// (With the nodes held disjoint, stability is what keeps a node
		// from moving: another cloud gets a node only once its holder gave
		// it up, by leaving or shrinking.)
		// Short only when no usable node is free.
		if b.Short > 0 {
			for _, n := range nodes {
				if n.Usable && holder[n.Name] == "" && !heldLater(got, n.Name) {
					t.Fatalf("seed %d step %d: %s is short %d while %s is free", seed, step, c, b.Short, n.Name)
				}
			}
		}
	}
}

// holderBefore is the first cloud by name that held n.
func holderBefore(prev map[string][]string, n string) string {
	first := ""
	for c, held := range prev {
		if slices.Contains(held, n) && (first == "" || c < first) {
			first = c
		}
	}
	return first
}

func heldLater(got map[string]Bound, n string) bool {
	for _, b := range got {
		if slices.Contains(b.Nodes, n) || slices.Contains(b.Draining, n) {
			return true
		}
	}
	return false
}

// BenchmarkBindNodes is a pool of 1,000 nodes in 3 zones shared by 200
// clouds of 5 nodes each, every cloud holding its nodes from the last
// run: the pool function's steady state.
func BenchmarkBindNodes(b *testing.B) {
	nodes := poolOf(1000, "a", "b", "c")
	wants := map[string]int64{}
	for i := range 200 {
		wants[fmt.Sprintf("cloud-%03d", i)] = 5
	}
	first := BindNodes(nodes, wants, nil)
	before := map[string][]string{}
	for c, bd := range first {
		before[c] = bd.Nodes
	}
	b.ReportAllocs()
	for b.Loop() {
		BindNodes(nodes, wants, before)
	}
}

// TestBoundMessage: what a cloud's nodes wait for, as the pool's NodesBound
// says it per claim.
func TestBoundMessage(t *testing.T) {
	for _, tc := range []struct {
		b    Bound
		want string
	}{
		{Bound{Nodes: []string{"n1"}}, ""},
		{Bound{Nodes: []string{"n1"}, Short: 2}, "2 node(s) of its share are not free yet (other clouds' nodes drain, or nodes are out of service)"},
		{Bound{Nodes: []string{"n1"}, Draining: []string{"n2"}}, "the share shrank: it holds [n2] until their instances are gone"},
		{Bound{Nodes: []string{"n1"}, Draining: []string{"n2"}, OutOfService: []string{"n2"}}, "[n2] out of service with its instances on them: held until the instances are gone"},
		{Bound{Draining: []string{"n2"}, OutOfService: []string{"n2"}, Short: 1}, "[n2] out of service with its instances on them: held until the instances are gone; 1 node(s) of its share are not free yet"},
	} {
		if got := tc.b.Message(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.b, got, tc.want)
		}
	}
}
