// Package ovnstub serves the OVN databases of many clouds at once, for
// measuring the provider at landscape scale (#55): each cloud has its own
// Northbound and Southbound database, answering on its own loopback address
// (the one the OpenStack stub gives the cloud, on another port), so that
// the provider holds one connection per cloud and database, as it does
// where every cloud runs its own OVN.
//
// It is libovsdb's in-memory OVSDB server (the same protocol, transactions
// and monitors, from memory and at once), not ovsdb-server: 10,000
// ovsdb-server processes do not fit one machine, and one shared by every
// cloud would answer every cloud's reads from one table. The
// provider's OVN integration tests and benchmark run against the real
// ovsdb-server (a 3-member Raft cluster); this stub is for scale only.
//
// Each cloud's Southbound holds the chassis of its hypervisor pools
// (gateway chassis announcing the pool as their availability zone, as the
// OVS agent does); its Northbound starts empty. The stub counts, per
// cloud, the connections the provider opens and the transactions that
// change a database.
package ovnstub

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/rpc2"
	"github.com/go-logr/logr"
	"github.com/go-logr/stdr"
	"github.com/google/uuid"
	"github.com/ovn-org/libovsdb/client"
	"github.com/ovn-org/libovsdb/database"
	"github.com/ovn-org/libovsdb/database/inmemory"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"
	"github.com/ovn-org/libovsdb/ovsdb/serverdb"
	"github.com/ovn-org/libovsdb/server"

	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/nbdb"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn/sbdb"
)

// ChassisPerPool is how many chassis each hypervisor pool registers in a
// cloud's Southbound.
const ChassisPerPool = 3

// Chassis is the name (system-id) of a pool's k-th chassis; the pools are
// the landscape's, so every cloud's Southbound names the same nodes.
func Chassis(pool string, k int) string { return fmt.Sprintf("%s-node-%d", pool, k) }

// models are the three databases' models, built once and shared by every
// cloud's server (they hold the schemas, not rows).
type models struct {
	client         map[string]model.ClientDBModel
	nb, sb, server model.DatabaseModel
}

func newModels() (*models, error) {
	nbc, err := nbdb.FullDatabaseModel()
	if err != nil {
		return nil, err
	}
	sbc, err := sbdb.FullDatabaseModel()
	if err != nil {
		return nil, err
	}
	svc, err := serverdb.FullDatabaseModel()
	if err != nil {
		return nil, err
	}
	m := &models{client: map[string]model.ClientDBModel{nbc.Name(): nbc, sbc.Name(): sbc, svc.Name(): svc}}
	for _, x := range []struct {
		to     *model.DatabaseModel
		schema ovsdb.DatabaseSchema
		client model.ClientDBModel
	}{{&m.nb, nbdb.Schema(), nbc}, {&m.sb, sbdb.Schema(), sbc}, {&m.server, serverdb.Schema(), svc}} {
		dbm, errs := model.NewDatabaseModel(x.schema, x.client)
		if len(errs) > 0 {
			return nil, fmt.Errorf("database model %s: %v", x.schema.Name, errs)
		}
		*x.to = dbm
	}
	return m, nil
}

// A Landscape is the OVN databases of n clouds.
type Landscape struct {
	Clouds []*Cloud
	pools  []string
	port   int
	models *models
	mu     sync.Mutex
}

