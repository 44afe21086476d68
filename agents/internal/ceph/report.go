// Package ceph is the storage agent: it asks the Ceph monitors (librados,
// go-ceph, built with the `ceph` tag) for health, capacity, per-pool usage
// and OSD states, publishes them as the cluster's CephStatus and as
// Prometheus metrics. Parsing the monitors' JSON needs no cgo and lives here.
package ceph

import (
	"encoding/json"
	"fmt"
	"sort"

	storagev1alpha1 "github.com/c5c3/consumer-plane/agents/apis/storage/v1alpha1"
)

// MonCommander sends one command to the monitors (a rados connection).
type MonCommander interface {
	MonCommand(cmd []byte) ([]byte, string, error)
}

func command(c MonCommander, prefix string, into any) error {
	cmd, _ := json.Marshal(map[string]string{"prefix": prefix, "format": "json"})
	out, status, err := c.MonCommand(cmd)
	if err != nil {
		return fmt.Errorf("ceph %s: %w (%s)", prefix, err, status)
	}
	if err := json.Unmarshal(out, into); err != nil {
		return fmt.Errorf("ceph %s: cannot parse its answer: %w", prefix, err)
	}
	return nil
}

// statusJSON is the part of `ceph status` the agent reads (Pacific and later).
type statusJSON struct {
	FSID   string `json:"fsid"`
	Health struct {
		Status string `json:"status"`
		Checks map[string]struct {
			Severity string `json:"severity"`
			Summary  struct {
				Message string `json:"message"`
			} `json:"summary"`
		} `json:"checks"`
	} `json:"health"`
	QuorumNames []string `json:"quorum_names"`
	MonMap      struct {
		NumMons int `json:"num_mons"`
	} `json:"monmap"`
}

// dfJSON is `ceph df`.
type dfJSON struct {
	Stats struct {
		TotalBytes     int64 `json:"total_bytes"`
		TotalAvail     int64 `json:"total_avail_bytes"`
		TotalUsedBytes int64 `json:"total_used_raw_bytes"`
	} `json:"stats"`
	Pools []struct {
		Name  string `json:"name"`
		ID    int64  `json:"id"`
		Stats struct {
			Stored    int64 `json:"stored"`
			Objects   int64 `json:"objects"`
			BytesUsed int64 `json:"bytes_used"`
			MaxAvail  int64 `json:"max_avail"`
		} `json:"stats"`
	} `json:"pools"`
}

// osdTreeJSON is `ceph osd tree`: hosts with their OSDs as children.
type osdTreeJSON struct {
	Nodes []struct {
		ID       int64   `json:"id"`
		Name     string  `json:"name"`
		Type     string  `json:"type"`
		Status   string  `json:"status"`
		Reweight float64 `json:"reweight"`
		Children []int64 `json:"children"`
	} `json:"nodes"`
	Stray []struct {
		ID       int64   `json:"id"`
		Status   string  `json:"status"`
		Reweight float64 `json:"reweight"`
	} `json:"stray"`
}

// Read asks the monitors and returns the status (without conditions).
func Read(c MonCommander) (storagev1alpha1.CephStatusStatus, error) {
	var st storagev1alpha1.CephStatusStatus
	var s statusJSON
	if err := command(c, "status", &s); err != nil {
		return st, err
	}
	var df dfJSON
	if err := command(c, "df", &df); err != nil {
		return st, err
	}
	var tree osdTreeJSON
	if err := command(c, "osd tree", &tree); err != nil {
		return st, err
	}

	st.FSID, st.Health = s.FSID, s.Health.Status
	for name, chk := range s.Health.Checks {
		st.Checks = append(st.Checks, storagev1alpha1.HealthCheck{Name: name, Severity: chk.Severity, Summary: chk.Summary.Message})
	}
	sort.Slice(st.Checks, func(i, j int) bool { return st.Checks[i].Name < st.Checks[j].Name })
	st.Monitors = storagev1alpha1.MonitorSummary{Total: s.MonMap.NumMons, InQuorum: len(s.QuorumNames)}

	st.Capacity = storagev1alpha1.Capacity{TotalBytes: df.Stats.TotalBytes, UsedBytes: df.Stats.TotalUsedBytes, AvailableBytes: df.Stats.TotalAvail}
	for _, p := range df.Pools {
		st.Pools = append(st.Pools, storagev1alpha1.PoolUsage{Name: p.Name, ID: p.ID, StoredBytes: p.Stats.Stored,
			UsedBytes: p.Stats.BytesUsed, Objects: p.Stats.Objects, MaxAvailableBytes: p.Stats.MaxAvail})
	}
	sort.Slice(st.Pools, func(i, j int) bool { return st.Pools[i].Name < st.Pools[j].Name })

	hostOf := map[int64]string{}
	for _, n := range tree.Nodes {
		if n.Type == "host" {
			for _, c := range n.Children {
				hostOf[c] = n.Name
			}
		}
	}
	add := func(id int64, status string, reweight float64) {
		o := storagev1alpha1.OSDState{ID: id, Host: hostOf[id], Up: status == "up", In: reweight > 0}
		st.OSDs.States = append(st.OSDs.States, o)
		st.OSDs.Total++
		if o.Up {
			st.OSDs.Up++
		}
		if o.In {
			st.OSDs.In++
		}
	}
	for _, n := range tree.Nodes {
		if n.Type == "osd" {
			add(n.ID, n.Status, n.Reweight)
		}
	}
	for _, n := range tree.Stray {
		add(n.ID, n.Status, n.Reweight)
	}
	sort.Slice(st.OSDs.States, func(i, j int) bool { return st.OSDs.States[i].ID < st.OSDs.States[j].ID })
	return st, nil
}
