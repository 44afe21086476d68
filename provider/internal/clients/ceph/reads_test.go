package ceph

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// clusterConn answers the pool list and df as a cluster without pools
// would, the entity list as one with an OSD and a tenant's client, and
// records the commands.
type clusterConn struct{ sent []map[string]any }

func (f *clusterConn) ListObjects(string, int) ([]string, error) { return nil, nil }

func (f *clusterConn) MonCommand(cmd, _ []byte) ([]byte, string, error) {
	var m map[string]any
	_ = json.Unmarshal(cmd, &m)
	f.sent = append(f.sent, m)
	switch m["prefix"] {
	case prefixPools:
		return []byte(`[]`), "", nil
	case prefixUsage:
		return []byte(`{"pools": []}`), "", nil
	case prefixAuth:
		return []byte(`{"auth_dump": [{"entity": "osd.0", "key": "osd-key", "caps": {"osd": "allow *"}},
			{"entity": "client.tenant-a", "key": "a-key", "caps": {"mon": "profile rbd", "osd": "profile rbd pool=a"}}]}`), "", nil
	}
	return nil, "", nil
}

func (f *clusterConn) Shutdown() {}

// count is how many commands of prefix f was sent.
func (f *clusterConn) count(prefix string) int {
	n := 0
	for _, m := range f.sent {
		if m["prefix"] == prefix {
			n++
		}
	}
	return n
}

// sharedReadsClient is a Client of a clusterConn whose whole-cluster reads
// are shared for a minute.
func sharedReadsClient(t *testing.T) (*clusterConn, *Client) {
	t.Helper()
	f := &clusterConn{}
	c := NewCache(time.Hour).ReadsValidFor(time.Minute)
	c.Dial = func(Config) (Conn, error) { return f, nil }
	cl, err := c.Client(Config{MonHost: "mon", User: "admin", Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return f, cl
}

// TestPoolObservationsShareOneReadPerValidity: the observations of 20
// pools within the validity cost one `osd pool ls detail` and one `df`; a
// write through the connection drops them, so the next observation reads
// again, as does one after the validity.
func TestPoolObservationsShareOneReadPerValidity(t *testing.T) {
	f := &clusterConn{}
	c := NewCache(time.Hour).ReadsValidFor(time.Minute)
	c.Dial = func(Config) (Conn, error) { return f, nil }
	now := time.Unix(0, 0)
	ctx := context.Background()
	client := func() *Client {
		cl, err := c.Client(Config{MonHost: "mon", User: "admin", Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		cl.reads.now = func() time.Time { return now }
		return cl
	}
	for range 20 {
		cl := client()
		if _, err := cl.Pools(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Usage(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if p, d := f.count(prefixPools), f.count(prefixUsage); p != 1 || d != 1 {
		t.Fatalf("20 observations sent %d pool lists and %d df, want 1 and 1", p, d)
	}
	if err := client().SetQuota(ctx, "p", "max_bytes", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := client().Pools(ctx); err != nil {
		t.Fatal(err)
	}
	if p := f.count(prefixPools); p != 2 {
		t.Fatalf("after a write: %d pool lists, want 2 (the write drops the read)", p)
	}
	now = now.Add(2 * time.Minute)
	if _, err := client().Pools(ctx); err != nil {
		t.Fatal(err)
	}
	if p := f.count(prefixPools); p != 3 {
		t.Fatalf("after the validity: %d pool lists, want 3", p)
	}
}

// TestClientObservationsShareOneAuthList: the observations of 20 clients
// within the validity cost one `auth ls`, which keeps the clients and no
// other daemon's key; creating a client drops it, so the next observation
// sees the new one.
func TestClientObservationsShareOneAuthList(t *testing.T) {
	f, cl := sharedReadsClient(t)
	ctx := context.Background()
	for range 20 {
		clients, err := cl.Clients(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if a := clients["client.tenant-a"]; a.Key != "a-key" || a.Caps["osd"] != "profile rbd pool=a" {
			t.Fatalf("client.tenant-a: %+v", a)
		}
		if _, ok := clients["osd.0"]; ok || len(clients) != 1 {
			t.Fatalf("kept %v, want client.tenant-a alone", clients)
		}
	}
	if n := f.count(prefixAuth); n != 1 {
		t.Fatalf("20 observations sent %d auth ls, want 1", n)
	}
	if err := cl.AddEntity(ctx, "client.tenant-b", map[string]string{"mon": "profile rbd"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Clients(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.count(prefixAuth); n != 2 {
		t.Fatalf("after a create: %d auth ls, want 2 (the write drops the read)", n)
	}
}

// TestReadsWithoutValidityAlwaysAsk: a Client without shared reads (or
// with no validity) sends every read.
func TestReadsWithoutValidityAlwaysAsk(t *testing.T) {
	f := &fakeConn{out: `[]`}
	cl := &Client{Conn: f}
	for range 3 {
		if _, err := cl.Pools(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.sent) != 3 {
		t.Fatalf("%d commands, want 3", len(f.sent))
	}
}

// TestFreshPoolsReadsNow: a create decides on a pool list read now, not on
// the shared one, which may predate a pool someone else made since; the
// fresh read is shared after.
func TestFreshPoolsReadsNow(t *testing.T) {
	f, cl := sharedReadsClient(t)
	ctx := context.Background()
	for _, read := range []func(context.Context) (map[string]Pool, error){cl.Pools, cl.FreshPools, cl.Pools} {
		if _, err := read(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(f.sent) != 2 {
		t.Fatalf("Pools, FreshPools, Pools sent %d pool lists, want 2 (the fresh one read again, the next shared it)", len(f.sent))
	}
}