// New serves the databases of n clouds, cloud i on ip(i), all on one free
// port, each Southbound with ChassisPerPool chassis of every pool.
func New(n int, pools []string, ip func(i int) net.IP) (*Landscape, error) {
	// libovsdb's server package sets every stdr logger of the process to
	// verbosity 5 when it loads: its in-memory databases would log each
	// row they store.
	stdr.SetVerbosity(0)
	m, err := newModels()
	if err != nil {
		return nil, err
	}
	l := &Landscape{pools: pools, models: m}
	for i := range n {
		if _, err := l.add(i, ip(i)); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// Add serves the databases of one more cloud, at ip.
func (l *Landscape) Add(ip net.IP) (*Cloud, error) {
	l.mu.Lock()
	i := len(l.Clouds)
	l.mu.Unlock()
	return l.add(i, ip)
}

func (l *Landscape) add(i int, ip net.IP) (*Cloud, error) {
	db := &countingDB{Database: inmemory.NewDatabase(l.models.client)}
	srv, err := server.NewOvsdbServer(db, l.models.nb, l.models.sb, l.models.server)
	if err != nil {
		return nil, err
	}
	c := &Cloud{Index: i, db: db, server: srv}
	srv.OnConnect(func(*rpc2.Client) {
		c.connects.Add(1)
		c.open.Add(1)
		c.lastConnect.Store(time.Now().UnixNano())
	})
	srv.OnDisConnect(func(*rpc2.Client) { c.open.Add(-1) })
	if err := c.register(l.models.sb, l.pools); err != nil {
		return nil, fmt.Errorf("cloud %d: %w", i, err)
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.port == 0 {
		if l.port, err = freePort(ip); err != nil {
			return nil, err
		}
	}
	c.Endpoint = "tcp:" + net.JoinHostPort(ip.String(), fmt.Sprint(l.port))
	served := make(chan error, 1)
	go func() { served <- srv.Serve("tcp", net.JoinHostPort(ip.String(), fmt.Sprint(l.port))) }()
	// Serve listens, then accepts until Close: ready once it listens.
	for deadline := time.Now().Add(10 * time.Second); !srv.Ready(); {
		select {
		case err := <-served:
			return nil, fmt.Errorf("cloud %d: OVN databases on %s: %w", i, c.Endpoint, err)
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cloud %d: OVN databases on %s not listening after 10s", i, c.Endpoint)
		}
		time.Sleep(time.Millisecond)
	}
	l.Clouds = append(l.Clouds, c)
	return c, nil
}

// Close stops every cloud's databases.
func (l *Landscape) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.Clouds {
		c.mu.Lock()
		if c.nb != nil {
			c.nb.Close()
		}
		c.mu.Unlock()
		c.server.Close()
	}
}

func freePort(ip net.IP) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close() //nolint:errcheck // only its port is wanted
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// A Cloud is one cloud's Northbound and Southbound databases, served on one
// endpoint (each database a client asks for by name).
type Cloud struct {
	Index int
	// Endpoint is the databases' ovsdb endpoint (tcp:IP:PORT).
	Endpoint string

	db                          *countingDB
	server                      *server.OvsdbServer
	connects, open, lastConnect atomic.Int64
	stubWrites                  atomic.Int64

	mu sync.Mutex
	nb client.Client // the stub's own Northbound client, once Drift or Priority needed it
}

// Counts are what a cloud's databases saw since they started.
type Counts struct {
	// Connects counts the connections opened (a Northbound and a
	// Southbound client each open one; the stub's own Northbound client,
	// once DriftPriority or Priority ran, one); Open is how many are open now.
	Connects, Open int64
	// Writes counts the transactions that changed a database, but the
	// stub's own (Drift).
	Writes int64
}

// Counts returns the cloud's counts.
func (c *Cloud) Counts() Counts {
	return Counts{Connects: c.connects.Load(), Open: c.open.Load(), Writes: c.db.writes.Load() - c.stubWrites.Load()}
}

// LastConnect is when the provider (or anyone) last connected.
func (c *Cloud) LastConnect() time.Time { return time.Unix(0, c.lastConnect.Load()) }

// register writes the pools' chassis into the Southbound, as their
// ovn-controllers do, before anyone connects.
func (c *Cloud) register(sb model.DatabaseModel, pools []string) error {
	var ops []ovsdb.Operation
	for p, pool := range pools {
		for k := range ChassisPerPool {
			name := Chassis(pool, k)
			encap := fmt.Sprintf("encap%d_%d", p, k)
			eop, err := insert(sb, sbdb.EncapTable, encap, &sbdb.Encap{ChassisName: name, Type: sbdb.EncapTypeGeneve,
				IP: fmt.Sprintf("10.%d.%d.%d", 100+p, c.Index/250%250, 1+k)})
			if err != nil {
				return err
			}
			cop, err := insert(sb, sbdb.ChassisTable, "", &sbdb.Chassis{Name: name, Hostname: name, Encaps: []string{encap},
				OtherConfig: map[string]string{"ovn-cms-options": "enable-chassis-as-gw,availability-zones=" + pool}})
			if err != nil {
				return err
			}
			ops = append(ops, eop, cop)
		}
	}
	res, update := c.db.NewTransaction(sb.Schema.Name).Transact(ops...)
	for _, r := range res {
		if r != nil && r.Error != "" {
			return fmt.Errorf("registering the chassis: %s: %s", r.Error, r.Details)
		}
	}
	c.stubWrites.Add(1)
	return c.db.Commit(sb.Schema.Name, uuid.New(), update)
}

// insert is the insert operation of m, its UUID named uuidName.
func insert(dbm model.DatabaseModel, table, uuidName string, m model.Model) (ovsdb.Operation, error) {
	info, err := dbm.NewModelInfo(m)
	if err != nil {
		return ovsdb.Operation{}, err
	}
	row, err := dbm.Mapper.NewRow(info)
	if err != nil {
		return ovsdb.Operation{}, err
	}
	return ovsdb.Operation{Op: ovsdb.OperationInsert, Table: table, Row: row, UUIDName: uuidName}, nil
}

// DriftPriority sets the priority of chassis in HA chassis group group
// behind the provider's back, through the cloud's Northbound as any
// client would (so the provider's next read sees it).
func (c *Cloud) DriftPriority(ctx context.Context, group, chassis string, priority int) error {
	return c.withNorthbound(ctx, func(nb client.Client) error {
		hc, err := member(ctx, nb, group, chassis)
		if err != nil {
			return err
		}
		hc.Priority = priority
		ops, err := nb.Where(hc).Update(hc, &hc.Priority)
		if err != nil {
			return err
		}
		res, err := nb.Transact(ctx, ops...)
		if err == nil {
			_, err = ovsdb.CheckOperationResults(res, ops)
		}
		if err == nil {
			c.stubWrites.Add(1)
		}
		return err
	})
}

// Priority reads the priority of chassis in group.
func (c *Cloud) Priority(ctx context.Context, group, chassis string) (int, error) {
	var p int
	err := c.withNorthbound(ctx, func(nb client.Client) error {
		hc, err := member(ctx, nb, group, chassis)
		if err == nil {
			p = hc.Priority
		}
		return err
	})
	return p, err
}

func member(ctx context.Context, nb client.Client, group, chassis string) (*nbdb.HAChassis, error) {
	var groups []nbdb.HAChassisGroup
	if err := nb.WhereCache(func(g *nbdb.HAChassisGroup) bool { return g.Name == group }).List(ctx, &groups); err != nil {
		return nil, err
	}
	if len(groups) != 1 {
		return nil, fmt.Errorf("HA chassis group %q: %d rows", group, len(groups))
	}
	for _, u := range groups[0].HaChassis {
		hc := &nbdb.HAChassis{UUID: u}
		if err := nb.Get(ctx, hc); err != nil {
			return nil, err
		}
		if hc.ChassisName == chassis {
			return hc, nil
		}
	}
	return nil, fmt.Errorf("HA chassis group %q has no member %q", group, chassis)
}

// withNorthbound runs f with the stub's client of the cloud's Northbound
// (opened at the first call and kept: a harness polling a priority does
// not open a connection each time), its monitor of the HA chassis tables
// current.
func (c *Cloud) withNorthbound(ctx context.Context, f func(client.Client) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nb == nil {
		dbm, err := nbdb.FullDatabaseModel()
		if err != nil {
			return err
		}
		// A logger of its own: without one, libovsdb's client sets every
		// stdr logger of the process to verbosity 5 again, and the harness's
		// output fills with each row its databases store.
		quiet := logr.Discard()
		nb, err := client.NewOVSDBClient(dbm, client.WithEndpoint(c.Endpoint), client.WithLogger(&quiet))
		if err != nil {
			return err
		}
		if err := nb.Connect(ctx); err != nil {
			return err
		}
		if _, err := nb.Monitor(ctx, nb.NewMonitor(client.WithTable(&nbdb.HAChassisGroup{}), client.WithTable(&nbdb.HAChassis{}))); err != nil {
			nb.Close()
			return err
		}
		c.nb = nb
	}
	return f(c.nb)
}

// serverDB is the name of the database of the server itself, whose
// transactions are a client's leader checks, not writes.
const serverDB = "_Server"

// countingDB counts the transactions that change a database.
type countingDB struct {
	database.Database
	writes atomic.Int64
}

func (d *countingDB) Commit(db string, id uuid.UUID, u database.Update) error {
	if db != serverDB && len(u.GetUpdatedTables()) > 0 {
		d.writes.Add(1)
	}
	return d.Database.Commit(db, id, u)
}
