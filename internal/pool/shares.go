package pool

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
)

// A cloud's share of a pool is decided by the pool alone
// (docs/allocation.md): nodes of a hypervisor pool, gigabytes of a storage
// pool's raw capacity. The cloud records what it asks for on the
// ClusterUsage it composes for the pool, labelled with the pool's name; the
// pool's function requires those records, decides every share in one run
// and publishes them in its status (status.shares), which the clouds read.
// One decider per pool, whose reconciles Crossplane never runs at once: two
// clouds can never both take the last of a pool, whatever their runs see.
const (
	// LabelUsedPool is the pool's name on a cloud's usage of it.
	LabelUsedPool = "c5c3.io/used-pool"
	// AnnotationAskedNodes is what the cloud asks of a hypervisor pool.
	AnnotationAskedNodes = "c5c3.io/asked-nodes"
	// AnnotationAllocatedNodes is what the pool gave the cloud, as the
	// cloud last read it: the pool adopts it only when it has no share of
	// the cloud's (its status was lost, or the cloud is older than shares).
	AnnotationAllocatedNodes = "c5c3.io/allocated-nodes"
	// AnnotationAskedGB and AnnotationAllocatedGB are the same for a
	// storage pool, in gigabytes of its raw capacity.
	AnnotationAskedGB     = "c5c3.io/asked-gb"
	AnnotationAllocatedGB = "c5c3.io/allocated-gb"
	// AnnotationAskedSince is when the cloud asked for more than it has
	// (RFC 3339): requests are served in that order.
	AnnotationAskedSince = "c5c3.io/asked-since"
	// AnnotationCloud names the cloud as its tenant knows it.
	AnnotationCloud = "c5c3.io/cloud"
	// LabelCloud says, on a node of a hypervisor pool's cluster, which cloud
	// it serves (the cloud's composite name): the cloud's compute agents
	// select it, and its pool access confines them to it. It is under
	// node-restriction.kubernetes.io/, which the NodeRestriction admission
	// plugin keeps a node's own kubelet from setting or changing: a
	// compromised node cannot take another cloud's label and lure that
	// cloud's nova-compute, with its credentials and Ceph key, onto itself.
	LabelCloud = "c5c3.io.node-restriction.kubernetes.io/cloud"
)

// RequirementShares is the requirement of a pool's records.
const RequirementShares = "shares"

// Unit is what a kind of pool shares out, and where a record keeps it.
type Unit struct {
	// Kind of the pool's composite.
	Kind string
	// Noun of the unit, for messages.
	Noun string
	// Asked and Allocated are the record's annotations.
	Asked, Allocated string
}

// The units of the pools.
var (
	Nodes     = Unit{Kind: v1alpha1.XHypervisorClusterKind, Noun: "nodes", Asked: AnnotationAskedNodes, Allocated: AnnotationAllocatedNodes}
	Gigabytes = Unit{Kind: v1alpha1.XStorageClusterKind, Noun: "GB", Asked: AnnotationAskedGB, Allocated: AnnotationAllocatedGB}
)

// Record is a cloud's share record on a pool.
type Record struct {
	// Cloud is the cloud's composite name; Who how people know it.
	Cloud, Who string
	// Asked is what the cloud asks for; Allocated what it last read as
	// its share.
	Asked, Allocated int64
	// Since is when the cloud asked for more than it had; zero when it
	// does not.
	Since time.Time
	// Unknown says why the record cannot be read (a usage from before
	// records); empty when it can.
	Unknown string
}

// Annotations record r on the cloud's usage.
func (r Record) Annotations(u Unit) map[string]string {
	a := map[string]string{
		AnnotationCloud: r.Who,
		u.Asked:         strconv.FormatInt(r.Asked, 10),
		u.Allocated:     strconv.FormatInt(r.Allocated, 10),
	}
	if r.Asked > r.Allocated {
		a[AnnotationAskedSince] = r.Since.UTC().Format(time.RFC3339)
	}
	return a
}

// RecordOf reads a cloud's record from its usage's annotations; created is
// the usage's creation, the order of a request that does not say since
// when.
func RecordOf(u Unit, a map[string]string, cloud string, created time.Time) Record {
	r := Record{Cloud: cloud, Who: cmp.Or(a[AnnotationCloud], cloud)}
	asked, errA := strconv.ParseInt(a[u.Asked], 10, 64)
	held, errH := strconv.ParseInt(a[u.Allocated], 10, 64)
	if errA != nil || errH != nil || asked < 0 || held < 0 {
		r.Unknown = fmt.Sprintf("the share record of %s does not say what it asks for and has (annotations %s, %s)", r.Who, u.Asked, u.Allocated)
		return r
	}
	r.Asked, r.Allocated = asked, held
	if r.Asked > r.Allocated {
		r.Since = created
		if t, err := time.Parse(time.RFC3339, a[AnnotationAskedSince]); err == nil {
			r.Since = t
		}
	}
	return r
}

