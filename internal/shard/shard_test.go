package shard

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

// Every composite falls in exactly one shard, whatever the number of
// shards, and an unlabelled resource in shard 0.
func TestSelectorsPartitionTheBuckets(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 16} {
		for b := range Buckets {
			set := labels.Set{Label: fmt.Sprint(b)}
			var in []int
			for i := range n {
				sel, err := Selector(i, n)
				if err != nil {
					t.Fatal(err)
				}
				if sel.Matches(set) {
					in = append(in, i)
				}
			}
			if len(in) != 1 {
				t.Errorf("%d shards: bucket %d is in shards %v, want exactly one", n, b, in)
			}
		}
		for i := range n {
			sel, _ := Selector(i, n)
			if got, want := sel.Matches(labels.Set{}), i == 0; got != want {
				t.Errorf("%d shards: shard %d selects an unlabelled resource: %v, want %v", n, i, got, want)
			}
		}
	}
}

func TestSelectorRefusesWhatCannotBe(t *testing.T) {
	for _, c := range []struct{ i, n int }{{0, 0}, {0, 17}, {2, 2}, {-1, 2}} {
		if _, err := Selector(c.i, c.n); err == nil || !strings.Contains(err.Error(), "shard") {
			t.Errorf("Selector(%d, %d): %v, want an error naming the shards", c.i, c.n, err)
		}
	}
}

// Composites spread over the buckets: no bucket holds more than twice its
// share of 5,000 clouds' names.
func TestOfSpreads(t *testing.T) {
	count := map[string]int{}
	for i := range 5000 {
		count[Of(fmt.Sprintf("tenant-%d-prod-%05x", i%97, i))]++
	}
	if len(count) != Buckets {
		t.Fatalf("%d buckets used, want %d: %v", len(count), Buckets, count)
	}
	for b, c := range count {
		if c > 2*5000/Buckets {
			t.Errorf("bucket %s holds %d of 5000", b, c)
		}
	}
	if Of("team-a-prod-bhdqv") != Of("team-a-prod-bhdqv") {
		t.Error("Of is not stable")
	}
}
