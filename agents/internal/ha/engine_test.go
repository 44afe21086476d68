package ha

import (
	"testing"
	"time"

	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

func crash(uuid string) virt.Event {
	return virt.Event{UUID: uuid, Name: "vm", Kind: virt.EventStopped, Detail: "crashed"}
}

func started(uuid string) virt.Event {
	return virt.Event{UUID: uuid, Name: "vm", Kind: virt.EventStarted}
}

func policy(mut func(*Policy)) Policy {
	var p Policy
	if mut != nil {
		mut(&p)
	}
	p.Default()
	return p
}

func TestEngineActsOncePerFailure(t *testing.T) {
	e := NewEngine(policy(nil))
	// qemu reports a guest panic as CRASHED and then STOPPED/crashed: one failure.
	if d, ok := e.Observe(virt.Event{UUID: "a", Kind: virt.EventCrashed, Detail: "panicked"}); !ok || d.Action != ActionRestart {
		t.Fatalf("first report of a crash: got %v %v, want a restart", d, ok)
	}
	if d, ok := e.Observe(crash("a")); ok {
		t.Fatalf("second report of the same crash acted again: %v", d)
	}
	// Once it ran again, the next crash is a new failure.
	e.Observe(started("a"))
	if _, ok := e.Observe(crash("a")); !ok {
		t.Fatal("a new crash after the domain ran again was ignored")
	}
}

func TestEngineIgnoresDeliberateStops(t *testing.T) {
	e := NewEngine(policy(nil))
	for _, detail := range []string{"shutdown", "destroyed", "migrated", "saved"} {
		if d, ok := e.Observe(virt.Event{UUID: "a", Kind: virt.EventStopped, Detail: detail}); ok {
			t.Errorf("stopped/%s acted on: %v", detail, d)
		}
	}
}

func TestEngineStopsRestartingAFlappingDomain(t *testing.T) {
	now := time.Unix(0, 0)
	e := NewEngine(policy(func(p *Policy) { p.MaxRestarts = 2; p.Window = Duration{time.Minute} }))
	e.Now = func() time.Time { return now }
	var actions []Action
	for range 5 {
		d, ok := e.Observe(crash("a"))
		if !ok {
			t.Fatal("a new failure was ignored")
		}
		actions = append(actions, d.Action)
		now = now.Add(5 * time.Second)
		e.Observe(started("a"))
	}
	want := []Action{ActionRestart, ActionRestart, ActionReport, ActionReport, ActionReport}
	for i := range want {
		if actions[i] != want[i] {
			t.Fatalf("actions = %v, want %v", actions, want)
		}
	}
	// Outside the window the budget is back.
	now = now.Add(2 * time.Minute)
	if d, _ := e.Observe(crash("a")); d.Action != ActionRestart {
		t.Fatalf("after the window: %v, want a restart", d.Action)
	}
}

func TestPolicyValidation(t *testing.T) {
	for name, tc := range map[string]struct {
		mut  func(*Policy)
		want string
	}{
		"unknown stop detail": {func(p *Policy) { p.UnexpectedStops = []string{"exploded"} }, `unexpectedStops: "exploded" is not a libvirt stop detail; valid: shutdown, destroyed, crashed, migrated, saved, failed, from-snapshot`},
		"unknown action":      {func(p *Policy) { p.Action = "Reboot" }, `action: "Reboot" is not valid; use Restart, Evict or Report`},
		"negative budget":     {func(p *Policy) { p.MaxRestarts = -1 }, `maxRestarts: -1 must be at least 1`},
		"restart on flapping": {func(p *Policy) { p.OnFlapping = ActionRestart }, `onFlapping: "Restart" is not valid; use Evict or Report (restarting a flapping domain is what the budget prevents)`},
	} {
		t.Run(name, func(t *testing.T) {
			err := policy(tc.mut).Validate()
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	if err := policy(nil).Validate(); err != nil {
		t.Fatalf("the defaults are invalid: %v", err)
	}
}
