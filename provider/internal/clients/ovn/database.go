package ovn

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/cenkalti/rpc2"
	"github.com/cenkalti/rpc2/jsonrpc"
	"github.com/go-logr/logr"
	"github.com/ovn-org/libovsdb/model"
	"github.com/ovn-org/libovsdb/ovsdb"
	"github.com/ovn-org/libovsdb/ovsdb/serverdb"

	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// ErrNotFound is returned by Get when the server has no row of that UUID.
var ErrNotFound = errors.New("no such row")

// A Database is one OVSDB database (OVN_Northbound or OVN_Southbound) at
// an endpoint set, spoken to in RFC 7047 JSON-RPC. Every read is a select
// answered by the server, so nothing is cached and nothing lags a commit.
//
// It stands in for libovsdb's client, whose cache gives every database it
// holds an event channel of 65,536 entries whether anything is monitored
// or not: 2.4 MB of heap for one cloud's two leader-only databases, some
// 25 GB for 5,000 clouds (docs/benchmarks.md, "OVN in the landscape").
// libovsdb's ovsdb, model and mapper packages (the protocol's types and
// the modelgen structs' mapping) are used as they are.
//
// The connection is made on first use and made again after it broke, on
// the next call; calls share it. Leader-only, it is made to the Raft
// leader alone and dropped as soon as the server says it no longer leads
// (a monitor of the server's _Server database), so a read never comes
// from a follower that may not have the latest commit.
type Database struct {
	name       string
	client     model.ClientDBModel
	endpoints  []string
	leaderOnly bool
	tls        *tls.Config
	log        logr.Logger

	mu sync.Mutex
	// rpc is nil while disconnected.
	rpc   *rpc2.Client
	model model.DatabaseModel
	// next is the endpoint tried first: the last one that answered.
	next int
	// After a failed connect, calls fail fast with failErr until retryAt.
	failErr  error
	retryAt  time.Time
	retryGap time.Duration
	closed   bool
}

// Retry gaps after a failed connect: calls in the gap fail at once with the
// connect's error instead of each waiting on an unreachable server.
const (
	minRetryGap = 100 * time.Millisecond
	maxRetryGap = 5 * time.Second
)

// electionWait is how long a connect tries again while no endpoint
// answers as leader (or at all).
const electionWait = 3 * time.Second

// serverMonitorID names the _Server monitor in update notifications.
const serverMonitorID = "leader"

// OpenDatabase connects to the database name of endpoints, whose models
// client holds, and returns it connected, or the reason it could not be
// reached within dialTimeout.
func OpenDatabase(ctx context.Context, name string, client model.ClientDBModel, endpoints []string, leaderOnly bool, tlsCfg *tls.Config, log logr.Logger) (*Database, error) {
	if len(endpoints) == 0 {
		return nil, terminal.Wrap(fmt.Errorf("no endpoint for the %s database", name))
	}
	for _, e := range endpoints {
		if _, _, err := splitEndpoint(e); err != nil {
			return nil, terminal.Wrap(err)
		}
	}
	d := &Database{name: name, client: client, endpoints: endpoints, leaderOnly: leaderOnly, tls: tlsCfg, log: log}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if _, _, err := d.conn(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// Name is the database's name (OVN_Northbound).
func (d *Database) Name() string { return d.name }

// Close disconnects; later calls fail.
func (d *Database) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.rpc != nil {
		_ = d.rpc.Close()
		d.rpc = nil
	}
}

func splitEndpoint(e string) (network, address string, err error) {
	scheme, addr, ok := strings.Cut(e, ":")
	switch {
	case !ok || addr == "":
	case scheme == "tcp", scheme == "ssl":
		if _, _, err := net.SplitHostPort(addr); err == nil {
			return scheme, addr, nil
		}
	case scheme == "unix":
		return scheme, addr, nil
	}
	return "", "", fmt.Errorf("OVSDB endpoint %q is not tcp:HOST:PORT, ssl:HOST:PORT or unix:PATH", e)
}

// conn returns the connection and the database model of the server's
// schema, connecting when there is none.
func (d *Database) conn(ctx context.Context) (*rpc2.Client, model.DatabaseModel, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, model.DatabaseModel{}, fmt.Errorf("the %s connection is closed", d.name)
	}
	if d.rpc != nil {
		return d.rpc, d.model, nil
	}
	if time.Now().Before(d.retryAt) {
		return nil, model.DatabaseModel{}, d.failErr
	}
	// Each endpoint gets its share of dialTimeout, so one that swallows
	// packets does not keep the others of a cluster from being tried.
	each := max(dialTimeout/time.Duration(len(d.endpoints)), 3*time.Second)
	var errs []string
	// A cluster electing a leader has none for a second or two: the round
	// of endpoints is tried again for electionWait, so a call made then
	// waits for the new leader instead of failing (and being retried
	// after the controller's backoff).
	until := time.Now().Add(electionWait)
	for gap := minRetryGap; ; gap *= 2 {
		errs = errs[:0]
		for i := range d.endpoints {
			n := (d.next + i) % len(d.endpoints)
			c, m, err := d.connectWithin(ctx, d.endpoints[n], each)
			if err == nil {
				d.rpc, d.model, d.next, d.retryGap, d.failErr = c, m, n, 0, nil
				go d.watch(c)
				return c, m, nil
			}
			errs = append(errs, fmt.Sprintf("%s: %v", d.endpoints[n], err))
			if ctx.Err() != nil {
				break
			}
		}
		if ctx.Err() != nil || time.Now().Add(gap).After(until) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(gap):
		}
	}
	d.retryGap = min(max(2*d.retryGap, minRetryGap), maxRetryGap)
	d.retryAt = time.Now().Add(d.retryGap)
	d.failErr = fmt.Errorf("cannot reach the %s database (%s)", d.name, strings.Join(errs, "; "))
	return nil, model.DatabaseModel{}, d.failErr
}

