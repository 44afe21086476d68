package pool

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDecide(t *testing.T) {
	at := func(sec int) time.Time { return time.Date(2026, 11, 25, 0, 0, sec, 0, time.UTC) }
	share := func(cloud string, asked, allocated int64) Share {
		return Share{Cloud: cloud, Claim: "t/" + cloud, Asked: asked, Allocated: allocated}
	}
	rec := func(cloud string, asked, allocated int64, since int) Record {
		r := Record{Cloud: cloud, Who: "t/" + cloud, Asked: asked, Allocated: allocated}
		if asked > allocated {
			r.Since = at(since)
		}
		return r
	}
	cases := map[string]struct {
		capacity int64
		before   []Share
		records  []Record
		want     []Share
		blocked  bool
	}{
		"a share given stays when an earlier request asks for more than is free": {
			capacity: 50,
			before:   []Share{share("me", 30, 30)},
			records:  []Record{rec("me", 30, 30, 0), rec("older", 40, 0, 1)},
			want:     []Share{share("me", 30, 30), share("older", 40, 0)},
		},
		"of two requests the earlier is served, whatever the order of the records": {
			capacity: 50,
			records:  []Record{rec("b", 30, 0, 2), rec("a-later", 30, 0, 3), rec("c", 30, 0, 1)},
			want:     []Share{share("a-later", 30, 0), share("b", 30, 0), share("c", 30, 30)},
		},
		"a request that does not fit does not stop a later one that does": {
			capacity: 50,
			before:   []Share{share("holder", 30, 30)},
			records:  []Record{rec("holder", 30, 30, 0), rec("big", 60, 0, 1), rec("small", 20, 0, 3)},
			want:     []Share{share("big", 60, 0), share("holder", 30, 30), share("small", 20, 20)},
		},
		"the same time: the name decides": {
			capacity: 10,
			records:  []Record{rec("me-b", 6, 0, 1), rec("me-a", 6, 0, 1)},
			want:     []Share{share("me-a", 6, 6), share("me-b", 6, 0)},
		},
		"asking for less is granted at once": {
			capacity: 10,
			before:   []Share{share("me", 8, 8), share("other", 2, 2)},
			records:  []Record{rec("me", 4, 8, 0), rec("other", 2, 2, 0)},
			want:     []Share{share("me", 4, 4), share("other", 2, 2)},
		},
		"growing takes only what is free": {
			capacity: 10,
			before:   []Share{share("me", 8, 8), share("other", 2, 2)},
			records:  []Record{rec("me", 9, 8, 1), rec("other", 2, 2, 0)},
			want:     []Share{share("me", 9, 8), share("other", 2, 2)},
		},
		"the pool's share wins over what a record says it has": {
			capacity: 10,
			before:   []Share{share("me", 2, 2)},
			records:  []Record{rec("me", 9, 9, 0), rec("new", 8, 0, 1)},
			want:     []Share{share("me", 9, 2), share("new", 8, 8)},
		},
		"a pool without shares adopts what the records say the clouds have": {
			capacity: 10,
			records:  []Record{rec("old", 6, 6, 0), rec("new", 6, 0, 1)},
			want:     []Share{share("new", 6, 0), share("old", 6, 6)},
		},
		"a cloud whose record is gone has no share": {
			capacity: 10,
			before:   []Share{share("gone", 8, 8)},
			records:  []Record{rec("new", 8, 0, 1)},
			want:     []Share{share("new", 8, 8)},
		},
		"a record that does not say what its cloud has stops every request": {
			capacity: 10,
			records:  []Record{RecordOf(Nodes, map[string]string{}, "old", at(0)), rec("new", 2, 0, 1), rec("shrinking", 1, 3, 0)},
			want:     []Share{share("new", 2, 0), {Cloud: "old", Claim: "old"}, share("shrinking", 1, 1)},
			blocked:  true,
		},
		"an unreadable record of a cloud the pool has a share of keeps it": {
			capacity: 10,
			before:   []Share{share("old", 6, 6)},
			records:  []Record{{Cloud: "old", Who: "t/old", Unknown: "unreadable"}, rec("new", 4, 0, 1)},
			want:     []Share{share("new", 4, 4), share("old", 6, 6)},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := Decide(tc.capacity, tc.before, tc.records)
			if diff := cmp.Diff(tc.want, d.Shares); diff != "" {
				t.Errorf("shares (-want +got):\n%s", diff)
			}
			total := int64(0)
			for _, s := range d.Shares {
				total += s.Allocated
			}
			if d.Allocated != total {
				t.Errorf("Allocated = %d, the shares add up to %d", d.Allocated, total)
			}
			if (len(d.Blocked) > 0) != tc.blocked {
				t.Errorf("blocked: %q, want blocked %v", d.Blocked, tc.blocked)
			}
		})
	}
}

// TestDecideNeverOverCommits: whatever the records ask, in whatever order
// and however many decisions follow one another, the shares never add up
// to more than the pool (unless the records it adopts already do), and a
// share given is never taken back while its cloud still asks for it.
func TestDecideNeverOverCommits(t *testing.T) {
	var before []Share
	for round := range 200 {
		var records []Record
		for i := range 12 {
			asked := int64((round*7 + i*13) % 9)
			held := int64(0)
			for _, s := range before {
				if s.Cloud == string(rune('a'+i)) {
					held = s.Allocated
				}
			}
			if (round+i)%11 == 0 {
				continue // the cloud is gone this round
			}
			records = append(records, Record{Cloud: string(rune('a' + i)), Asked: asked, Allocated: held, Since: time.Unix(int64((round*31+i*17)%50), 0)})
		}
		d := Decide(40, before, records)
		if d.Allocated > 40 {
			t.Fatalf("round %d: %d of 40 nodes allocated: %v", round, d.Allocated, d.Shares)
		}
		for _, s := range d.Shares {
			for _, p := range before {
				if p.Cloud == s.Cloud && s.Asked >= p.Allocated && s.Allocated < p.Allocated {
					t.Fatalf("round %d: %s had %d, still asks for %d, and was given %d", round, s.Cloud, p.Allocated, s.Asked, s.Allocated)
				}
			}
		}
		before = d.Shares
	}
}

func TestRecordRoundTrip(t *testing.T) {
	since := time.Date(2026, 11, 25, 1, 2, 3, 0, time.UTC)
	r := Record{Who: "team-a/prod", Asked: 20, Allocated: 8, Since: since}
	got := RecordOf(Nodes, r.Annotations(Nodes), "prod-x1", time.Time{})
	want := Record{Cloud: "prod-x1", Who: "team-a/prod", Asked: 20, Allocated: 8, Since: since}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a record read back (-want +got):\n%s", diff)
	}
	created := since.Add(-time.Hour)
	if got := RecordOf(Nodes, map[string]string{AnnotationAskedNodes: "3", AnnotationAllocatedNodes: "0"}, "c", created); !got.Since.Equal(created) {
		t.Errorf("a request without its time is ordered at %s, want the usage's creation %s", got.Since, created)
	}
	if got := RecordOf(Nodes, map[string]string{AnnotationAskedNodes: "-3", AnnotationAllocatedNodes: "0"}, "c", created); got.Unknown == "" {
		t.Error("a record asking for -3 nodes is read")
	}
}
