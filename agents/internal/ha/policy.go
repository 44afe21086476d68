// Package ha is the HA node agent: it watches libvirt's domain lifecycle
// events and, when a domain stops unexpectedly, does what its policy says —
// restart the domain on this node, hand the node to evacuation through the
// hypervisor operator's Eviction resource, or only report it. It acts once
// per failure and stops restarting a domain that keeps failing.
package ha

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Action is what the agent does about a failure.
type Action string

// The actions a policy may choose.
const (
	ActionRestart Action = "Restart"
	ActionEvict   Action = "Evict"
	ActionReport  Action = "Report"
)

// Policy is the HA agent's configuration file. Nothing is implied: every
// field has a documented default that Load fills in and logs.
type Policy struct {
	// UnexpectedStops are the libvirt stop details that count as a failure
	// (stopped/crashed, stopped/failed by default; "destroyed" and
	// "shutdown" are what operators and Nova do on purpose).
	UnexpectedStops []string `json:"unexpectedStops,omitempty"`
	// Action on a failure: Restart, Evict or Report (default Restart).
	Action Action `json:"action,omitempty"`
	// MaxRestarts of one domain within Window before it counts as flapping
	// and OnFlapping applies instead (default 3).
	MaxRestarts int `json:"maxRestarts,omitempty"`
	// Window over which restarts are counted (default 10m).
	Window Duration `json:"window,omitempty"`
	// OnFlapping: Evict or Report (default Report).
	OnFlapping Action `json:"onFlapping,omitempty"`
}

// Duration is a time.Duration written as "10m" in the policy file.
type Duration struct{ time.Duration }

// UnmarshalJSON reads "10m"-style durations.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration (like 30s or 10m)", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes the duration as "10m0s".
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// The stop details libvirt reports (virDomainEventStoppedDetailType), plus
// "crashed" standing for the CRASHED event as well.
var stopDetails = []string{"shutdown", "destroyed", "crashed", "migrated", "saved", "failed", "from-snapshot"}

// Load reads a policy file, fills defaults and validates it.
func Load(path string) (Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Policy{}, fmt.Errorf("cannot read the HA policy: %w", err)
	}
	var p Policy
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		return Policy{}, fmt.Errorf("HA policy %s: %w", path, err)
	}
	p.Default()
	if err := p.Validate(); err != nil {
		return Policy{}, fmt.Errorf("HA policy %s: %w", path, err)
	}
	return p, nil
}

// Default fills the documented defaults.
func (p *Policy) Default() {
	if len(p.UnexpectedStops) == 0 {
		p.UnexpectedStops = []string{"crashed", "failed"}
	}
	if p.Action == "" {
		p.Action = ActionRestart
	}
	if p.MaxRestarts == 0 {
		p.MaxRestarts = 3
	}
	if p.Window.Duration == 0 {
		p.Window.Duration = 10 * time.Minute
	}
	if p.OnFlapping == "" {
		p.OnFlapping = ActionReport
	}
}

// Validate names the first field that is wrong and what would be valid.
func (p Policy) Validate() error {
	for _, d := range p.UnexpectedStops {
		if !slices.Contains(stopDetails, d) {
			return fmt.Errorf("unexpectedStops: %q is not a libvirt stop detail; valid: %s", d, strings.Join(stopDetails, ", "))
		}
	}
	switch p.Action {
	case ActionRestart, ActionEvict, ActionReport:
	default:
		return fmt.Errorf("action: %q is not valid; use Restart, Evict or Report", p.Action)
	}
	if p.MaxRestarts < 1 {
		return fmt.Errorf("maxRestarts: %d must be at least 1", p.MaxRestarts)
	}
	if p.Window.Duration < time.Second {
		return fmt.Errorf("window: %s must be at least 1s", p.Window)
	}
	switch p.OnFlapping {
	case ActionEvict, ActionReport:
	default:
		return fmt.Errorf("onFlapping: %q is not valid; use Evict or Report (restarting a flapping domain is what the budget prevents)", p.OnFlapping)
	}
	return nil
}