// watch forgets c once it broke, so the next call connects again.
func (d *Database) watch(c *rpc2.Client) {
	<-c.DisconnectNotify()
	d.drop(c)
}

// drop forgets c if it is still the connection, and closes it.
func (d *Database) drop(c *rpc2.Client) {
	d.mu.Lock()
	if d.rpc == c {
		d.rpc = nil
	}
	d.mu.Unlock()
	_ = c.Close()
}

func (d *Database) connectWithin(ctx context.Context, endpoint string, timeout time.Duration) (*rpc2.Client, model.DatabaseModel, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return d.connect(ctx, endpoint)
}

// connect dials one endpoint, reads its schema and, leader-only, makes
// sure it leads the cluster and will say when it stops.
func (d *Database) connect(ctx context.Context, endpoint string) (*rpc2.Client, model.DatabaseModel, error) {
	network, address, _ := splitEndpoint(endpoint)
	var nc net.Conn
	var err error
	if network == "ssl" {
		cfg := d.tls
		if cfg == nil {
			cfg = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		nc, err = (&tls.Dialer{Config: cfg}).DialContext(ctx, "tcp", address)
	} else {
		nc, err = (&net.Dialer{}).DialContext(ctx, network, address)
	}
	if err != nil {
		return nil, model.DatabaseModel{}, err
	}
	c := rpc2.NewClientWithCodec(jsonrpc.NewJSONCodec(nc))
	// Handlers run on the read loop: they are short, and order matters.
	c.SetBlocking(true)
	c.Handle("echo", func(_ *rpc2.Client, args []any, reply *[]any) error {
		*reply = args
		return nil
	})
	c.Handle("update", func(_ *rpc2.Client, args []json.RawMessage, _ *[]any) error {
		d.serverUpdate(c, args)
		return nil
	})
	go c.Run()
	m, err := d.handshake(ctx, c)
	if err != nil {
		_ = c.Close()
		return nil, model.DatabaseModel{}, err
	}
	return c, m, nil
}

func (d *Database) handshake(ctx context.Context, c *rpc2.Client) (model.DatabaseModel, error) {
	var raw json.RawMessage
	if err := c.CallWithContext(ctx, "get_schema", ovsdb.NewGetSchemaArgs(d.name), &raw); err != nil {
		return model.DatabaseModel{}, fmt.Errorf("get_schema: %w", err)
	}
	m, err := d.modelOf(raw)
	if err != nil {
		return model.DatabaseModel{}, err
	}
	if !d.leaderOnly {
		return m, nil
	}
	var updates ovsdb.TableUpdates
	req := map[string]ovsdb.MonitorRequest{serverdb.DatabaseTable: {Columns: []string{"name", "model", "leader"}}}
	if err := c.CallWithContext(ctx, "monitor", ovsdb.NewMonitorArgs("_Server", serverMonitorID, req), &updates); err != nil {
		return model.DatabaseModel{}, fmt.Errorf("monitor of _Server: %w", err)
	}
	if !d.leads(updates) {
		return model.DatabaseModel{}, errors.New("not the Raft leader")
	}
	return m, nil
}

// sharedModels holds the database model of each schema servers answered,
// shared by every connection given the same schema: an OVN Northbound
// schema and its model take some 70 KB parsed, which at thousands of
// clouds was a third of the provider's heap when each connection kept
// its own. Models are read-only once made. A landscape has a few schema
// versions; past maxSharedModels a connection keeps its own.
var sharedModels = struct {
	sync.Mutex
	byKey map[[sha256.Size]byte]model.DatabaseModel
}{byKey: map[[sha256.Size]byte]model.DatabaseModel{}}

const maxSharedModels = 64

// modelOf returns the database model of the schema raw (get_schema's
// answer), made once per schema.
func (d *Database) modelOf(raw json.RawMessage) (model.DatabaseModel, error) {
	key := sha256.Sum256(append([]byte(d.name+"\x00"), raw...))
	sharedModels.Lock()
	m, ok := sharedModels.byKey[key]
	sharedModels.Unlock()
	if ok {
		return m, nil
	}
	var schema ovsdb.DatabaseSchema
	if err := json.Unmarshal(raw, &schema); err != nil {
		return model.DatabaseModel{}, fmt.Errorf("get_schema answered no schema: %w", err)
	}
	m, errs := model.NewDatabaseModel(schema, d.client)
	if len(errs) > 0 {
		return model.DatabaseModel{}, terminal.Wrap(fmt.Errorf("the server's %s schema %s does not match the provider's: %w", d.name, schema.Version, errors.Join(errs...)))
	}
	sharedModels.Lock()
	if len(sharedModels.byKey) < maxSharedModels {
		sharedModels.byKey[key] = m
	}
	sharedModels.Unlock()
	return m, nil
}

// serverUpdate drops c when the _Server monitor says it no longer leads.
func (d *Database) serverUpdate(c *rpc2.Client, args []json.RawMessage) {
	var id string
	var updates ovsdb.TableUpdates
	if len(args) != 2 || json.Unmarshal(args[0], &id) != nil || id != serverMonitorID || json.Unmarshal(args[1], &updates) != nil {
		return
	}
	if !d.leads(updates) {
		d.log.V(1).Info("the server no longer leads the cluster; connecting to the new leader", "database", d.name)
		go d.drop(c)
	}
}

// leads reads the database's _Server row in updates: a standalone
// database always leads, a clustered one when its leader column says so.
// Updates without its row change nothing.
func (d *Database) leads(updates ovsdb.TableUpdates) bool {
	for _, u := range updates[serverdb.DatabaseTable] {
		if u.New == nil {
			continue
		}
		row := *u.New
		if name, _ := row["name"].(string); name != d.name {
			continue
		}
		if m, _ := row["model"].(string); m != serverdb.DatabaseModelClustered {
			return true
		}
		leader, _ := row["leader"].(bool)
		return leader
	}
	return true
}

// call sends method over the connection, connecting first when needed;
// a connection that broke or stopped answering is dropped, so the next
// call connects again.
func (d *Database) call(ctx context.Context, method string, args, reply any) (model.DatabaseModel, error) {
	c, m, err := d.conn(ctx)
	if err != nil {
		return m, err
	}
	err = c.CallWithContext(ctx, method, args, reply)
	var se rpc2.ServerError
	if err != nil && !errors.As(err, &se) && !errors.Is(err, context.Canceled) {
		// Shut down, reset or deadline exceeded: a connection that left a
		// call unanswered is not trusted with the next one.
		d.drop(c)
	}
	if errors.Is(err, rpc2.ErrShutdown) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("the connection to the %s database broke: %w", d.name, err)
	}
	return m, err
}

