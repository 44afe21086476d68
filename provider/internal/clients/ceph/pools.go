package ceph

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Pool is one entry of `ceph osd pool ls detail`.
type Pool struct {
	Name            string `json:"pool_name"`
	ID              int64  `json:"pool_id"`
	Size            int32  `json:"size"`
	MinSize         int32  `json:"min_size"`
	CrushRule       int    `json:"crush_rule"`
	QuotaMaxBytes   int64  `json:"quota_max_bytes"`
	QuotaMaxObjects int64  `json:"quota_max_objects"`
	Options         struct {
		CompressionMode string `json:"compression_mode"`
	} `json:"options"`
	// ApplicationMetadata: application name to its key/value metadata.
	ApplicationMetadata map[string]map[string]string `json:"application_metadata"`
	// PeeringBuckets is how many zones an acting set must span before the
	// pool's PGs go active (peering_crush_bucket_count): 2 for a pool under
	// Ceph's stretch mode, 1 while it is degraded, 0 for a pool it does not
	// govern.
	PeeringBuckets int `json:"peering_crush_bucket_count"`
}

// StretchModeOf says whether Ceph's stretch mode governs pool, among the
// cluster's pools: StretchModeGoverned, StretchModeOutside (the cluster is
// in stretch mode, every pool made before it was enabled is governed, and
// this one is not: Ceph 16.2.15 can leave out a pool made while stretch
// mode was being enabled), or "" (the cluster is not in stretch mode).
func StretchModeOf(pools map[string]Pool, pool Pool) string {
	if pool.PeeringBuckets > 0 {
		return StretchModeGoverned
	}
	for _, p := range pools {
		if p.PeeringBuckets > 0 {
			return StretchModeOutside
		}
	}
	return ""
}

// What StretchModeOf says.
const (
	StretchModeGoverned = "Governed"
	StretchModeOutside  = "Outside"
)

// Usage is one pool of `ceph df`.
type Usage struct {
	Stored, Objects, MaxAvail int64
}

// Pools lists the cluster's pools by name. The map is shared with other
// callers (see Cache.ReadsValidFor): read it, never change it.
func (c *Client) Pools(ctx context.Context) (map[string]Pool, error) {
	v, err := c.reads.get(prefixPools, func() (any, error) { return c.pools(ctx) })
	if err != nil {
		return nil, err
	}
	return v.(map[string]Pool), nil //nolint:forcetypeassert // only pools() stores under prefixPools.
}

// FreshPools is Pools read from the monitors now, for a decision that must
// not rest on a shared read up to half a poll old: Create, which would
// otherwise take a pool made since by someone else for its own (`osd pool
// create` of an existing pool succeeds). The fresh read is shared after.
func (c *Client) FreshPools(ctx context.Context) (map[string]Pool, error) {
	c.reads.forget(prefixPools)
	return c.Pools(ctx)
}

// Usage returns the usage of every pool by name, shared as Pools is.
func (c *Client) Usage(ctx context.Context) (map[string]Usage, error) {
	v, err := c.reads.get(prefixUsage, func() (any, error) { return c.usage(ctx) })
	if err != nil {
		return nil, err
	}
	return v.(map[string]Usage), nil //nolint:forcetypeassert // only usage() stores under prefixUsage.
}

// The whole-cluster reads Pools, Usage and CrushRules share.
const (
	prefixPools = "osd pool ls"
	prefixUsage = "df"
	prefixRules = "osd crush rule dump"
)

func (c *Client) pools(ctx context.Context) (map[string]Pool, error) {
	var pools []Pool
	if err := c.Command(ctx, map[string]any{"prefix": prefixPools, "detail": "detail"}, nil, &pools); err != nil {
		return nil, err
	}
	out := make(map[string]Pool, len(pools))
	for _, p := range pools {
		out[p.Name] = p
	}
	return out, nil
}

func (c *Client) usage(ctx context.Context) (map[string]Usage, error) {
	var df struct {
		Pools []struct {
			Name  string `json:"name"`
			Stats struct {
				Stored   int64 `json:"stored"`
				Objects  int64 `json:"objects"`
				MaxAvail int64 `json:"max_avail"`
			} `json:"stats"`
		} `json:"pools"`
	}
	if err := c.Command(ctx, map[string]any{"prefix": prefixUsage}, nil, &df); err != nil {
		return nil, err
	}
	out := make(map[string]Usage, len(df.Pools))
	for _, p := range df.Pools {
		out[p.Name] = Usage{Stored: p.Stats.Stored, Objects: p.Stats.Objects, MaxAvail: p.Stats.MaxAvail}
	}
	return out, nil
}

// CrushRules returns the CRUSH rules by name, with their IDs, shared as
// Pools is.
func (c *Client) CrushRules(ctx context.Context) (map[string]int, error) {
	v, err := c.reads.get(prefixRules, func() (any, error) { return c.crushRules(ctx) })
	if err != nil {
		return nil, err
	}
	return v.(map[string]int), nil //nolint:forcetypeassert // only crushRules() stores under prefixRules.
}

