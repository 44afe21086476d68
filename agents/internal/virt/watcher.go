//go:build libvirt

package virt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"libvirt.org/go/libvirt"
)

// ErrDisconnected is returned while the Watcher has no libvirt connection.
var ErrDisconnected = errors.New("not connected to libvirt")

// Watcher keeps one connection to libvirt open, reconnecting when it is
// lost, and delivers the connection's domain lifecycle events. It is the
// only place in the agents that calls libvirt.
type Watcher struct {
	// URI is the libvirt connection URI (qemu:///system on a hypervisor).
	URI string
	// ReadOnly opens a read-only connection, which libvirt serves on its
	// read-only socket (libvirt-sock-ro, world-connectable, no root needed)
	// and which refuses every call that changes a domain or the host.
	// Introspection needs nothing else; StartDomain needs a read-write one.
	ReadOnly bool
	// OnEvent receives every domain lifecycle event. It runs on libvirt's
	// event loop and must not block.
	OnEvent func(Event)
	// OnConnection is told when the connection is made and when it is lost
	// (with the reason).
	OnConnection func(connected bool, err error)
	// RetryInterval is the wait between connection attempts (default 2s).
	RetryInterval time.Duration

	mu   sync.Mutex
	conn *libvirt.Connect
	// lifecycle is the connection's event callback, deregistered on close
	// (the binding keeps callbacks until then).
	lifecycle int
	// domainCaps is read once per connection: it only changes with the
	// hypervisor's binary, which restarts libvirtd.
	domainCaps *Host

	// sizes caches each domain's vCPUs and memory, so that a cycle costs four
	// list calls instead of one call per domain. A lifecycle event of a
	// domain drops its entry and bumps its version, InvalidateAll drops all
	// entries and bumps the epoch; a size read while either happened is not
	// stored, so every entry present is current.
	sizesMu sync.Mutex
	sizes   map[string]sizeEntry
	version map[string]uint64
	epoch   uint64
}

type sizeEntry struct{ vcpus, mem int64 }

var eventLoop sync.Once

// startEventLoop runs libvirt's default event loop for the process. It must
// be registered before the first connection is opened, or that connection
// never delivers events.
func startEventLoop() {
	eventLoop.Do(func() {
		if err := libvirt.EventRegisterDefaultImpl(); err != nil {
			panic(fmt.Sprintf("cannot register libvirt's event loop: %v", err))
		}
		go func() {
			for {
				if err := libvirt.EventRunDefaultImpl(); err != nil {
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	})
}

// Run connects and stays connected until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	startEventLoop()
	retry := w.RetryInterval
	if retry == 0 {
		retry = 2 * time.Second
	}
	for {
		closed, err := w.connect()
		w.notify(err == nil, err)
		if err == nil {
			select {
			case <-ctx.Done():
				w.disconnect()
				return nil
			case reason := <-closed:
				w.disconnect()
				w.notify(false, fmt.Errorf("libvirt closed the connection to %s (%s)", w.URI, reason))
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(retry):
		}
	}
}

func (w *Watcher) notify(connected bool, err error) {
	if w.OnConnection != nil {
		w.OnConnection(connected, err)
	}
}

func (w *Watcher) connect() (<-chan string, error) {
	open := libvirt.NewConnect
	if w.ReadOnly {
		open = libvirt.NewConnectReadOnly
	}
	conn, err := open(w.URI)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to libvirt at %s: %w", w.URI, err)
	}
	// A remote connection notices a dead daemon through keepalives; local
	// drivers (test:///) do not support them, which is fine.
	_ = conn.SetKeepAlive(5, 3)
	closed := make(chan string, 1)
	if err := conn.RegisterCloseCallback(func(_ *libvirt.Connect, reason libvirt.ConnectCloseReason) {
		select {
		case closed <- closeReason(reason):
		default:
		}
	}); err != nil {
		_, _ = conn.Close()
		return nil, fmt.Errorf("cannot watch the libvirt connection to %s: %w", w.URI, err)
	}
	id, err := conn.DomainEventLifecycleRegister(nil, func(_ *libvirt.Connect, d *libvirt.Domain, ev *libvirt.DomainEventLifecycle) {
		e := Event{Kind: eventKind(ev.Event), Detail: eventDetail(ev)}
		e.UUID, _ = d.GetUUIDString()
		e.Name, _ = d.GetName()
		w.invalidate(e.UUID)
		if w.OnEvent != nil {
			w.OnEvent(e)
		}
	})
	if err != nil {
		_ = conn.UnregisterCloseCallback()
		_, _ = conn.Close()
		return nil, fmt.Errorf("cannot subscribe to domain events at %s: %w", w.URI, err)
	}
	w.mu.Lock()
	w.conn, w.domainCaps, w.lifecycle = conn, nil, id
	w.mu.Unlock()
	w.InvalidateAll()
	return closed, nil
}

func (w *Watcher) disconnect() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn != nil {
		_ = w.conn.DomainEventDeregister(w.lifecycle)
		_ = w.conn.UnregisterCloseCallback()
		_, _ = w.conn.Close()
		w.conn = nil
	}
}

// Connected reports whether the Watcher holds a connection now.
func (w *Watcher) Connected() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.conn != nil
}