// transact sends ops as one transaction and returns the results as the
// server gave them, with the model they are read with.
func (d *Database) transact(ctx context.Context, ops ...ovsdb.Operation) ([]ovsdb.OperationResult, model.DatabaseModel, error) {
	var res []ovsdb.OperationResult
	m, err := d.call(ctx, "transact", ovsdb.NewTransactArgs(d.name, ops...), &res)
	if err == nil && len(res) < len(ops) {
		err = fmt.Errorf("%s answered %d results to %d operations", d.name, len(res), len(ops))
	}
	return res, m, err
}

// dbModel is the model of the schema the server last answered with:
// building an operation needs it. OpenDatabase connected once, so there
// always is one.
func (d *Database) dbModel() model.DatabaseModel {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.model
}

// table returns the table of a model type (a pointer to a modelgen struct).
func table(m model.DatabaseModel, t reflect.Type) (string, error) {
	if name := m.FindTable(t); name != "" {
		return name, nil
	}
	return "", fmt.Errorf("%s is no model of the %s database", t, m.Schema.Name)
}

// target returns the model, the table and the UUID of the row mdl names.
func (d *Database) target(mdl model.Model) (model.DatabaseModel, string, string, error) {
	m := d.dbModel()
	tbl, err := table(m, reflect.TypeOf(mdl))
	if err != nil {
		return m, "", "", err
	}
	uuid, err := rowUUID(mdl)
	return m, tbl, uuid, err
}

