//go:build !ceph

package ceph

import (
	"errors"

	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// Built reports whether this binary can talk to Ceph.
const Built = false

// DialRados fails: this binary was built without librados.
func DialRados(Config) (Conn, error) {
	return nil, terminal.Wrap(errors.New("this provider binary was built without Ceph support: build it with -tags ceph,pacific (needs librados-dev)"))
}

// Lifecycle runs f: without librados there is nothing to serialize.
func Lifecycle(f func() error) error { return f() }
