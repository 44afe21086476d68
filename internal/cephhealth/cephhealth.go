// Package cephhealth says what a storage pool's Ceph health checks mean
// for the data of the tenants there: whether their reads and writes are
// served. Ceph's overall HEALTH_WARN says too little (a clock skew and a
// zone lost are both warnings); these checks are the ones that block or
// weaken I/O.
//
// A storage pool reports it on its composite and claim (condition
// DataAvailable), and each cloud with pools there on its own.
package cephhealth

import (
	"fmt"
	"strings"
)

// ConditionDataAvailable says whether the tenants' reads and writes in a
// storage pool are served.
const ConditionDataAvailable = "DataAvailable"

// Reasons of the DataAvailable condition.
const (
	// ReasonAvailable: every placement group is active and nothing is full.
	ReasonAvailable = "Available"
	// ReasonDegraded: I/O is served, with less redundancy than the pool
	// promises (a stretched pool with a zone down).
	ReasonDegraded = "Degraded"
	// ReasonInactive: placement groups are inactive; I/O to them blocks.
	ReasonInactive = "Inactive"
	// ReasonFull: an OSD or pool is full; writes block.
	ReasonFull = "Full"
)

// What each check means, by its name (Ceph's health check codes).
var (
	inactive = []string{"PG_AVAILABILITY"}
	full     = []string{"OSD_FULL", "POOL_FULL"}
	degraded = []string{"DEGRADED_STRETCH_MODE", "OSD_DATACENTER_DOWN", "OSD_ZONE_DOWN"}
)

// Availability is what the checks mean for the data.
type Availability struct {
	OK      bool
	Reason  string
	Message string
}

// Of reads checks as a storage pool's status lists them ("SEVERITY NAME:
// summary", the storage agent's report). Inactive placement groups win
// over a full OSD, which wins over a degraded stretch.
func Of(checks []string) Availability {
	named := func(names []string) []string {
		var hits []string
		for _, c := range checks {
			for _, n := range names {
				if name(c) == n {
					hits = append(hits, strings.TrimSpace(c))
				}
			}
		}
		return hits
	}
	if hits := named(inactive); len(hits) > 0 {
		return Availability{Reason: ReasonInactive, Message: "placement groups are inactive: reads and writes of the data in them block (" + strings.Join(hits, "; ") + ")"}
	}
	if hits := named(full); len(hits) > 0 {
		return Availability{Reason: ReasonFull, Message: "Ceph is full: writes block until data is deleted or capacity added (" + strings.Join(hits, "; ") + ")"}
	}
	if hits := named(degraded); len(hits) > 0 {
		return Availability{OK: true, Reason: ReasonDegraded, Message: "reads and writes are served from one zone, with less redundancy than the pool promises until the other is back (" + strings.Join(hits, "; ") + ")"}
	}
	return Availability{OK: true, Reason: ReasonAvailable, Message: "every placement group is active and nothing is full"}
}

// name is the check's code in "SEVERITY NAME: summary" (or "NAME: summary",
// or the code alone).
func name(check string) string {
	head, _, _ := strings.Cut(check, ":")
	f := strings.Fields(head)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// InPool prefixes a pool's availability for a cloud with data there.
func InPool(pool string, a Availability) string {
	return fmt.Sprintf("storage pool %s: %s", pool, a.Message)
}