// Snapshot introspects the host and all its domains.
func (w *Watcher) Snapshot() (Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil {
		return Snapshot{}, ErrDisconnected
	}
	host, err := w.host()
	if err != nil {
		return Snapshot{}, err
	}
	// Four filtered lists give every domain's state without a call per
	// domain (through libvirtd each call is a round trip: 1,000 GetInfo calls
	// take ~0.12s, the four lists ~12ms). A domain that changes state between
	// two lists may show its old state or be missed; its lifecycle event
	// triggers the next snapshot, which sees it right.
	s := Snapshot{Host: host}
	seen := map[string]bool{}
	for _, l := range stateLists {
		doms, err := w.conn.ListAllDomains(l.flag)
		if err != nil {
			return Snapshot{}, fmt.Errorf("cannot list %s domains: %w", l.name, err)
		}
		for i := range doms {
			d, err := w.domainOf(&doms[i], l.state)
			_ = doms[i].Free()
			if err != nil {
				// A domain undefined between the list and the lookup is gone, not an error.
				if isNoDomain(err) {
					continue
				}
				return Snapshot{}, err
			}
			if !seen[d.UUID] {
				seen[d.UUID] = true
				s.Domains = append(s.Domains, d)
			}
		}
	}
	return s, nil
}

// stateLists are the ListAllDomains filters that together cover every
// domain; "other" (blocked, shutdown, crashed, pmsuspended) asks each
// domain for its state.
var stateLists = []struct {
	name  string
	flag  libvirt.ConnectListAllDomainsFlags
	state DomainState
}{
	{"running", libvirt.CONNECT_LIST_DOMAINS_RUNNING, StateRunning},
	{"paused", libvirt.CONNECT_LIST_DOMAINS_PAUSED, StatePaused},
	{"shut off", libvirt.CONNECT_LIST_DOMAINS_SHUTOFF, StateShutoff},
	{"other", libvirt.CONNECT_LIST_DOMAINS_OTHER, ""},
}

// InvalidateAll drops every cached domain size: the next Snapshot reads
// them all again (the hypervisor agent does so on its resync, which catches
// memory or vCPU changes that come without a lifecycle event).
func (w *Watcher) InvalidateAll() {
	w.sizesMu.Lock()
	defer w.sizesMu.Unlock()
	w.epoch++
	w.sizes = map[string]sizeEntry{}
	// The epoch guards reads in flight, so versions can start afresh (and
	// those of undefined domains go).
	w.version = map[string]uint64{}
}

