package cache

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestConcurrentGetsBuildOnce(t *testing.T) {
	c := New[int](0, time.Hour, nil)
	var builds atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Get("k", func() (int, error) { builds.Add(1); time.Sleep(10 * time.Millisecond); return 7, nil })
			if err != nil || v != 7 {
				t.Errorf("Get = %d, %v", v, err)
			}
		}()
	}
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Fatalf("%d builds, want 1", n)
	}
}

func TestFailedBuildIsNotKept(t *testing.T) {
	c := New[int](0, time.Hour, nil)
	if _, err := c.Get("k", func() (int, error) { return 0, errors.New("down") }); err == nil {
		t.Fatal("no error")
	}
	if len(c.building) != 0 {
		t.Fatalf("a failed build left %d build locks behind", len(c.building))
	}
	if v, err := c.Get("k", func() (int, error) { return 1, nil }); err != nil || v != 1 {
		t.Fatalf("after a failure: %d, %v", v, err)
	}
}

// TestDroppedValuesAreReleased: beyond the size the least recently used
// goes, and so does a value idle for too long.
func TestDroppedValuesAreReleased(t *testing.T) {
	var released []string
	c := New(2, time.Minute, func(v string) { released = append(released, v) })
	now := time.Unix(0, 0)
	c.now = func() time.Time { return now }
	get := func(k string) { _, _ = c.Get(k, func() (string, error) { return k, nil }) }
	get("a")
	get("b")
	get("a") // b is now the least recently used
	get("c")
	if !slices.Equal(released, []string{"b"}) {
		t.Fatalf("released %v, want [b]", released)
	}
	now = now.Add(2 * time.Minute)
	get("d")
	if !slices.Equal(released, []string{"b", "a", "c"}) {
		t.Fatalf("released %v, want [b a c] after the idle time", released)
	}
}

// TestSlowBuildMakesOthersBusy: while one caller builds a key's value
// against an endpoint that does not answer, the others get a BusyError
// after the build wait instead of waiting as long as the build, with a
// Done that is closed when the build ends (not before); other keys are not
// held up, and once the build ends the value is served.
func TestSlowBuildMakesOthersBusy(t *testing.T) {
	c := New[int](0, time.Hour, nil).WithBuildWait(20 * time.Millisecond)
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := c.Get("hanging", func() (int, error) { <-release; return 1, nil })
		done <- err
	}()
	// Let the first Get take the build lock.
	for {
		c.mu.Lock()
		b := c.building["hanging"]
		taken := b != nil && len(b.lock) == 1
		c.mu.Unlock()
		if taken {
			break
		}
		time.Sleep(time.Millisecond)
	}
	_, err := c.Get("hanging", func() (int, error) { t.Error("a second build while the first is under way"); return 0, nil })
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Get while another build hangs = %v, want a BusyError", err)
	}
	if v, err := c.Get("other", func() (int, error) { return 2, nil }); err != nil || v != 2 {
		t.Fatalf("another key while one hangs: %d, %v", v, err)
	}
	select {
	case <-busy.Done:
		t.Fatal("the BusyError's Done is closed while the build still hangs")
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case <-busy.Done:
	case <-time.After(10 * time.Second):
		t.Fatal("the BusyError's Done is not closed after the build ended")
	}
	if v, err := c.Get("hanging", func() (int, error) { return 0, errors.New("built again") }); err != nil || v != 1 {
		t.Fatalf("after the build: %d, %v", v, err)
	}
}
