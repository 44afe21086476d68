// Package nodelabel keeps one label on the nodes of a remote cluster: the
// nodes a NodeLabel names carry its key with their value, every other node
// is without it.
package nodelabel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/provider/internal/clients/watch"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Setup adds the NodeLabel controller. nodes keeps a watched view of each
// cluster's nodes: a label changed behind the NodeLabel's back (by hand, by
// another writer) requests its observation within a second, so the
// placement label, which decides where each cloud's nova-compute runs, is
// repaired then and not at the next poll.
func Setup(mgr ctrl.Manager, o controller.Options, clients *remotekube.Clients, nodes *watch.Clusters) error {
	// A pool's cluster goes with its NodeLabel (its kubeconfig Secret
	// first): its nodes' labels go with it (see Observe).
	remote := kubernetes.RemoteOrGone(mgr, clients)
	view := providerconfig.ClusterView[*v1alpha1.NodeLabel](mgr, nodes, kubernetes.NewProviderConfig, nil).Client
	c := providerconfig.Connector[*v1alpha1.NodeLabel, *external]{
		Client: func(ctx context.Context, mg resource.LegacyManaged) (*external, error) {
			r, err := remote(ctx, mg)
			if err != nil || r == nil {
				return &external{}, err
			}
			e := &external{remote: r.Client, nodes: r.Client}
			if meta.WasDeleted(mg) {
				// Read from the cluster: a deleted NodeLabel starts no
				// watch of a cluster that may be going with it.
				return e, nil
			}
			if e.nodes, err = view(ctx, mg); err != nil {
				return nil, err
			}
			return e, nil
		},
		External: func(e *external) managed.TypedExternalClient[*v1alpha1.NodeLabel] { return e },
	}
	changed := watch.Source(mgr.GetClient(), nodes, func() resource.ManagedList { return &v1alpha1.NodeLabelList{} })
	return pcontroller.SetupManagedWatching(mgr, o, v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.NodeLabelKind), &v1alpha1.NodeLabelList{},
		changed, managed.WithTypedExternalConnector[*v1alpha1.NodeLabel](c))
}

// external writes the labels through remote and reads the nodes from
// nodes (the watched view; the cluster itself while deleting). A nil
// remote is a cluster that is gone.
type external struct {
	remote client.Client
	nodes  remotekube.NodeLister
}

func (e *external) Disconnect(context.Context) error { return nil }

// changes are the label patches the nodes need: a value per node (nil
// removes the key).
type changes map[string]*string

// plan reads the cluster's nodes: what to change, how many carry the
// value given, and which named nodes are missing.
func (e *external) plan(ctx context.Context, p v1alpha1.NodeLabelParameters) (changes, v1alpha1.NodeLabelObservation, error) {
	nodes, err := remotekube.NodeLabels(ctx, e.nodes)
	if err != nil {
		return nil, v1alpha1.NodeLabelObservation{}, err
	}
	ch, obs := changes{}, v1alpha1.NodeLabelObservation{}
	seen := map[string]bool{}
	for name, labels := range nodes {
		seen[name] = true
		have, has := labels[p.Key]
		want, named := p.Values[name]
		switch {
		case named && has && have == want:
			obs.Labelled++
		case named:
			ch[name] = &want
		case has:
			ch[name] = nil
		}
	}
	for name := range p.Values {
		if !seen[name] {
			obs.Missing = append(obs.Missing, name)
		}
	}
	slices.Sort(obs.Missing)
	return ch, obs, nil
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.NodeLabel) (managed.ExternalObservation, error) {
	p := mg.Spec.ForProvider
	if meta.WasDeleted(mg) {
		// Gone once no node carries the key, or with the cluster: a
		// deleted pool's cluster (unreachable, or its kubeconfig gone)
		// takes its nodes' labels with it. A cluster that is only briefly
		// unreachable keeps them, and the next NodeLabel of the key on it
		// clears what it does not name.
		if e.remote == nil {
			return managed.ExternalObservation{}, nil
		}
		ch, _, err := e.plan(ctx, v1alpha1.NodeLabelParameters{Key: p.Key})
		if err != nil {
			return managed.ExternalObservation{}, nil //nolint:nilerr // see above
		}
		return managed.ExternalObservation{ResourceExists: len(ch) > 0}, nil
	}
	ch, obs, err := e.plan(ctx, p)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = obs
	mg.SetConditions(xpv2.Available())
	// The label set lives on the nodes, which always exist: there is
	// nothing to create.
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: len(ch) == 0}, nil
}

func (e *external) Create(context.Context, *v1alpha1.NodeLabel) (managed.ExternalCreation, error) {
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.NodeLabel) (managed.ExternalUpdate, error) {
	ch, _, err := e.plan(ctx, mg.Spec.ForProvider)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	return managed.ExternalUpdate{}, e.apply(ctx, mg.Spec.ForProvider.Key, ch)
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.NodeLabel) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	ch, _, err := e.plan(ctx, v1alpha1.NodeLabelParameters{Key: mg.Spec.ForProvider.Key})
	if err != nil {
		return managed.ExternalDelete{}, err
	}
	return managed.ExternalDelete{}, e.apply(ctx, mg.Spec.ForProvider.Key, ch)
}

// apply patches each node's label alone (a JSON merge patch of the one
// key): the node's other labels, which the kubelet and others keep, are not
// touched. A node deleted meanwhile is skipped.
func (e *external) apply(ctx context.Context, key string, ch changes) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(ch)) {
		patch, err := labelPatch(key, ch[name])
		if err != nil {
			return err
		}
		n := &corev1.Node{}
		n.Name = name
		if err := e.remote.Patch(ctx, n, client.RawPatch(types.MergePatchType, patch)); err != nil && !kerrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cannot label node %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// labelPatch is the merge patch that sets key to value, or removes it.
func labelPatch(key string, value *string) ([]byte, error) {
	var v any
	if value != nil {
		v = *value
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
}
