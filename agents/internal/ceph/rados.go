//go:build ceph

package ceph

import (
	"fmt"
	"strconv"
	"time"

	"github.com/ceph/go-ceph/rados"
)

// Conn is a librados connection to the monitors.
type Conn struct{ c *rados.Conn }

// Dial connects as user with the given ceph.conf (Rook mounts one into the
// agent's pod) and, when keyring is set, that keyring.
func Dial(conf, user, keyring string, timeout time.Duration) (*Conn, error) {
	c, err := rados.NewConnWithUser(user)
	if err != nil {
		return nil, err
	}
	if err := c.ReadConfigFile(conf); err != nil {
		c.Shutdown()
		return nil, fmt.Errorf("cannot read %s: %w", conf, err)
	}
	t := strconv.Itoa(int(timeout.Seconds()))
	opts := map[string]string{"client_mount_timeout": t, "rados_mon_op_timeout": t, "rados_osd_op_timeout": t,
		"log_to_stderr": "false", "err_to_stderr": "false"}
	if keyring != "" {
		opts["keyring"] = keyring
	}
	for k, v := range opts {
		if err := c.SetConfigOption(k, v); err != nil {
			c.Shutdown()
			return nil, fmt.Errorf("ceph option %s: %w", k, err)
		}
	}
	if err := c.Connect(); err != nil {
		c.Shutdown()
		return nil, fmt.Errorf("cannot connect to the Ceph monitors of %s as client.%s: %w", conf, user, err)
	}
	return &Conn{c: c}, nil
}

// MonCommand sends one command to the monitors.
func (c *Conn) MonCommand(cmd []byte) ([]byte, string, error) { return c.c.MonCommand(cmd) }

// Close disconnects.
func (c *Conn) Close() { c.c.Shutdown() }
