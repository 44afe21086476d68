package ovn

import (
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/ovn-org/libovsdb/ovsdb"

	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
	"github.com/c5c3/consumer-plane/provider/scale/ovnstub"
)

// These tests run the provider's Database against libovsdb's OVSDB server
// (the scale harness's stub, in this process); the integration tests run
// it against ovsdb-server, standalone, as a Raft cluster whose leader is
// killed, and over TLS.

func stubCloud(t *testing.T) *ovnstub.Cloud {
	t.Helper()
	l, err := ovnstub.New(1, []string{"hv-pool-a"}, func(int) net.IP { return net.IPv4(127, 4, 0, 1) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l.Clouds[0]
}

func openNB(t *testing.T, endpoint string) *Database {
	t.Helper()
	m, err := nbdb.FullDatabaseModel()
	if err != nil {
		t.Fatal(err)
	}
	db, err := OpenDatabase(context.Background(), "OVN_Northbound", m, []string{endpoint}, true, nil, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

func TestOpenDatabaseNamesABadEndpoint(t *testing.T) {
	m, err := nbdb.FullDatabaseModel()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"http://ovn:6641", "tcp:ovn", "ssl:", "6641"} {
		_, err := OpenDatabase(context.Background(), "OVN_Northbound", m, []string{"tcp:127.0.0.1:6641", e}, true, nil, logr.Discard())
		if err == nil || !terminal.Is(err) || !strings.Contains(err.Error(), e) || !strings.Contains(err.Error(), "tcp:HOST:PORT") {
			t.Errorf("endpoint %q: %v, want a terminal error naming it and the valid forms", e, err)
		}
	}
}

func TestDatabaseReadsAndWritesRows(t *testing.T) {
	ctx := context.Background()
	db := openNB(t, stubCloud(t).Endpoint)

	// external_ids not empty: libovsdb's server (unlike ovsdb-server)
	// does not compare an empty column in a wait.
	g := &nbdb.HAChassisGroup{UUID: "g", Name: "pool-a", HaChassis: []string{"m0", "m1"}, ExternalIDs: map[string]string{"k": "0"}}
	m0 := &nbdb.HAChassis{UUID: "m0", ChassisName: "node-0", Priority: 2}
	m1 := &nbdb.HAChassis{UUID: "m1", ChassisName: "node-1", Priority: 1}
	ops, err := db.Insert(g, m0, m1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Transact(ctx, db, append([]ovsdb.Operation{NameIsFree(nbdb.HAChassisGroupTable, g.Name)}, ops...)...); err != nil {
		t.Fatal(err)
	}
	// A second create of the name fails at its guard, inserting nothing.
	if _, err := Transact(ctx, db, append([]ovsdb.Operation{NameIsFree(nbdb.HAChassisGroupTable, g.Name)}, ops...)...); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("second create: %v, want ErrNameTaken", err)
	}

	var groups []*nbdb.HAChassisGroup
	if err := db.Select(ctx, &groups, NameIs("pool-a")); err != nil || len(groups) != 1 || len(groups[0].HaChassis) != 2 {
		t.Fatalf("groups named pool-a: %+v, %v", groups, err)
	}
	group := groups[0]
	var members []nbdb.HAChassis
	if err := db.SelectUUIDs(ctx, &members, append(group.HaChassis, "00000000-0000-0000-0000-000000000000")); err != nil || len(members) != 2 {
		t.Fatalf("members by UUID: %+v, %v", members, err)
	}
	got := &nbdb.HAChassisGroup{UUID: group.UUID}
	if err := db.Get(ctx, got); err != nil || got.Name != "pool-a" {
		t.Fatalf("get by UUID: %+v, %v", got, err)
	}
	if err := db.Get(ctx, &nbdb.HAChassisGroup{UUID: "00000000-0000-0000-0000-000000000000"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get of a UUID without a row: %v, want ErrNotFound", err)
	}

	// A guarded write goes through while the row is as read, and fails
	// (writing nothing) once someone changed it.
	read := *group
	want := read
	want.ExternalIDs = map[string]string{"k": "v"}
	guard, err := db.Unchanged(&read, &read.ExternalIDs)
	if err != nil {
		t.Fatal(err)
	}
	upd, err := db.Update(&want, &want.ExternalIDs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Transact(ctx, db, append(guard, upd...)...); err != nil {
		t.Fatalf("guarded update of an unchanged row: %v", err)
	}
	want.ExternalIDs = map[string]string{"k": "lost"}
	if upd, err = db.Update(&want, &want.ExternalIDs); err != nil {
		t.Fatal(err)
	}
	if _, err := Transact(ctx, db, append(guard, upd...)...); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("guarded update of a changed row: %v, want its guard to fail", err)
	}
	if err := db.Get(ctx, got); err != nil || got.ExternalIDs["k"] != "v" {
		t.Fatalf("after the refused write: %+v, %v", got.ExternalIDs, err)
	}
	if _, err := db.Update(&nbdb.HAChassisGroup{UUID: group.UUID}, &got.Name); err == nil {
		t.Error("an update of the immutable name column was built")
	}

	del, err := db.Delete(got)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Transact(ctx, db, del...); err != nil {
		t.Fatal(err)
	}
	if err := db.Select(ctx, &groups); err != nil || len(groups) != 0 {
		t.Fatalf("groups after the delete: %+v, %v", groups, err)
	}
}

// A connection that broke is made again by the next call; while the
// server cannot be reached, calls fail saying why, and one soon after it
// is back succeeds.
func TestDatabaseConnectsAgainAfterABreak(t *testing.T) {
	ctx := context.Background()
	c := stubCloud(t)
	p := newProxy(t, strings.TrimPrefix(c.Endpoint, "tcp:"))
	db := openNB(t, "tcp:"+p.addr)
	var rows []nbdb.NBGlobal
	if err := db.Select(ctx, &rows); err != nil {
		t.Fatal(err)
	}

	p.breakConns()
	p.refuse(true)
	var err error
	for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		err = db.Select(ctx, &rows)
	}
	if err == nil {
		t.Fatal("calls went on through a broken connection")
	}
	err = db.Select(ctx, &rows)
	if err == nil || !strings.Contains(err.Error(), "tcp:"+p.addr) {
		t.Fatalf("call while the server is unreachable: %v, want the endpoint's error", err)
	}

	p.refuse(false)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err = db.Select(ctx, &rows); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not connected again 10s after the server came back: %v", err)
		}
	}
	if n := p.accepted(); n != 2 {
		t.Errorf("%d connections made, want 2 (the first and one after the break)", n)
	}
}

func TestLeads(t *testing.T) {
	db := &Database{name: "OVN_Northbound"}
	row := func(name, mdl string, leader bool) ovsdb.TableUpdates {
		r := ovsdb.Row{"name": name, "model": mdl, "leader": leader}
		return ovsdb.TableUpdates{"Database": {"u": &ovsdb.RowUpdate{New: &r}}}
	}
	for _, c := range []struct {
		updates ovsdb.TableUpdates
		want    bool
	}{
		{row("OVN_Northbound", "clustered", true), true},
		{row("OVN_Northbound", "clustered", false), false},
		{row("OVN_Northbound", "standalone", false), true},
		{row("OVN_Southbound", "clustered", false), true},
		{ovsdb.TableUpdates{}, true},
	} {
		if got := db.leads(c.updates); got != c.want {
			t.Errorf("leads(%v) = %t, want %t", c.updates, got, c.want)
		}
	}
}

// proxy forwards TCP connections to a server and can break them and
// refuse new ones.
type proxy struct {
	addr   string
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
	n      int
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	p := &proxy{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				_ = c.Close()
				continue
			}
			p.n++
			s, err := net.Dial("tcp", target)
			if err != nil {
				p.mu.Unlock()
				_ = c.Close()
				continue
			}
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
			go func() { _, _ = io.Copy(c, s); _ = c.Close() }()
		}
	}()
	t.Cleanup(p.breakConns)
	return p
}

func (p *proxy) breakConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

func (p *proxy) refuse(yes bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = yes
}

func (p *proxy) accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Connections given the same schema share one parsed model, whatever the
// number of clouds; another database's schema gets its own.
func TestDatabasesShareTheModelOfASchema(t *testing.T) {
	l, err := ovnstub.New(2, []string{"hv-pool-a"}, func(i int) net.IP { return net.IPv4(127, 4, 1, byte(1+i)) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	a, b := openNB(t, l.Clouds[0].Endpoint), openNB(t, l.Clouds[1].Endpoint)
	conn, err := Dial(context.Background(), Config{Northbound: []string{l.Clouds[0].Endpoint}, Southbound: []string{l.Clouds[0].Endpoint}, LeaderOnly: true}, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	tables := func(d *Database) uintptr {
		return reflect.ValueOf(d.dbModel().Schema.Tables).Pointer()
	}
	if tables(a) != tables(b) || tables(a) != tables(conn.NB) {
		t.Error("two clouds' Northbound connections parsed the same schema twice")
	}
	if tables(conn.SB) == tables(conn.NB) {
		t.Error("the Southbound connection got the Northbound's model")
	}
}
