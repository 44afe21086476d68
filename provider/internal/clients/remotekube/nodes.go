package remotekube

import (
	"context"
	"fmt"
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
)

// NewNodes returns an empty set of at most size watched views of remote
// clusters' Nodes, their metadata only (a Node's status, images and
// volumes are most of it, and a label is all that is read): a pool's
// NodeLabel sees a node relabelled behind its back within a second, not
// at its next poll. Views unused for idle are stopped.
func NewNodes(size int, idle time.Duration) *watch.Clusters {
	return watch.NewClusters(watch.Kind{
		New: func() client.Object {
			return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}}
		},
		Cluster:    "the pool cluster",
		Objects:    "Nodes",
		Permission: "list and watch on nodes",
		Changed: func(old, updated any) bool {
			o, ok1 := old.(*metav1.PartialObjectMetadata)
			u, ok2 := updated.(*metav1.PartialObjectMetadata)
			return !ok1 || !ok2 || !maps.Equal(o.Labels, u.Labels)
		},
	}, size, idle)
}

// A NodeLister lists Nodes: a watched view (*watch.Cluster) or a client.
type NodeLister interface {
	List(ctx context.Context, l client.ObjectList, opts ...client.ListOption) error
}

// NodeLabels lists the labels of every Node by name, their metadata only.
func NodeLabels(ctx context.Context, l NodeLister) (map[string]map[string]string, error) {
	nodes := &metav1.PartialObjectMetadataList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "NodeList"}}
	if err := l.List(ctx, nodes); err != nil {
		return nil, fmt.Errorf("cannot list the remote cluster's nodes: %w", err)
	}
	labels := make(map[string]map[string]string, len(nodes.Items))
	for _, n := range nodes.Items {
		labels[n.Name] = n.Labels
	}
	return labels, nil
}