// Select reads the rows of table matching every condition (all rows when
// there is none) into result, a pointer to a slice of models or of
// pointers to models.
func (d *Database) Select(ctx context.Context, result any, where ...ovsdb.Condition) error {
	if where == nil {
		where = []ovsdb.Condition{}
	}
	return d.selects(ctx, result, [][]ovsdb.Condition{where})
}

// SelectUUIDs reads the rows of these UUIDs into result (as Select) in one
// transaction; a UUID without a row is left out.
func (d *Database) SelectUUIDs(ctx context.Context, result any, uuids []string) error {
	where := make([][]ovsdb.Condition, 0, len(uuids))
	for _, u := range uuids {
		where = append(where, []ovsdb.Condition{UUIDIs(u)})
	}
	return d.selects(ctx, result, where)
}

// selects sends one select per condition set in one transaction and
// appends every row read to result.
func (d *Database) selects(ctx context.Context, result any, where [][]ovsdb.Condition) error {
	rv := reflect.ValueOf(result)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Slice {
		return fmt.Errorf("select into %T: want a pointer to a slice of models", result)
	}
	slice := rv.Elem()
	elem := slice.Type().Elem()
	ptr := elem
	if ptr.Kind() != reflect.Pointer {
		ptr = reflect.PointerTo(elem)
	}
	tbl, err := table(d.dbModel(), ptr)
	if err != nil {
		return err
	}
	out := reflect.MakeSlice(slice.Type(), 0, len(where))
	if len(where) == 0 {
		slice.Set(out)
		return nil
	}
	ops := make([]ovsdb.Operation, 0, len(where))
	for _, w := range where {
		ops = append(ops, ovsdb.Operation{Op: ovsdb.OperationSelect, Table: tbl, Where: w})
	}
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	readCount.Add(1)
	res, m, err := d.transact(ctx, ops...)
	for i := 0; err == nil && i < len(ops); i++ {
		if res[i].Error != "" {
			err = fmt.Errorf("%s: %s", res[i].Error, res[i].Details)
		}
	}
	if err != nil {
		reads.WithLabelValues(d.name, "error").Inc()
		return fmt.Errorf("select from %s %s: %w", d.name, tbl, err)
	}
	reads.WithLabelValues(d.name, "ok").Inc()
	for _, r := range res[:len(ops)] {
		for i := range r.Rows {
			row := r.Rows[i]
			uuid, _ := row["_uuid"].(ovsdb.UUID)
			mdl, err := model.CreateModel(m, tbl, &row, uuid.GoUUID)
			if err != nil {
				return fmt.Errorf("cannot read a %s row of %s: %w", tbl, d.name, err)
			}
			v := reflect.ValueOf(mdl)
			if elem.Kind() != reflect.Pointer {
				v = v.Elem()
			}
			out = reflect.Append(out, v)
		}
	}
	slice.Set(out)
	return nil
}

// Get reads the row of mdl's UUID into mdl, or returns ErrNotFound.
func (d *Database) Get(ctx context.Context, mdl model.Model) error {
	uuid, err := rowUUID(mdl)
	if err != nil {
		return err
	}
	rows := reflect.New(reflect.SliceOf(reflect.TypeOf(mdl)))
	if err := d.Select(ctx, rows.Interface(), UUIDIs(uuid)); err != nil {
		return err
	}
	if rows.Elem().Len() == 0 {
		return ErrNotFound
	}
	reflect.ValueOf(mdl).Elem().Set(rows.Elem().Index(0).Elem())
	return nil
}

// UUIDIs is the condition of the row with this UUID.
func UUIDIs(uuid string) ovsdb.Condition {
	return ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: uuid})
}

// NameIs is the condition of rows named name.
func NameIs(name string) ovsdb.Condition {
	return ovsdb.NewCondition("name", ovsdb.ConditionEqual, name)
}

