package ceph

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Entity is one CephX entity of `ceph auth get`.
type Entity struct {
	Name string            `json:"entity"`
	Key  string            `json:"key"`
	Caps map[string]string `json:"caps"`
}

// GetEntity returns the entity ("client.x"); an error IsNotFound when
// there is none.
func (c *Client) GetEntity(ctx context.Context, entity string) (*Entity, error) {
	var out []Entity
	if err := c.Command(ctx, map[string]any{"prefix": "auth get", "entity": entity}, nil, &out); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &Error{Errno: syscall.ENOENT, Prefix: "auth get", Status: "no entity " + entity}
	}
	return &out[0], nil
}

// Clients returns the cluster's client entities ("client.x") by name,
// from one `auth ls` shared by the observations within the reads'
// validity, as Pools is: a storage pool's Ceph answers one command per
// half poll for all its tenants' clients, not one each. Other daemons'
// entities (and their keys) are not kept. The map is shared with other
// callers: read it, never change it.
func (c *Client) Clients(ctx context.Context) (map[string]Entity, error) {
	v, err := c.reads.get(prefixAuth, func() (any, error) { return c.clients(ctx) })
	if err != nil {
		return nil, err
	}
	return v.(map[string]Entity), nil //nolint:forcetypeassert // only clients() stores under prefixAuth.
}

// prefixAuth is the whole-cluster read Clients shares.
const prefixAuth = "auth ls"

func (c *Client) clients(ctx context.Context) (map[string]Entity, error) {
	var dump struct {
		Entities []Entity `json:"auth_dump"`
	}
	if err := c.Command(ctx, map[string]any{"prefix": prefixAuth}, nil, &dump); err != nil {
		return nil, err
	}
	out := map[string]Entity{}
	for _, e := range dump.Entities {
		if strings.HasPrefix(e.Name, "client.") {
			out[e.Name] = e
		}
	}
	return out, nil
}

// capsList is caps as the auth commands take them: daemon, caps, daemon, ...
func capsList(caps map[string]string) []string {
	daemons := slices.Sorted(maps.Keys(caps))
	out := make([]string, 0, 2*len(daemons))
	for _, d := range daemons {
		out = append(out, d, caps[d])
	}
	return out
}

// AddEntity creates the entity with caps and a new key; the monitors
// check the caps and refuse bad ones (EINVAL) without creating anything.
func (c *Client) AddEntity(ctx context.Context, entity string, caps map[string]string) error {
	return c.Command(ctx, map[string]any{"prefix": "auth add", "entity": entity, "caps": capsList(caps)}, nil, nil)
}

// SetCaps replaces the entity's caps.
func (c *Client) SetCaps(ctx context.Context, entity string, caps map[string]string) error {
	return c.Command(ctx, map[string]any{"prefix": "auth caps", "entity": entity, "caps": capsList(caps)}, nil, nil)
}

// RotateKey gives the entity a new key, keeping its caps: Ceph before Reef
// has no rotate command, so a keyring with a fresh key is imported over it.
func (c *Client) RotateKey(ctx context.Context, entity string, caps map[string]string) error {
	key, err := NewKey(time.Now())
	if err != nil {
		return err
	}
	var kr strings.Builder
	fmt.Fprintf(&kr, "[%s]\n\tkey = %s\n", entity, key)
	for _, d := range slices.Sorted(maps.Keys(caps)) {
		fmt.Fprintf(&kr, "\tcaps %s = %q\n", d, caps[d])
	}
	return c.Command(ctx, map[string]any{"prefix": "auth import"}, []byte(kr.String()), nil)
}

// DeleteEntity removes the entity; a missing one is no error.
func (c *Client) DeleteEntity(ctx context.Context, entity string) error {
	err := c.Command(ctx, map[string]any{"prefix": "auth del", "entity": entity}, nil, nil)
	if IsNotFound(err) {
		return nil
	}
	return err
}

// NewKey makes a CephX secret as ceph-authtool --gen-print-key does: the
// encoded CryptoKey (type 1 = AES, creation time, 16 random bytes), base64.
func NewKey(now time.Time) (string, error) {
	b := make([]byte, 2+8+2+16)
	binary.LittleEndian.PutUint16(b[0:], 1)
	binary.LittleEndian.PutUint32(b[2:], uint32(now.Unix()))
	binary.LittleEndian.PutUint32(b[6:], uint32(now.Nanosecond()))
	binary.LittleEndian.PutUint16(b[10:], 16)
	if _, err := rand.Read(b[12:]); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}
