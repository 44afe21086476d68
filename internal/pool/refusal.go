package pool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// retryRefusedAfter is how long a refused Shoot is left alone when neither
// it nor the CloudProfile changed: the garden may have changed in ways the
// function cannot see (an extension registered, a quota raised).
const retryRefusedAfter = 10 * time.Minute

// now is the clock of refusals; tests set it.
var now = time.Now

// applyShootPrefix starts Crossplane's Synced message when applying the
// Shoot failed: "cannot compose resources: cannot apply composed resource
// \"shoot\": <the API's error>".
var applyShootPrefix = fmt.Sprintf("cannot apply composed resource %q: ", ResourceShoot)

// refusal decides whether the Shoot is withheld because Gardener refused
// it. Crossplane reports a refused apply only in the composite's Synced
// condition, and, as the apply failed, writes none of the function's
// status, so the claim never hears of it. Seeing the refusal in Synced, the
// function records it in the composite's status and withholds the Shoot:
// the next apply succeeds and the claim's ShootReady says why there is no
// Shoot. A recorded refusal holds while the Shoot and the CloudProfile are
// what was refused, for retryRefusedAfter at most. Only a Shoot that does
// not exist is withheld: withholding an existing one would delete it.
//
// It returns the refusal to keep (nil: compose the Shoot) and whether it is
// new, for a Warning event.
func refusal(req *fnv1.RunFunctionRequest, shoot *gardencorev1beta1.Shoot, profile *gardencorev1beta1.CloudProfileSpec) (*v1alpha1.ShootRefusal, bool, error) {
	fp, err := fingerprint(shoot, profile)
	if err != nil {
		return nil, false, err
	}
	xr := req.GetObserved().GetComposite().GetResource().AsMap()
	status, _ := xr["status"].(map[string]any)
	if msg, ok := refusedApply(status); ok {
		return &v1alpha1.ShootRefusal{Message: msg, Fingerprint: fp, RefusedAt: metav1.NewTime(now().UTC().Truncate(time.Second))}, true, nil
	}
	recorded := &v1alpha1.ShootRefusal{}
	raw, ok := status["shootRefusal"]
	if !ok {
		return nil, false, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, false, err
	}
	if err := json.Unmarshal(b, recorded); err != nil {
		return nil, false, fmt.Errorf("cannot read status.shootRefusal: %w", err)
	}
	if recorded.Fingerprint != fp || now().Sub(recorded.RefusedAt.Time) >= retryRefusedAfter {
		return nil, false, nil
	}
	return recorded, false, nil
}

// refusedApply reads Gardener's refusal from the composite's Synced
// condition: an apply of the Shoot the API refused ("is forbidden" by an
// admission plugin, "is invalid" by validation). Not a refusal: an RBAC
// denial of Crossplane itself, or an API that did not answer.
func refusedApply(status map[string]any) (string, bool) {
	conds, _ := status["conditions"].([]any)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != string(xpv2.TypeSynced) || m["status"] != "False" {
			continue
		}
		msg, _ := m["message"].(string)
		i := strings.Index(msg, applyShootPrefix)
		if i < 0 {
			return "", false
		}
		msg = msg[i+len(applyShootPrefix):]
		if !strings.Contains(msg, " is forbidden: ") && !strings.Contains(msg, " is invalid: ") || strings.Contains(msg, "is forbidden: User ") {
			return "", false
		}
		return msg, true
	}
	return "", false
}

// refusedMessage is what the claim reads while r holds.
func refusedMessage(r *v1alpha1.ShootRefusal) string {
	return "Gardener refused the Shoot: " + r.Message
}

func fingerprint(shoot *gardencorev1beta1.Shoot, profile *gardencorev1beta1.CloudProfileSpec) (string, error) {
	h := sha256.New()
	for _, o := range []any{shoot, profile} {
		b, err := json.Marshal(o)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
