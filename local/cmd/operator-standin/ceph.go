package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// annotationArbiterCluster marks the CephCluster of a stretched storage
// pool (functions/storagecluster): the control-plane cluster its arbiter's
// monitor runs in.
const annotationArbiterCluster = "c5c3.io/arbiter-cluster"

// localCeph is a local Ceph (local/ceph/start.sh) that stands in for the
// Ceph Rook runs in pool clusters: the single-host one for every pool, and,
// when the demo starts it, one laid out as a stretched pool's (monitors on
// nodes of two zones and the arbiter's, OSDs on hosts in both zones) for
// the stretched pools, so that Ceph's stretch mode is set for real.
type localCeph struct {
	// conf is its ceph.conf, key its client.admin key, mon its monitors
	// as Rook lists them (name=host:port,...).
	conf, key, mon string
	// facts are read once per sweep, when a CephCluster needs them.
	mu    sync.Mutex
	facts *cephFacts
}

func newLocalCeph(conf, keyFile, mon string) (*localCeph, error) {
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	return &localCeph{conf: conf, key: strings.TrimSpace(string(key)), mon: mon}, nil
}

// cephFor is the local Ceph that stands in for CephCluster o: the stretched
// one for a stretched pool's when the demo runs one, else the single-host
// one.
func (s *standin) cephFor(o *unstructured.Unstructured) *localCeph {
	if o.GetAnnotations()[annotationArbiterCluster] != "" && s.stretchedCeph != nil {
		return s.stretchedCeph
	}
	return s.singleCeph
}

// cephOf is the local Ceph that stands in for the Ceph of cluster c (a pool
// cluster runs one CephCluster); nil while c has none: Rook makes nothing of
// a cluster before it exists.
func (s *standin) cephOf(ctx context.Context, c *cluster) (*localCeph, error) {
	l, err := c.list(ctx, cephClusters)
	if err != nil {
		return nil, fmt.Errorf("cannot list cephclusters: %w", err)
	}
	if len(l) == 0 {
		return nil, nil
	}
	return s.cephFor(l[0]), nil
}

// cephFacts is what Rook reports of its cluster, read from the local Ceph.
type cephFacts struct {
	Health, FSID           string
	Total, Available, Used int64
}

// forget has Facts read the cluster again.
func (l *localCeph) forget() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.facts = nil
}

// Facts are the cluster's health and capacity, read once until forget:
// clusters swept at once wait for one reading.
func (l *localCeph) Facts() (*cephFacts, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.facts != nil {
		return l.facts, nil
	}
	var st struct {
		FSID   string `json:"fsid"`
		Health struct {
			Status string `json:"status"`
		} `json:"health"`
	}
	var df struct {
		Stats struct {
			Total     int64 `json:"total_bytes"`
			Available int64 `json:"total_avail_bytes"`
			Used      int64 `json:"total_used_raw_bytes"`
		} `json:"stats"`
	}
	// Side by side: each ceph CLI call takes seconds on a busy machine, and
	// every storage pool's CephCluster waits for both.
	var dfErr error
	var wg sync.WaitGroup
	wg.Go(func() { dfErr = l.JSON(&df, "df") })
	err := l.JSON(&st, "status")
	wg.Wait()
	if err = errors.Join(err, dfErr); err != nil {
		return nil, err
	}
	l.facts = &cephFacts{Health: st.Health.Status, FSID: st.FSID, Total: df.Stats.Total, Available: df.Stats.Available, Used: df.Stats.Used}
	return l.facts, nil
}

// JSON runs the ceph CLI against it and decodes its JSON answer.
func (l *localCeph) JSON(into any, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ceph", append([]string{"-c", l.conf, "--connect-timeout", "10", "-f", "json"}, args...)...).Output() //nolint:gosec // fixed command
	if err != nil {
		return fmt.Errorf("ceph %s: %w", strings.Join(args, " "), err)
	}
	return json.Unmarshal(out, into)
}
