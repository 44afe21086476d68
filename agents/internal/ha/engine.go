package ha

import (
	"fmt"
	"slices"
	"time"

	"github.com/c5c3/consumer-plane/agents/internal/virt"
)

// Decision is what the engine wants done about one event.
type Decision struct {
	Action Action
	// Domain is the failed domain.
	Domain virt.Event
	// Reason says why, for the event and the Eviction.
	Reason string
}

// Engine turns lifecycle events into decisions. It is the agent's memory:
// which domains have a failure already acted on, and when each domain was
// restarted. It is not safe for concurrent use; the agent feeds it from one
// goroutine.
type Engine struct {
	Policy Policy
	Now    func() time.Time

	// handled holds domains whose current failure has been acted on; only
	// seeing the domain run again makes its next stop a new failure (libvirt
	// may report one crash as CRASHED and then STOPPED/crashed).
	handled  map[string]bool
	restarts map[string][]time.Time
}

// NewEngine returns an engine for a validated policy.
func NewEngine(p Policy) *Engine {
	return &Engine{Policy: p, Now: time.Now, handled: map[string]bool{}, restarts: map[string][]time.Time{}}
}

// Observe takes one event and returns a decision when it is a failure that
// needs acting on.
func (e *Engine) Observe(ev virt.Event) (Decision, bool) {
	switch {
	case ev.Kind == virt.EventStarted || ev.Kind == virt.EventResumed:
		delete(e.handled, ev.UUID)
		return Decision{}, false
	case ev.Kind == virt.EventUndefined:
		delete(e.handled, ev.UUID)
		delete(e.restarts, ev.UUID)
		return Decision{}, false
	case !e.unexpected(ev):
		return Decision{}, false
	case e.handled[ev.UUID]:
		return Decision{}, false
	}
	e.handled[ev.UUID] = true
	what := fmt.Sprintf("domain %s (%s) stopped unexpectedly (%s/%s)", ev.Name, ev.UUID, ev.Kind, ev.Detail)
	if e.Policy.Action != ActionRestart {
		return Decision{Action: e.Policy.Action, Domain: ev, Reason: what}, true
	}
	now := e.Now()
	recent := slices.DeleteFunc(e.restarts[ev.UUID], func(t time.Time) bool { return now.Sub(t) >= e.Policy.Window.Duration })
	if len(recent) >= e.Policy.MaxRestarts {
		e.restarts[ev.UUID] = recent
		return Decision{Action: e.Policy.OnFlapping, Domain: ev, Reason: fmt.Sprintf("%s and is flapping: restarted %d times within %s, the policy's maxRestarts",
			what, len(recent), e.Policy.Window)}, true
	}
	e.restarts[ev.UUID] = append(recent, now)
	return Decision{Action: ActionRestart, Domain: ev, Reason: what}, true
}

func (e *Engine) unexpected(ev virt.Event) bool {
	switch ev.Kind {
	case virt.EventStopped:
		return slices.Contains(e.Policy.UnexpectedStops, ev.Detail)
	case virt.EventCrashed:
		return slices.Contains(e.Policy.UnexpectedStops, "crashed")
	}
	return false
}