func (w *Watcher) invalidate(uuid string) {
	w.sizesMu.Lock()
	defer w.sizesMu.Unlock()
	if w.version == nil {
		w.version = map[string]uint64{}
	}
	w.version[uuid]++
	delete(w.sizes, uuid)
}

// domainOf reads one domain: its state from the list it came from (or,
// for "other" states, from the domain), its size from the cache or GetInfo.
func (w *Watcher) domainOf(d *libvirt.Domain, state DomainState) (Domain, error) {
	out := Domain{State: state}
	var err error
	if out.UUID, err = d.GetUUIDString(); err != nil {
		return out, err
	}
	if out.Name, err = d.GetName(); err != nil {
		return out, err
	}
	w.sizesMu.Lock()
	e, ok := w.sizes[out.UUID]
	ver, epoch := w.version[out.UUID], w.epoch
	w.sizesMu.Unlock()
	if ok && out.State != "" {
		out.VCPUs, out.MemoryBytes = e.vcpus, e.mem
		return out, nil
	}
	info, err := d.GetInfo()
	if err != nil {
		return out, fmt.Errorf("cannot read domain %s: %w", out.Name, err)
	}
	out.State = domainState(info.State)
	out.VCPUs, out.MemoryBytes = int64(info.NrVirtCpu), int64(info.Memory)<<10
	w.sizesMu.Lock()
	// Stored only if no event touched the domain while it was read.
	if w.version[out.UUID] == ver && w.epoch == epoch {
		w.sizes[out.UUID] = sizeEntry{vcpus: out.VCPUs, mem: out.MemoryBytes}
	}
	w.sizesMu.Unlock()
	return out, nil
}

func (w *Watcher) host() (Host, error) {
	c := w.conn
	var h Host
	var err error
	if h.Hostname, err = c.GetHostname(); err != nil {
		return h, fmt.Errorf("cannot read the hostname: %w", err)
	}
	if h.HypervisorType, err = c.GetType(); err != nil {
		return h, fmt.Errorf("cannot read the hypervisor type: %w", err)
	}
	v, err := c.GetVersion()
	if err != nil {
		return h, fmt.Errorf("cannot read the hypervisor version: %w", err)
	}
	h.HypervisorVersion = formatVersion(v)
	if v, err = c.GetLibVersion(); err != nil {
		return h, fmt.Errorf("cannot read the libvirt version: %w", err)
	}
	h.LibvirtVersion = formatVersion(v)
	info, err := c.GetNodeInfo()
	if err != nil {
		return h, fmt.Errorf("cannot read the node info: %w", err)
	}
	h.CPUs, h.MemoryBytes = int64(info.Cpus), int64(info.Memory)<<10
	caps, err := c.GetCapabilities()
	if err != nil {
		return h, fmt.Errorf("cannot read the host capabilities: %w", err)
	}
	if err := parseCapabilities(caps, &h); err != nil {
		return h, err
	}
	if w.domainCaps == nil {
		dc := &Host{}
		// Drivers without domain capabilities (the test driver) leave them empty.
		if doc, err := c.GetDomainCapabilities("", "", "", "", 0); err == nil {
			if err := parseDomainCapabilities(doc, dc); err != nil {
				return h, err
			}
		}
		w.domainCaps = dc
	}
	h.DomainArch, h.DomainVirtType = w.domainCaps.DomainArch, w.domainCaps.DomainVirtType
	h.CPUModes, h.Devices, h.Features = w.domainCaps.CPUModes, w.domainCaps.Devices, w.domainCaps.Features
	return h, nil
}

// StartDomain boots a defined, inactive domain.
func (w *Watcher) StartDomain(uuid string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == nil {
		return ErrDisconnected
	}
	d, err := w.conn.LookupDomainByUUIDString(uuid)
	if err != nil {
		return fmt.Errorf("cannot find domain %s: %w", uuid, err)
	}
	defer func() { _ = d.Free() }()
	if err := d.Create(); err != nil {
		return fmt.Errorf("cannot start domain %s: %w", uuid, err)
	}
	return nil
}

