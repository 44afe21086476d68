package shootkubeconfig

import (
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
)

// TestRenewWindow: a kubeconfig is renewed renewBeforeSeconds before its
// expiry, or half way through the lifetime it really got when that is not
// longer, so that one issued shorter than asked for is not requested anew
// on every poll.
func TestRenewWindow(t *testing.T) {
	issued := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	stamp := []byte(issued.Format(time.RFC3339))
	asks := func(lifetime, renewBefore int64) v1alpha1.ShootKubeconfigParameters {
		return v1alpha1.ShootKubeconfigParameters{ExpirationSeconds: ptr.To(lifetime), RenewBeforeSeconds: ptr.To(renewBefore)}
	}
	for name, tc := range map[string]struct {
		p        v1alpha1.ShootKubeconfigParameters
		issuedAt []byte
		expires  time.Time
		want     time.Duration
	}{
		"issued as asked: renewBeforeSeconds":             {asks(86400, 21600), stamp, issued.Add(24 * time.Hour), 6 * time.Hour},
		"issued for an hour of the day asked: half of it": {asks(86400, 21600), stamp, issued.Add(time.Hour), 30 * time.Minute},
		"a token of 10 minutes, renewed 6 hours early":    {asks(600, 21600), stamp, issued.Add(10 * time.Minute), 5 * time.Minute},
		"a Secret without issuedAt: the lifetime asked":   {asks(3600, 21600), nil, issued.Add(time.Hour), 30 * time.Minute},
		"renewBeforeSeconds just short of the lifetime":   {asks(600, 590), stamp, issued.Add(10 * time.Minute), 590 * time.Second},
		"the CRD's defaults":                              {v1alpha1.ShootKubeconfigParameters{}, stamp, issued.Add(24 * time.Hour), 6 * time.Hour},
	} {
		if got := renewWindow(tc.p, tc.issuedAt, tc.expires); got != tc.want {
			t.Errorf("%s: renewed %v before its expiry, want %v", name, got, tc.want)
		}
	}
}
