// Package ironcore watches the metal-operator Servers of IronCore metal
// clusters. It only reads: the provider never claims, powers or labels a
// Server.
package ironcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metalv1alpha1 "github.com/ironcore-dev/metal-operator/api/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
)

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = metalv1alpha1.AddToScheme(s) //nolint:errcheck // registering known types cannot fail.
	return s
}()

// NewClusters returns an empty set of at most size watched metal clusters.
// Watches unused for idle are stopped.
func NewClusters(size int, idle time.Duration) *watch.Clusters {
	return watch.NewClusters(watch.Kind{
		Scheme:     scheme,
		New:        func() client.Object { return &metalv1alpha1.Server{} },
		Cluster:    "the metal cluster",
		Objects:    "Servers",
		Permission: "get, list and watch on servers.metal.ironcore.dev",
	}, size, idle)
}

// Servers lists the Servers carrying every one of the labels, by name, from
// the watch cache: no request reaches the metal cluster. (The cache's order
// is random; a stable one keeps statuses from changing for nothing.)
func Servers(ctx context.Context, c *watch.Cluster, labels map[string]string) ([]metalv1alpha1.Server, error) {
	l := &metalv1alpha1.ServerList{}
	if err := c.List(ctx, l, client.MatchingLabels(labels)); err != nil {
		return nil, fmt.Errorf("cannot list Servers: %w", err)
	}
	slices.SortFunc(l.Items, func(a, b metalv1alpha1.Server) int { return strings.Compare(a.Name, b.Name) })
	return l.Items, nil
}