func (c *Client) crushRules(ctx context.Context) (map[string]int, error) {
	var rules []struct {
		ID   int    `json:"rule_id"`
		Name string `json:"rule_name"`
	}
	if err := c.Command(ctx, map[string]any{"prefix": prefixRules}, nil, &rules); err != nil {
		return nil, err
	}
	out := make(map[string]int, len(rules))
	for _, r := range rules {
		out[r.Name] = r.ID
	}
	return out, nil
}

// RuleName is the name of the rule of id among rules ("" none).
func RuleName(rules map[string]int, id int) string {
	for name, rid := range rules {
		if rid == id {
			return name
		}
	}
	return ""
}

// CreateDeviceClassRule makes the replicated rule name that places data on
// OSDs of one device class, spread over hosts (ceph's own idempotent
// command: an identical rule is no error).
func (c *Client) CreateDeviceClassRule(ctx context.Context, name, class string) error {
	return c.Command(ctx, map[string]any{"prefix": "osd crush rule create-replicated", "name": name,
		"root": "default", "type": "host", "class": class}, nil, nil)
}

// CreatePool makes a replicated pool with a CRUSH rule ("" the default)
// and size (0 Ceph's default): placed as asked from its first moment.
func (c *Client) CreatePool(ctx context.Context, name, rule string, size int32) error {
	cmd := map[string]any{"prefix": "osd pool create", "pool": name, "pool_type": "replicated"}
	if rule != "" {
		cmd["rule"] = rule
	}
	if size > 0 {
		cmd["size"] = size
	}
	return c.Command(ctx, cmd, nil, nil)
}

// SetPool sets one pool variable (size, compression_mode, crush_rule ...).
// Size 1 is confirmed: a spec that asks for one replica means it (Ceph
// otherwise refuses it as possible data loss).
func (c *Client) SetPool(ctx context.Context, pool, variable, value string) error {
	cmd := map[string]any{"prefix": "osd pool set", "pool": pool, "var": variable, "val": value}
	if variable == "size" && value == "1" {
		cmd["yes_i_really_mean_it"] = true
	}
	return c.Command(ctx, cmd, nil, nil)
}

// SetQuota sets max_bytes or max_objects (0 removes the quota).
func (c *Client) SetQuota(ctx context.Context, pool, field string, value int64) error {
	return c.Command(ctx, map[string]any{"prefix": "osd pool set-quota", "pool": pool, "field": field,
		"val": strconv.FormatInt(value, 10)}, nil, nil)
}

// EnableApplication enables app on the pool.
func (c *Client) EnableApplication(ctx context.Context, pool, app string) error {
	return c.Command(ctx, map[string]any{"prefix": "osd pool application enable", "pool": pool, "app": app,
		"yes_i_really_mean_it": true}, nil, nil)
}

// SetApplicationKey sets a key of the pool's application metadata.
func (c *Client) SetApplicationKey(ctx context.Context, pool, app, key, value string) error {
	return c.Command(ctx, map[string]any{"prefix": "osd pool application set", "pool": pool, "app": app,
		"key": key, "value": value}, nil, nil)
}

// DeletePool deletes a pool and its data. The monitors refuse unless
// mon_allow_pool_delete is true; that refusal is returned as is.
func (c *Client) DeletePool(ctx context.Context, name string) error {
	err := c.Command(ctx, map[string]any{"prefix": "osd pool delete", "pool": name, "pool2": name,
		"yes_i_really_really_mean_it": true}, nil, nil)
	if IsNotFound(err) {
		return nil
	}
	return err
}

// Contents is what a pool holds, as its objects say: objects of any kind
// (the data of RBD images, in the trash or not, with their snapshots, or
// anything else), and among them the RBD images (one header object an
// image). RBD's pool-wide bookkeeping (its directory, trash and settings
// objects, which stay once an image has been) is nothing.
type Contents struct {
	Objects, Images int
	// More is set when the pool holds more than were listed.
	More bool
}

// Empty reports whether the pool holds nothing.
func (c Contents) Empty() bool { return c.Objects == 0 }

func (c Contents) String() string {
	more := ""
	if c.More {
		more = " or more"
	}
	return fmt.Sprintf("%d object(s)%s, %d of them RBD image header(s)", c.Objects, more, c.Images)
}

// rbdBookkeeping are the objects RBD keeps per pool, not per image.
var rbdBookkeeping = map[string]bool{
	"rbd_directory": true, "rbd_info": true, "rbd_trash": true, "rbd_children": true,
	"rbd_mirroring": true, "rbd_namespace": true, "rbd_task": true,
}

// contentsLimit bounds the listing: a pool with data is known by its first
// objects.
const contentsLimit = 1000

// Contents lists a pool's objects (exactly, unlike the usage Ceph reports
// some seconds late) and says what they are.
func (c *Client) Contents(ctx context.Context, pool string) (Contents, error) {
	if err := ctx.Err(); err != nil {
		return Contents{}, err
	}
	names, err := c.Conn.ListObjects(pool, contentsLimit)
	if err != nil {
		return Contents{}, err
	}
	var n Contents
	for _, name := range names {
		if rbdBookkeeping[name] {
			continue
		}
		n.Objects++
		if strings.HasPrefix(name, "rbd_header.") {
			n.Images++
		}
	}
	n.More = len(names) == contentsLimit
	return n, nil
}

// PoolMissing is the error of a pool that is gone.
func PoolMissing(name string) error { return fmt.Errorf("ceph pool %q does not exist", name) }
