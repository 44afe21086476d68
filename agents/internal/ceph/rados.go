//go:build ceph

package ceph

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ceph/go-ceph/rados"
)

// Conn is a librados connection to the monitors.
type Conn struct{ c *rados.Conn }

// Dial connects as user with the given ceph.conf and, when keyring is set,
// that keyring.
func Dial(conf, user, keyring string, timeout time.Duration) (*Conn, error) {
	opts := map[string]string{}
	if keyring != "" {
		opts["keyring"] = keyring
	}
	return dial(conf, user, opts, timeout)
}

// DialMon connects as user with a key to the monitors Rook lists in its
// rook-ceph-mon-endpoints ConfigMap ("a=10.0.0.1:6789,b=10.0.0.2:6789"), no
// ceph.conf needed.
func DialMon(endpoints, user, key string, timeout time.Duration) (*Conn, error) {
	var hosts []string
	for _, e := range strings.Split(endpoints, ",") {
		if _, addr, ok := strings.Cut(strings.TrimSpace(e), "="); ok {
			hosts = append(hosts, addr)
		} else if e = strings.TrimSpace(e); e != "" {
			hosts = append(hosts, e)
		}
	}
	if len(hosts) == 0 || key == "" {
		return nil, fmt.Errorf("the monitors' endpoints (%q) and a key are needed without a ceph.conf", endpoints)
	}
	return dial("", user, map[string]string{"mon_host": strings.Join(hosts, ","), "key": key, "keyring": ""}, timeout)
}

func dial(conf, user string, opts map[string]string, timeout time.Duration) (*Conn, error) {
	c, err := rados.NewConnWithUser(user)
	if err != nil {
		return nil, err
	}
	if conf != "" {
		if err := c.ReadConfigFile(conf); err != nil {
			c.Shutdown()
			return nil, fmt.Errorf("cannot read %s: %w", conf, err)
		}
	}
	t := strconv.Itoa(int(timeout.Seconds()))
	for k, v := range map[string]string{"client_mount_timeout": t, "rados_mon_op_timeout": t, "rados_osd_op_timeout": t,
		"log_to_stderr": "false", "err_to_stderr": "false"} {
		opts[k] = v
	}
	for k, v := range opts {
		if err := c.SetConfigOption(k, v); err != nil {
			c.Shutdown()
			return nil, fmt.Errorf("ceph option %s: %w", k, err)
		}
	}
	if err := c.Connect(); err != nil {
		c.Shutdown()
		return nil, fmt.Errorf("cannot connect to the Ceph monitors (%s) as client.%s: %w", monitorsOf(conf, opts), user, err)
	}
	return &Conn{c: c}, nil
}

func monitorsOf(conf string, opts map[string]string) string {
	if conf != "" {
		return conf
	}
	return opts["mon_host"]
}

// MonCommand sends one command to the monitors.
func (c *Conn) MonCommand(cmd []byte) ([]byte, string, error) { return c.c.MonCommand(cmd) }

// Close disconnects.
func (c *Conn) Close() { c.c.Shutdown() }
