package ovn

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ovn-org/libovsdb/ovsdb"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// CallTimeout bounds one transaction, including the wait for a reconnect
// after the Raft leader changed.
const CallTimeout = 15 * time.Second

var (
	transactions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cobaltcore_provider_ovn_transactions_total",
		Help: "OVSDB transactions by database and result (ok, failed, error: no answer).",
	}, []string{"database", "result"})
	reads = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cobaltcore_provider_ovn_reads_total",
		Help: "OVSDB selects (observations) by database and result (ok, error).",
	}, []string{"database", "result"})
	transactionCount, readCount atomic.Int64
)

func init() { metrics.Registry.MustRegister(transactions, reads) }

// TransactionCount is the number of transactions (writes and their
// guards) this process has sent.
func TransactionCount() int64 { return transactionCount.Load() }

// ReadCount is the number of reads (selects, each one round trip) this
// process has sent.
func ReadCount() int64 { return readCount.Load() }

// ErrNameTaken is returned by Transact when a NameIsFree guard failed: a
// row with that name appeared.
var ErrNameTaken = errors.New("a row with this name exists")

// Transact sends ops as one transaction and checks every result. Errors
// that retrying cannot fix (constraint and referential-integrity
// violations, bad values) are terminal and carry OVSDB's details; a lost
// connection is returned as is and retried, and whether the transaction
// committed is then found out by observing.
func Transact(ctx context.Context, d *Database, ops ...ovsdb.Operation) ([]ovsdb.OperationResult, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	db := d.Name()
	transactionCount.Add(1)
	res, _, err := d.transact(ctx, ops...)
	if err != nil {
		transactions.WithLabelValues(db, "error").Inc()
		return nil, fmt.Errorf("%s transaction: %w", db, err)
	}
	opErrs, err := ovsdb.CheckOperationResults(res, ops)
	if err == nil {
		transactions.WithLabelValues(db, "ok").Inc()
		return res, nil
	}
	transactions.WithLabelValues(db, "failed").Inc()
	for _, oe := range opErrs {
		var to *ovsdb.TimedOut
		if errors.As(oe, &to) {
			return nil, ErrNameTaken
		}
	}
	msgs := make([]string, 0, len(opErrs)+1)
	for _, oe := range opErrs {
		msgs = append(msgs, oe.Error())
	}
	if len(msgs) == 0 {
		msgs = append(msgs, err.Error())
	}
	return nil, terminal.Wrap(fmt.Errorf("%s refused the transaction: %s", db, strings.Join(msgs, "; ")))
}

// NameIsFree is a wait operation that fails the transaction at once when
// table already has a row with this name. Put before an insert, it makes
// creating by name idempotent even when the reply of an earlier attempt
// was lost to a leader change: the retry fails instead of adding a second
// row, and the next observation adopts the first.
func NameIsFree(table, name string) ovsdb.Operation {
	zero := 0
	return ovsdb.Operation{
		Op: ovsdb.OperationWait, Table: table, Timeout: &zero,
		Where:   []ovsdb.Condition{ovsdb.NewCondition("name", ovsdb.ConditionEqual, name)},
		Columns: []string{"name"}, Until: string(ovsdb.WaitConditionNotEqual),
		Rows: []ovsdb.Row{{"name": name}},
	}
}

// Ownership is who owns a row, read from its external_ids.
type Ownership int

// Owners of a row.
const (
	// OwnedByResource: written by this provider for the named resource.
	OwnedByResource Ownership = iota
	// OwnedByOtherResource: written by this provider for another resource.
	OwnedByOtherResource
	// OwnedByNeutron: Neutron's row; never written.
	OwnedByNeutron
	// Unowned: written by someone else (ovn-nbctl, another tool).
	Unowned
)

// Owner tells who owns a row with externalIDs, from the view of resource.
func Owner(externalIDs map[string]string, resource string) Ownership {
	for k := range externalIDs {
		if strings.HasPrefix(k, v1alpha1.NeutronKeyPrefix) {
			return OwnedByNeutron
		}
	}
	if externalIDs[v1alpha1.ExternalIDManagedBy] != v1alpha1.ManagedByValue {
		return Unowned
	}
	if externalIDs[v1alpha1.ExternalIDResource] == resource {
		return OwnedByResource
	}
	return OwnedByOtherResource
}

// RefuseNeutron is the terminal error for a Neutron-owned row.
func RefuseNeutron(what string) error {
	return terminal.Wrap(fmt.Errorf("%s is owned by Neutron (its external_ids have neutron: keys); this provider never writes Neutron's rows", what))
}

// ownedKeysKey records, in a row's external_ids, which keys of a map
// column the provider set, so a key removed from the spec is removed from
// the row while keys others set stay.
func ownedKeysKey(column string) string { return "cobaltcore.c5c3.io/owned-" + column }

// Merge returns the map column observed with desired applied: desired's
// keys set, the keys the provider set before (recorded in externalIDs) and
// no longer desires removed, every other key kept. record is the new
// value of the record (set it with SetOwnedKeys).
func Merge(column string, observed, desired, externalIDs map[string]string) (merged map[string]string, record string) {
	merged = maps.Clone(observed)
	if merged == nil {
		merged = map[string]string{}
	}
	for _, k := range OwnedKeys(column, externalIDs) {
		if _, ok := desired[k]; !ok {
			delete(merged, k)
		}
	}
	maps.Copy(merged, desired)
	keys := slices.Collect(maps.Keys(desired))
	sort.Strings(keys)
	return merged, strings.Join(keys, ",")
}

// OwnedKeys are the keys of column the provider set, per externalIDs.
func OwnedKeys(column string, externalIDs map[string]string) []string {
	v := externalIDs[ownedKeysKey(column)]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// SetOwnedKeys records record (from Merge) in externalIDs.
func SetOwnedKeys(externalIDs map[string]string, column, record string) {
	if record == "" {
		delete(externalIDs, ownedKeysKey(column))
		return
	}
	externalIDs[ownedKeysKey(column)] = record
}

// RowExternalIDs are the external_ids a row owned by resource must have:
// its own (observed) ones with the desired extra keys merged in and the
// ownership keys set.
func RowExternalIDs(observed, desired map[string]string, resource string) map[string]string {
	ext, record := Merge("external_ids", observed, desired, observed)
	SetOwnedKeys(ext, "external_ids", record)
	ext[v1alpha1.ExternalIDManagedBy] = v1alpha1.ManagedByValue
	ext[v1alpha1.ExternalIDResource] = resource
	return ext
}
