package ceph

import (
	"slices"
	"sync"
	"time"
)

// reads keeps a cluster's recent whole-cluster reads (the pool list, `df`
// and the client entities) for a while, so that the observations of many
// pools and clients within it share one monitor command each.
type reads struct {
	valid time.Duration
	now   func() time.Time

	// mu is held while a read is under way: reconciles that need the same
	// read at the same moment wait for it rather than each sending it.
	mu   sync.Mutex
	read map[string]timedRead
}

type timedRead struct {
	value any
	at    time.Time
}

func newReads(valid time.Duration) *reads {
	return &reads{valid: valid, now: time.Now, read: map[string]timedRead{}}
}

// get returns the read of prefix from within the validity, or does it.
// A nil reads, or one valid for no time, always reads.
func (r *reads) get(prefix string, read func() (any, error)) (any, error) {
	if r == nil || r.valid <= 0 {
		return read()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.read[prefix]; ok && r.now().Sub(t.at) < r.valid {
		return t.value, nil
	}
	at := r.now()
	v, err := read()
	if err != nil {
		return nil, err
	}
	r.read[prefix] = timedRead{value: v, at: at}
	return v, nil
}

// forget drops the read of prefix, so the next get of it reads again. A
// nil reads keeps nothing to forget.
func (r *reads) forget(prefix string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.read, prefix)
}

// readOnly are the command prefixes that change nothing.
var readOnly = []string{prefixPools, prefixUsage, prefixRules, "osd getcrushmap", "osd crush class ls", "auth get", prefixAuth, "status", "health",
	prefixMonDump, prefixMonMetadata, prefixOSDTree}

// changed drops the reads after a command that may have changed the
// cluster. It is called from within a read too (the command a read sends
// is read-only, so it takes no lock).
func (c *Client) changed(prefix string) {
	if c.reads == nil {
		return
	}
	if slices.Contains(readOnly, prefix) {
		return
	}
	c.reads.mu.Lock()
	defer c.reads.mu.Unlock()
	clear(c.reads.read)
}
