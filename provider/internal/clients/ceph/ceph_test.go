package ceph

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// fakeConn answers every command with one errno and status, and records
// the commands.
type fakeConn struct {
	errno  syscall.Errno
	status string
	out    string
	sent   []map[string]any
	input  []string
	// objects are the pool's, for ListObjects.
	objects []string
}

func (f *fakeConn) ListObjects(_ string, limit int) ([]string, error) {
	return f.objects[:min(limit, len(f.objects))], nil
}

func (f *fakeConn) MonCommand(cmd, in []byte) ([]byte, string, error) {
	var m map[string]any
	_ = json.Unmarshal(cmd, &m)
	f.sent = append(f.sent, m)
	f.input = append(f.input, string(in))
	if f.errno != 0 {
		return nil, f.status, &Error{Errno: f.errno}
	}
	return []byte(f.out), f.status, nil
}

func (f *fakeConn) Shutdown() {}

func TestCommandErrors(t *testing.T) {
	cases := map[string]struct {
		errno    syscall.Errno
		terminal bool
		notFound bool
	}{
		"bad caps":        {syscall.EINVAL, true, false},
		"not allowed":     {syscall.EPERM, true, false},
		"missing":         {syscall.ENOENT, false, true},
		"monitor busy":    {syscall.EAGAIN, false, false},
		"quorum timeouts": {syscall.ETIMEDOUT, false, false},
	}
	for name, tc := range cases {
		c := &Client{Conn: &fakeConn{errno: tc.errno, status: "Error: what ceph said"}}
		err := c.Command(context.Background(), map[string]any{"prefix": "auth add"}, nil, nil)
		if terminal.Is(err) != tc.terminal || IsNotFound(err) != tc.notFound {
			t.Errorf("%s: %v: terminal %v notFound %v", name, err, terminal.Is(err), IsNotFound(err))
		}
		if !strings.Contains(err.Error(), "ceph auth add: Error: what ceph said") {
			t.Errorf("%s: message %q lacks the command and Ceph's status", name, err)
		}
	}
}

func TestRotateKeyImportsAKeyringWithTheCaps(t *testing.T) {
	f := &fakeConn{}
	c := &Client{Conn: f}
	if err := c.RotateKey(context.Background(), "client.x", map[string]string{"osd": "profile rbd pool=a", "mon": "profile rbd"}); err != nil {
		t.Fatal(err)
	}
	if f.sent[0]["prefix"] != "auth import" {
		t.Fatalf("sent %v", f.sent)
	}
	kr := f.input[0]
	for _, want := range []string{"[client.x]\n", "\tkey = AQ", "\tcaps mon = \"profile rbd\"\n", "\tcaps osd = \"profile rbd pool=a\"\n"} {
		if !strings.Contains(kr, want) {
			t.Errorf("keyring %q lacks %q", kr, want)
		}
	}
}

// TestNewKey: the layout ceph-authtool uses (type AES, created, 16 bytes).
func TestNewKey(t *testing.T) {
	now := time.Unix(1700000000, 5)
	k, err := NewKey(now)
	if err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(k)
	if err != nil || len(b) != 28 {
		t.Fatalf("key %q: %d bytes, %v", k, len(b), err)
	}
	if binary.LittleEndian.Uint16(b) != 1 || binary.LittleEndian.Uint32(b[2:]) != 1700000000 || binary.LittleEndian.Uint16(b[10:]) != 16 {
		t.Errorf("key header %x", b[:12])
	}
	if k2, _ := NewKey(now); k2 == k {
		t.Error("two keys are equal")
	}
}

// TestContents: a pool's objects say whether it holds data. RBD's pool-wide
// bookkeeping, which stays once an image has been, is none; an image, in
// the trash or with snapshots, keeps its header and data objects; anything
// else is data too.
func TestContents(t *testing.T) {
	for name, tc := range map[string]struct {
		objects []string
		empty   bool
		images  int
	}{
		"a new pool":                         {nil, true, 0},
		"its images gone, its trash purged":  {[]string{"rbd_directory", "rbd_info", "rbd_trash", "rbd_children"}, true, 0},
		"an image":                           {[]string{"rbd_directory", "rbd_id.vol-1", "rbd_header.1a2b", "rbd_object_map.1a2b", "rbd_data.1a2b.0000000000000000"}, false, 1},
		"an image in the trash":              {[]string{"rbd_directory", "rbd_trash", "rbd_header.1a2b"}, false, 1},
		"data of an image whose header went": {[]string{"rbd_directory", "rbd_data.1a2b.0000000000000001"}, false, 0},
		"an object of another kind":          {[]string{"backup.tar"}, false, 0},
	} {
		c := &Client{Conn: &fakeConn{objects: tc.objects}}
		got, err := c.Contents(context.Background(), "volumes")
		if err != nil {
			t.Fatal(err)
		}
		if got.Empty() != tc.empty || got.Images != tc.images {
			t.Errorf("%s: %s (empty %v), want empty %v with %d image(s)", name, got, got.Empty(), tc.empty, tc.images)
		}
	}
}

// Stretch mode governs the pools Ceph gave its peering rule; a pool
// without it in a cluster where others have it is outside; in a cluster
// where none has it, stretch mode is off.
func TestStretchModeOf(t *testing.T) {
	governed, plain := Pool{Name: "volumes", PeeringBuckets: 2}, Pool{Name: "images"}
	degraded := Pool{Name: "volumes", PeeringBuckets: 1}
	for _, tc := range []struct {
		pools map[string]Pool
		pool  Pool
		want  string
	}{
		{map[string]Pool{"volumes": governed, "images": plain}, governed, StretchModeGoverned},
		{map[string]Pool{"volumes": degraded}, degraded, StretchModeGoverned},
		{map[string]Pool{"volumes": governed, "images": plain}, plain, StretchModeOutside},
		{map[string]Pool{"images": plain}, plain, ""},
	} {
		if got := StretchModeOf(tc.pools, tc.pool); got != tc.want {
			t.Errorf("pool %+v among %v: %q, want %q", tc.pool, tc.pools, got, tc.want)
		}
	}
}
