// Package cache keeps the provider's expensive client state — an
// authenticated OpenStack session, a monitored OVSDB connection, a librados
// connection — once per configuration, shared by every controller.
package cache

import (
	"container/list"
	"fmt"
	"sync"
	"time"
)

// A BusyError says that another caller has been building the value of the
// key for longer than the Cache lets callers wait: its endpoint is slow or
// does not answer. Callers return it and try again later instead of
// holding a worker that every other configuration shares; Done tells them
// when: it is closed once that build ends, built or failed.
type BusyError struct {
	Waited time.Duration
	Done   <-chan struct{}
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("another reconcile has been connecting with the same configuration for over %s (its endpoint answers slowly or not at all); trying again later", e.Waited)
}

// A Cache holds one value per key. The least recently used values beyond
// the size are dropped (credentials rotate; old ones must not pile up), as
// are values unused for longer than the idle time; a dropped value is
// released with the Cache's release function.
type Cache[V any] struct {
	size    int
	idle    time.Duration
	release func(V)
	now     func() time.Time

	// buildWait bounds how long a Get waits for another caller's build of
	// the same key (0: as long as the build takes).
	buildWait time.Duration

	mu      sync.Mutex
	lru     *list.List // of *entry[V], most recent first
	entries map[string]*list.Element
	// building serialises building per key, so N reconciles that start
	// together with a cold cache build one value (one token, one
	// connection), not N.
	building map[string]*keyBuild
}

// A keyBuild is a key's build lock (of capacity one) and what says it ended.
type keyBuild struct {
	lock chan struct{}
	// done is closed when the holders of lock are through: by the one that
	// takes the build out of the Cache's map.
	done chan struct{}
}

type entry[V any] struct {
	key   string
	value V
	used  time.Time
}

// New returns a Cache of at most size values (0: no bound) that drops
// values idle for idle and releases dropped values with release (nil:
// nothing to release).
func New[V any](size int, idle time.Duration, release func(V)) *Cache[V] {
	return &Cache[V]{size: size, idle: idle, release: release, now: time.Now,
		lru: list.New(), entries: map[string]*list.Element{}, building: map[string]*keyBuild{}}
}

// WithBuildWait makes a Get that finds the key's value being built by
// another caller wait at most d for it, then return a *BusyError: a build
// against an endpoint that never answers holds one worker, not every
// worker whose reconcile needs that endpoint.
func (c *Cache[V]) WithBuildWait(d time.Duration) *Cache[V] {
	c.buildWait = d
	return c
}

// Get returns the value of key, building it once when there is none. A
// failed build is not kept: the next Get tries again.
func (c *Cache[V]) Get(key string, build func() (V, error)) (V, error) {
	if v, ok := c.lookup(key); ok {
		return v, nil
	}
	c.mu.Lock()
	b, ok := c.building[key]
	if !ok {
		b = &keyBuild{lock: make(chan struct{}, 1), done: make(chan struct{})}
		c.building[key] = b
	}
	c.mu.Unlock()
	if err := c.acquire(b); err != nil {
		var none V
		return none, err
	}
	// Done, the lock leaves the map (callers already waiting on b go on,
	// one at a time; a new caller gets a fresh lock), so neither a built
	// nor a failed key leaves it behind, and the callers it made busy are
	// told.
	defer func() {
		c.mu.Lock()
		if c.building[key] == b {
			delete(c.building, key)
			close(b.done)
		}
		c.mu.Unlock()
		<-b.lock
	}()
	if v, ok := c.lookup(key); ok {
		return v, nil
	}

	v, err := build()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = c.lru.PushFront(&entry[V]{key: key, value: v, used: c.now()})
	for c.size > 0 && c.lru.Len() > c.size {
		c.remove(c.lru.Back())
	}
	return v, nil
}

// acquire takes a key's build lock, waiting at most buildWait.
func (c *Cache[V]) acquire(b *keyBuild) error {
	if c.buildWait <= 0 {
		b.lock <- struct{}{}
		return nil
	}
	t := time.NewTimer(c.buildWait)
	defer t.Stop()
	select {
	case b.lock <- struct{}{}:
		return nil
	case <-t.C:
		return &BusyError{Waited: c.buildWait, Done: b.done}
	}
}

func (c *Cache[V]) lookup(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// The list is in order of use, oldest at the back: drop idle values
	// from there and stop at the first one still in use.
	for e := c.lru.Back(); e != nil && c.idle > 0 && c.now().Sub(e.Value.(*entry[V]).used) > c.idle; e = c.lru.Back() { //nolint:forcetypeassert // only *entry[V] is stored.
		c.remove(e)
	}
	e, ok := c.entries[key]
	if !ok {
		var none V
		return none, false
	}
	ce := e.Value.(*entry[V]) //nolint:forcetypeassert // only *entry[V] is stored.
	ce.used = c.now()
	c.lru.MoveToFront(e)
	return ce.value, true
}

func (c *Cache[V]) remove(e *list.Element) {
	ce := c.lru.Remove(e).(*entry[V]) //nolint:forcetypeassert // only *entry[V] is stored.
	delete(c.entries, ce.key)
	if c.release != nil {
		c.release(ce.value)
	}
}
