//go:build ceph

package ceph

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"

	"github.com/ceph/go-ceph/rados"
)

// Built reports whether this binary can talk to Ceph.
const Built = true

type radosConn struct{ c *rados.Conn }

// lifecycle serializes making, connecting and shutting down librados
// connections in this process. Each connection is a CephContext of its
// own, yet the provider's integration tests aborted twice (free(): invalid
// pointer on a librados thread, stop 73 and stop 75), each time as two
// tests' Ceph clusters were connected to at the same moment. Where in
// librados two setups collide is not known; one at a time they have not
// been seen to. Commands on connected clusters still run side by side.
// The cost: a dial to a cluster that does not answer holds the others' for
// up to dialTimeout; connections are kept (Cache), so dials are rare.
var lifecycle sync.Mutex

// Lifecycle runs f while no other librados connection of this process is
// being made, connected or shut down. Code that makes librados connections
// of its own in the provider's process (the integration tests' admin
// connections) makes and shuts them down in f.
func Lifecycle(f func() error) error {
	lifecycle.Lock()
	defer lifecycle.Unlock()
	return f()
}

// DialRados connects to the monitors of cfg with librados.
func DialRados(cfg Config) (conn Conn, err error) {
	err = Lifecycle(func() error {
		conn, err = dialRados(cfg)
		return err
	})
	return conn, err
}

func dialRados(cfg Config) (Conn, error) {
	c, err := rados.NewConnWithUser(cfg.User)
	if err != nil {
		return nil, err
	}
	timeout := strconv.Itoa(int(dialTimeout.Seconds()))
	for k, v := range map[string]string{
		"mon_host": cfg.MonHost, "key": cfg.Key,
		// No ceph.conf or keyring files: everything comes from the ProviderConfig.
		"keyring": "", "client_mount_timeout": timeout, "rados_mon_op_timeout": timeout, "rados_osd_op_timeout": timeout,
		"log_to_stderr": "false", "err_to_stderr": "false",
	} {
		if err := c.SetConfigOption(k, v); err != nil {
			c.Shutdown()
			return nil, fmt.Errorf("ceph option %s: %w", k, err)
		}
	}
	if err := c.Connect(); err != nil {
		c.Shutdown()
		return nil, fmt.Errorf("cannot connect to the Ceph monitors %s as client.%s: %w", cfg.MonHost, cfg.User, err)
	}
	return radosConn{c: c}, nil
}

func (r radosConn) MonCommand(cmd, in []byte) ([]byte, string, error) {
	var (
		out    []byte
		status string
		err    error
	)
	if in != nil {
		out, status, err = r.c.MonCommandWithInputBuffer(cmd, in)
	} else {
		out, status, err = r.c.MonCommand(cmd)
	}
	var coded interface{ ErrorCode() int }
	if errors.As(err, &coded) {
		n := coded.ErrorCode()
		if n < 0 {
			n = -n
		}
		return out, status, &Error{Errno: syscall.Errno(n)}
	}
	return out, status, err
}

func (r radosConn) ListObjects(pool string, limit int) ([]string, error) {
	ioctx, err := r.c.OpenIOContext(pool)
	if err != nil {
		return nil, fmt.Errorf("cannot open ceph pool %q: %w", pool, err)
	}
	defer ioctx.Destroy()
	ioctx.SetNamespace(rados.AllNamespaces)
	iter, err := ioctx.Iter()
	if err != nil {
		return nil, fmt.Errorf("cannot list the objects of ceph pool %q: %w", pool, err)
	}
	defer iter.Close()
	var names []string
	for len(names) < limit && iter.Next() {
		names = append(names, iter.Value())
	}
	return names, iter.Err()
}

func (r radosConn) Shutdown() {
	_ = Lifecycle(func() error { r.c.Shutdown(); return nil }) //nolint:errcheck // f returns none
}