// RecordFrom reads the record of a usage as Crossplane supplies it,
// straight from its fields: decoding each usage whole would cost more than
// the rest of the pool's reconcile. ok is false for a usage of another kind
// of composite, or one without a user.
func RecordFrom(u Unit, r *fnv1.Resource) (Record, bool) {
	f := r.GetResource().GetFields()
	spec := f["spec"].GetStructValue().GetFields()
	if spec["of"].GetStructValue().GetFields()["kind"].GetStringValue() != u.Kind {
		return Record{}, false
	}
	cloud := spec["by"].GetStructValue().GetFields()["resourceRef"].GetStructValue().GetFields()["name"].GetStringValue()
	if cloud == "" {
		return Record{}, false
	}
	md := f["metadata"].GetStructValue().GetFields()
	a := map[string]string{}
	for k, v := range md["annotations"].GetStructValue().GetFields() {
		a[k] = v.GetStringValue()
	}
	created, _ := time.Parse(time.RFC3339, md["creationTimestamp"].GetStringValue())
	return RecordOf(u, a, cloud, created), true
}

// Records are the readable records among the usages Crossplane supplied
// for the pool.
func Records(u Unit, items []*fnv1.Resource) []Record {
	var records []Record
	for _, r := range items {
		if rec, ok := RecordFrom(u, r); ok {
			records = append(records, rec)
		}
	}
	return records
}

// Share is a cloud's share of a pool, in the pool's unit.
type Share struct {
	Cloud, Claim     string
	Asked, Allocated int64
}

// Decision is the pool's shares, and what stops it from granting.
type Decision struct {
	Shares []Share
	// Allocated is the sum of the shares.
	Allocated int64
	// Blocked says why no request was granted: a record that does not say
	// what its cloud has, whom the pool has no share of.
	Blocked []string
}

// Decide the shares of a pool of capacity (nodes, GB) from the clouds' records
// and the shares the pool decided before (its status).
//
// A share the pool gave is never taken back while its cloud's record
// exists; a cloud that asks for less gets less at once. Requests for more
// are served in the order they were made (then by cloud name), each if it
// fits after those before it: one that does not fit keeps what it has and
// stays in line, and does not stop a later one that fits. A cloud whose
// record is gone (its cloud is deleted) has no share any more.
func Decide(capacity int64, before []Share, records []Record) Decision {
	prev := make(map[string]Share, len(before))
	for _, s := range before {
		prev[s.Cloud] = s
	}
	d := Decision{Shares: make([]Share, 0, len(records))}
	committed := int64(0)
	// A request is a share's index and when it was made.
	type request struct {
		share int
		since time.Time
	}
	var requests []request
	seen := map[string]bool{}
	for _, r := range records {
		if seen[r.Cloud] {
			continue
		}
		seen[r.Cloud] = true
		p, had := prev[r.Cloud]
		held := p.Allocated
		if !had {
			// The pool has no share of the cloud: adopt what the cloud
			// last read, which only the pool gave (before its status was
			// lost, or before pools decided shares).
			held = r.Allocated
		}
		s := Share{Cloud: r.Cloud, Claim: r.Who, Asked: r.Asked, Allocated: held}
		switch {
		case r.Unknown != "":
			s.Asked = held
			if !had {
				d.Blocked = append(d.Blocked, r.Unknown)
			}
		case r.Asked <= held:
			s.Allocated = r.Asked
		default:
			since := r.Since
			if since.IsZero() {
				// A record that says it has what it asks for, beyond what
				// the pool gave it, made no request in time: it comes last.
				since = time.Unix(1<<62, 0)
			}
			requests = append(requests, request{len(d.Shares), since})
		}
		committed += s.Allocated
		d.Shares = append(d.Shares, s)
	}
	if len(d.Blocked) == 0 {
		slices.SortFunc(requests, func(a, b request) int {
			return cmp.Or(a.since.Compare(b.since), cmp.Compare(d.Shares[a.share].Cloud, d.Shares[b.share].Cloud))
		})
		for _, r := range requests {
			s := &d.Shares[r.share]
			if more := s.Asked - s.Allocated; committed+more <= capacity {
				committed += more
				s.Allocated = s.Asked
			}
		}
	}
	slices.SortFunc(d.Shares, func(a, b Share) int { return cmp.Compare(a.Cloud, b.Cloud) })
	d.Allocated = committed
	return d
}
