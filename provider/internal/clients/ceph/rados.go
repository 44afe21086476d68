//go:build ceph

package ceph

import (
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"github.com/ceph/go-ceph/rados"
)

// Built reports whether this binary can talk to Ceph.
const Built = true

type radosConn struct{ c *rados.Conn }

// DialRados connects to the monitors of cfg with librados.
func DialRados(cfg Config) (Conn, error) {
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

func (r radosConn) Shutdown() { r.c.Shutdown() }
