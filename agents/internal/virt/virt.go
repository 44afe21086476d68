// Package virt is the agents' view of a node's hypervisor as libvirt reports
// it: a Snapshot of the host and its domains, and the lifecycle Events that
// say when to look again. The types here need no cgo; the libvirt-backed
// Watcher that fills them is built with the `libvirt` tag (watcher.go), so
// the rest of the module builds and unit-tests on machines without
// libvirt-dev.
package virt

import "fmt"

// DomainState is a domain's state as libvirt names it (virDomainState).
type DomainState string

// The domain states libvirt reports.
const (
	StateNoState     DomainState = "nostate"
	StateRunning     DomainState = "running"
	StateBlocked     DomainState = "blocked"
	StatePaused      DomainState = "paused"
	StateShutdown    DomainState = "shutdown"
	StateShutoff     DomainState = "shutoff"
	StateCrashed     DomainState = "crashed"
	StatePMSuspended DomainState = "pmsuspended"
)

// Active reports whether a domain in this state holds its vCPUs and memory
// on the host (libvirt's notion of an active domain).
func (s DomainState) Active() bool {
	switch s {
	case StateRunning, StateBlocked, StatePaused, StateShutdown, StatePMSuspended:
		return true
	}
	return false
}

// Domain is one libvirt domain.
type Domain struct {
	UUID  string
	Name  string
	State DomainState
	// VCPUs and MemoryBytes are what the domain is given (current, not max).
	VCPUs       int64
	MemoryBytes int64
}

// Cell is one NUMA cell of the host.
type Cell struct {
	ID          uint64
	CPUs        int64
	MemoryBytes int64
}

// Host is what libvirt says about the machine itself.
type Host struct {
	Hostname string
	// HypervisorType is libvirt's driver name (QEMU, Test, ...).
	HypervisorType    string
	HypervisorVersion string
	LibvirtVersion    string
	Arch              string
	CPUModel          string
	Sockets, Cores    int
	Threads           int
	CPUs              int64
	MemoryBytes       int64
	Cells             []Cell
	// DomainCapabilities, when the driver reports them (the test driver does not).
	DomainArch     string
	DomainVirtType string
	CPUModes       []string
	Devices        []string
	Features       []string
}

// Snapshot is one introspection of a node.
type Snapshot struct {
	Host    Host
	Domains []Domain
}

// Allocated sums the vCPUs and memory of the active domains: what they hold
// on the host.
func (s Snapshot) Allocated() (vcpus, memBytes int64) {
	for _, d := range s.Domains {
		if d.State.Active() {
			vcpus += d.VCPUs
			memBytes += d.MemoryBytes
		}
	}
	return vcpus, memBytes
}

// EventKind is the kind of a domain lifecycle event (virDomainEventType).
type EventKind string

// The lifecycle event kinds.
const (
	EventDefined     EventKind = "defined"
	EventUndefined   EventKind = "undefined"
	EventStarted     EventKind = "started"
	EventSuspended   EventKind = "suspended"
	EventResumed     EventKind = "resumed"
	EventStopped     EventKind = "stopped"
	EventShutdown    EventKind = "shutdown"
	EventPMSuspended EventKind = "pmsuspended"
	EventCrashed     EventKind = "crashed"
)

// Event is one domain lifecycle event.
type Event struct {
	UUID string
	Name string
	Kind EventKind
	// Detail refines Kind the way libvirt does, for "stopped":
	// shutdown, destroyed, crashed, migrated, saved, failed, from-snapshot.
	Detail string
}

// formatVersion turns libvirt's packed version (major*1e6 + minor*1e3 +
// release) into "major.minor.release".
func formatVersion(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v/1000000, v/1000%1000, v%1000)
}
