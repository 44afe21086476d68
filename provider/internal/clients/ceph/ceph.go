// Package ceph is the provider's door to Ceph: monitor commands (the JSON
// the ceph CLI sends) over one librados connection per cluster and user,
// shared by every controller. librados is cgo; it is compiled in only with
// the build tag "ceph" (rados.go), so the rest of the provider builds and
// tests without librados-dev. Everything here above the Conn interface is
// plain Go.
package ceph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/consumer-plane/provider/internal/clients/cache"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// Config is what a Ceph ProviderConfig and its Secret resolve to.
type Config struct {
	// MonHost is the monitors' addresses as Ceph's mon_host takes them.
	MonHost string
	// User without "client.", and its key.
	User, Key string
}

func (c Config) key() string {
	h := sha256.Sum256([]byte(c.MonHost + "\x00" + c.User + "\x00" + c.Key))
	return hex.EncodeToString(h[:])
}

// A Conn sends monitor commands. The librados connection implements it
// (rados.go); tests may use anything else.
type Conn interface {
	// MonCommand sends one JSON command with an optional input buffer and
	// returns the output, the status text and an *Error.
	MonCommand(cmd, in []byte) (out []byte, status string, err error)
	// ListObjects lists up to limit object names of a pool, in every
	// namespace.
	ListObjects(pool string, limit int) ([]string, error)
	Shutdown()
}

// Error is a failed monitor command: its errno and Ceph's status text
// (which says what was wrong, "Error EINVAL: ...").
type Error struct {
	Errno  syscall.Errno
	Status string
	Prefix string
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Status)
	if msg == "" {
		msg = e.Errno.Error()
	}
	return fmt.Sprintf("ceph %s: %s", e.Prefix, msg)
}

// IsErrno reports whether err is a monitor command error with errno n.
func IsErrno(err error, n syscall.Errno) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.Errno == n
}

// IsNotFound reports ENOENT.
func IsNotFound(err error) bool { return IsErrno(err, syscall.ENOENT) }

var (
	commands = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cobaltcore_provider_ceph_commands_total",
		Help: "Ceph monitor commands by prefix and result (ok or the errno name).",
	}, []string{"prefix", "result"})
	commandCount atomic.Int64
)

func init() { metrics.Registry.MustRegister(commands) }

// CommandCount is the number of monitor commands this process has sent.
func CommandCount() int64 { return commandCount.Load() }

// Client sends typed monitor commands over a Conn.
type Client struct {
	Conn Conn
	// MonHost is what the connection was made with (published to clients).
	MonHost string
	// reads are the cluster's recent whole-cluster reads, shared by every
	// Client of the connection (nil: every read asks the monitors).
	reads *reads
}

// Command sends cmd (its "prefix" names the command) and decodes a JSON
// answer into out (nil: none expected). EINVAL, EPERM, EACCES, ERANGE and
// ENOTSUP are terminal: the command, not the moment, is wrong.
func (c *Client) Command(ctx context.Context, cmd map[string]any, in []byte, out any) error {
	if out != nil {
		cmd["format"] = "json"
	}
	res, _, err := c.RawCommand(ctx, cmd, in)
	if err != nil || out == nil || len(res) == 0 {
		return err
	}
	if err := json.Unmarshal(res, out); err != nil {
		return fmt.Errorf("ceph %s: cannot decode the answer: %w", cmd["prefix"], err)
	}
	return nil
}

// RawCommand sends cmd as Command does and returns its output as it is
// (a binary CRUSH map, say) and the status text.
func (c *Client) RawCommand(ctx context.Context, cmd map[string]any, in []byte) ([]byte, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	prefix, _ := cmd["prefix"].(string)
	b, err := json.Marshal(cmd)
	if err != nil {
		return nil, "", err
	}
	commandCount.Add(1)
	res, status, err := c.Conn.MonCommand(b, in)
	// Even a failed write may have changed something.
	c.changed(prefix)
	if err != nil {
		var ce *Error
		if !errors.As(err, &ce) {
			commands.WithLabelValues(prefix, "error").Inc()
			return nil, "", fmt.Errorf("ceph %s: %w", prefix, err)
		}
		ce.Prefix, ce.Status = prefix, status
		commands.WithLabelValues(prefix, errnoName(ce.Errno)).Inc()
		switch ce.Errno {
		case syscall.EINVAL, syscall.EPERM, syscall.EACCES, syscall.ERANGE, syscall.ENOTSUP:
			return nil, "", terminal.Wrap(ce)
		}
		return nil, "", ce
	}
	commands.WithLabelValues(prefix, "ok").Inc()
	return res, status, nil
}

func errnoName(n syscall.Errno) string {
	if name := unix.ErrnoName(n); name != "" {
		return name
	}
	return fmt.Sprintf("errno%d", int(n))
}

// dialTimeout bounds connecting to the monitors (librados otherwise waits
// forever for an unreachable cluster).
const dialTimeout = 10 * time.Second

// A Cache holds one connection per cluster and user, shared by every
// controller. A connection unused for the idle time is shut down.
type Cache struct {
	// Dial makes a connection; DialRados (rados.go) or a test's.
	Dial  func(Config) (Conn, error)
	conns *cache.Cache[*cluster]
	// readsValid is how long a whole-cluster read serves other reads.
	readsValid time.Duration
}

// cluster is a connection and its recent reads.
type cluster struct {
	conn  Conn
	reads *reads
}

// NewCache returns a Cache dialing with DialRados.
func NewCache(idle time.Duration) *Cache {
	return &Cache{Dial: DialRados, conns: cache.New(0, idle, func(c *cluster) { c.conn.Shutdown() })}
}

// ReadsValidFor lets one `osd pool ls detail` and one `df` of a cluster
// serve every pool's observation for d (the provider sets half its poll
// interval): N pools of a cluster cost two monitor commands per poll
// instead of 2N. Any other command through the connection (a create, a
// set, a delete) drops them, so a resource's next observation after a
// change sees it.
func (c *Cache) ReadsValidFor(d time.Duration) *Cache {
	c.readsValid = d
	return c
}

// Client returns a client of cfg's cluster, connecting once.
func (c *Cache) Client(cfg Config) (*Client, error) {
	cl, err := c.conns.Get(cfg.key(), func() (*cluster, error) {
		conn, err := c.Dial(cfg)
		if err != nil {
			return nil, err
		}
		return &cluster{conn: conn, reads: newReads(c.readsValid)}, nil
	})
	if err != nil {
		return nil, err
	}
	return &Client{Conn: cl.conn, MonHost: cfg.MonHost, reads: cl.reads}, nil
}
