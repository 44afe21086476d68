package pace

import (
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	cases := map[string]struct {
		since, steady, want time.Duration
	}{
		"just changed":              {0, time.Minute, Soonest},
		"a few seconds ago":         {6 * time.Second, time.Minute, Soonest},
		"a minute ago":              {time.Minute, time.Minute, 15 * time.Second},
		"four minutes ago":          {4 * time.Minute, time.Minute, time.Minute},
		"a day ago":                 {24 * time.Hour, time.Minute, time.Minute},
		"steady shorter than first": {time.Minute, time.Second, time.Second},
		"clock skew":                {-time.Hour, time.Minute, Soonest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Next(tc.since, tc.steady); got != tc.want {
				t.Errorf("Next(%v, %v) = %v, want %v", tc.since, tc.steady, got, tc.want)
			}
		})
	}
}

func TestLastChange(t *testing.T) {
	created := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	later := created.Add(time.Minute)
	if got := LastChange(created, time.Time{}, later, created.Add(-time.Hour)); !got.Equal(later) {
		t.Errorf("LastChange = %v, want %v", got, later)
	}
	if got := LastChange(created); !got.Equal(created) {
		t.Errorf("LastChange without transitions = %v, want %v", got, created)
	}
}