// MapIncludes is the condition of rows whose map column has key set to value.
func MapIncludes(column, key, value string) ovsdb.Condition {
	return ovsdb.NewCondition(column, ovsdb.ConditionIncludes, ovsdb.OvsMap{GoMap: map[any]any{key: value}})
}

func rowUUID(mdl model.Model) (string, error) {
	v := reflect.ValueOf(mdl)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return "", fmt.Errorf("%T is not a pointer to a model", mdl)
	}
	t := v.Elem().Type()
	for i := range t.NumField() {
		if t.Field(i).Tag.Get("ovsdb") == "_uuid" {
			return v.Elem().Field(i).String(), nil
		}
	}
	return "", fmt.Errorf("%T has no _uuid field", mdl)
}

// Insert returns the operations inserting models. A model's UUID that is
// not a UUID names it within the transaction (a named UUID), so rows
// inserted together can reference each other.
func (d *Database) Insert(models ...model.Model) ([]ovsdb.Operation, error) {
	ops := make([]ovsdb.Operation, 0, len(models))
	for _, mdl := range models {
		m, tbl, uuid, err := d.target(mdl)
		if err != nil {
			return nil, err
		}
		info, err := m.NewModelInfo(mdl)
		if err != nil {
			return nil, err
		}
		row, err := m.Mapper.NewRow(info)
		if err != nil {
			return nil, err
		}
		delete(row, "_uuid")
		op := ovsdb.Operation{Op: ovsdb.OperationInsert, Table: tbl, Row: row}
		if ovsdb.IsNamedUUID(uuid) {
			op.UUIDName = uuid
		} else {
			op.UUID = uuid
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// Update returns the operation writing the columns of fields (pointers
// into mdl) to the row of mdl's UUID.
func (d *Database) Update(mdl model.Model, fields ...any) ([]ovsdb.Operation, error) {
	m, tbl, uuid, row, err := d.fields(mdl, fields)
	if err != nil {
		return nil, err
	}
	for col := range row {
		if !m.Schema.Table(tbl).Columns[col].Mutable() {
			return nil, fmt.Errorf("column %s of %s is not mutable", col, tbl)
		}
	}
	return []ovsdb.Operation{{Op: ovsdb.OperationUpdate, Table: tbl, Row: row, Where: []ovsdb.Condition{UUIDIs(uuid)}}}, nil
}

// Unchanged returns a wait operation that fails the transaction at once
// unless the columns of fields still hold mdl's values: a write after it
// cannot lose a change made since mdl was read.
func (d *Database) Unchanged(mdl model.Model, fields ...any) ([]ovsdb.Operation, error) {
	_, tbl, uuid, row, err := d.fields(mdl, fields)
	if err != nil {
		return nil, err
	}
	cols := make([]string, 0, len(row))
	for col := range row {
		cols = append(cols, col)
	}
	zero := 0
	return []ovsdb.Operation{{Op: ovsdb.OperationWait, Table: tbl, Timeout: &zero, Where: []ovsdb.Condition{UUIDIs(uuid)},
		Columns: cols, Until: string(ovsdb.WaitConditionEqual), Rows: []ovsdb.Row{row}}}, nil
}

// Delete returns the operation deleting the row of mdl's UUID.
func (d *Database) Delete(mdl model.Model) ([]ovsdb.Operation, error) {
	_, tbl, uuid, err := d.target(mdl)
	if err != nil {
		return nil, err
	}
	return []ovsdb.Operation{{Op: ovsdb.OperationDelete, Table: tbl, Where: []ovsdb.Condition{UUIDIs(uuid)}}}, nil
}

// fields maps the columns of fields in mdl to a row, for a row identified
// by its UUID.
func (d *Database) fields(mdl model.Model, fields []any) (model.DatabaseModel, string, string, ovsdb.Row, error) {
	m, tbl, uuid, err := d.target(mdl)
	if err != nil {
		return m, "", "", nil, err
	}
	if !ovsdb.IsValidUUID(uuid) {
		return m, "", "", nil, fmt.Errorf("a %s row to write needs its UUID (got %q)", tbl, uuid)
	}
	if len(fields) == 0 {
		return m, "", "", nil, fmt.Errorf("no column of %s to write", tbl)
	}
	info, err := m.NewModelInfo(mdl)
	if err != nil {
		return m, "", "", nil, err
	}
	row, err := m.Mapper.NewRow(info, fields...)
	if err != nil {
		return m, "", "", nil, err
	}
	delete(row, "_uuid")
	return m, tbl, uuid, row, nil
}
