package quotaset

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestChanges(t *testing.T) {
	v := func(n int64) *int64 { return &n }
	cases := map[string]struct {
		want map[string]*int64
		have map[string]int64
		diff map[string]*int64
	}{
		"unset limits are not managed": {want: map[string]*int64{"cores": nil}, have: map[string]int64{"cores": 20}, diff: map[string]*int64{}},
		"equal":                        {want: map[string]*int64{"cores": v(20)}, have: map[string]int64{"cores": 20}, diff: map[string]*int64{}},
		"differs":                      {want: map[string]*int64{"cores": v(40), "ram": v(1)}, have: map[string]int64{"cores": 20, "ram": 1}, diff: map[string]*int64{"cores": v(40)}},
		"unknown to the service":       {want: map[string]*int64{"gpus": v(1)}, have: map[string]int64{}, diff: map[string]*int64{"gpus": v(1)}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.diff, changes(tc.want, tc.have)); diff != "" {
				t.Errorf("changes(): -want +got:\n%s", diff)
			}
		})
	}
}