func isNoDomain(err error) bool {
	var lerr libvirt.Error
	return errors.As(err, &lerr) && lerr.Code == libvirt.ERR_NO_DOMAIN
}

func domainState(s libvirt.DomainState) DomainState {
	switch s {
	case libvirt.DOMAIN_RUNNING:
		return StateRunning
	case libvirt.DOMAIN_BLOCKED:
		return StateBlocked
	case libvirt.DOMAIN_PAUSED:
		return StatePaused
	case libvirt.DOMAIN_SHUTDOWN:
		return StateShutdown
	case libvirt.DOMAIN_SHUTOFF:
		return StateShutoff
	case libvirt.DOMAIN_CRASHED:
		return StateCrashed
	case libvirt.DOMAIN_PMSUSPENDED:
		return StatePMSuspended
	}
	return StateNoState
}

func eventKind(t libvirt.DomainEventType) EventKind {
	switch t {
	case libvirt.DOMAIN_EVENT_DEFINED:
		return EventDefined
	case libvirt.DOMAIN_EVENT_UNDEFINED:
		return EventUndefined
	case libvirt.DOMAIN_EVENT_STARTED:
		return EventStarted
	case libvirt.DOMAIN_EVENT_SUSPENDED:
		return EventSuspended
	case libvirt.DOMAIN_EVENT_RESUMED:
		return EventResumed
	case libvirt.DOMAIN_EVENT_STOPPED:
		return EventStopped
	case libvirt.DOMAIN_EVENT_SHUTDOWN:
		return EventShutdown
	case libvirt.DOMAIN_EVENT_PMSUSPENDED:
		return EventPMSuspended
	case libvirt.DOMAIN_EVENT_CRASHED:
		return EventCrashed
	}
	return EventKind(fmt.Sprintf("event-%d", t))
}

// eventDetail names the detail of stopped and crashed events, the ones the
// HA agent judges; other kinds keep libvirt's number.
func eventDetail(ev *libvirt.DomainEventLifecycle) string {
	switch ev.Event {
	case libvirt.DOMAIN_EVENT_STOPPED:
		switch libvirt.DomainEventStoppedDetailType(ev.Detail) {
		case libvirt.DOMAIN_EVENT_STOPPED_SHUTDOWN:
			return "shutdown"
		case libvirt.DOMAIN_EVENT_STOPPED_DESTROYED:
			return "destroyed"
		case libvirt.DOMAIN_EVENT_STOPPED_CRASHED:
			return "crashed"
		case libvirt.DOMAIN_EVENT_STOPPED_MIGRATED:
			return "migrated"
		case libvirt.DOMAIN_EVENT_STOPPED_SAVED:
			return "saved"
		case libvirt.DOMAIN_EVENT_STOPPED_FAILED:
			return "failed"
		case libvirt.DOMAIN_EVENT_STOPPED_FROM_SNAPSHOT:
			return "from-snapshot"
		}
	case libvirt.DOMAIN_EVENT_CRASHED:
		switch libvirt.DomainEventCrashedDetailType(ev.Detail) {
		case libvirt.DOMAIN_EVENT_CRASHED_PANICKED:
			return "panicked"
		case libvirt.DOMAIN_EVENT_CRASHED_CRASHLOADED:
			return "crashloaded"
		}
	}
	return fmt.Sprint(ev.Detail)
}

func closeReason(r libvirt.ConnectCloseReason) string {
	switch r {
	case libvirt.CONNECT_CLOSE_REASON_ERROR:
		return "error"
	case libvirt.CONNECT_CLOSE_REASON_EOF:
		return "end of file"
	case libvirt.CONNECT_CLOSE_REASON_KEEPALIVE:
		return "keepalive timeout"
	case libvirt.CONNECT_CLOSE_REASON_CLIENT:
		return "closed by client"
	}
	return fmt.Sprint(int(r))
}
