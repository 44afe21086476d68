// Package secretcopy keeps a Secret of a remote cluster equal to keys of a
// Secret of the management cluster.
//
// The values are read from the source at every reconcile and written to the
// remote Secret with a plain create or update: never into the SecretCopy
// (spec, status, annotations), never into an event or an error, and never
// into a last-applied annotation of the remote Secret — the three places
// provider-kubernetes' patchesFrom left them (#40).
package secretcopy

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// LabelCopiedBy names, on a remote Secret, the SecretCopy that wrote it. A
// Secret without it (or naming another copy) is never written or deleted.
const LabelCopiedBy = "kubernetes.provider.c5c3.io/secret-copy"

// Setup adds the SecretCopy controller. Sources are read past the manager's
// cache: the provider does not keep every Secret of the management cluster
// in memory for the few it copies. A source outside namespaces (nil:
// DefaultSourceNamespaces) or read by a ProviderConfig is refused.
func Setup(mgr ctrl.Manager, o controller.Options, clients *remotekube.Clients, namespaces []string) error {
	local := mgr.GetAPIReader()
	allowed, err := newSources(context.Background(), mgr, namespaces)
	if err != nil {
		return err
	}
	c := providerconfig.Connector[*v1alpha1.SecretCopy, remotekube.Remote]{
		Client: kubernetes.Remote(mgr, clients),
		External: func(remote remotekube.Remote) managed.TypedExternalClient[*v1alpha1.SecretCopy] {
			return &external{remote: remote.Client, local: local, sources: allowed}
		},
	}
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.SecretCopyKind), &v1alpha1.SecretCopyList{},
		managed.WithTypedExternalConnector[*v1alpha1.SecretCopy](c))
}

type external struct {
	remote  client.Client
	local   client.Reader
	sources *sources
}

func (e *external) Disconnect(context.Context) error { return nil }

func (e *external) Observe(ctx context.Context, mg *v1alpha1.SecretCopy) (managed.ExternalObservation, error) {
	t := mg.Spec.ForProvider.Target
	s := &corev1.Secret{}
	err := e.remote.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, s)
	if kerrors.IsNotFound(err) {
		return managed.ExternalObservation{}, nil
	}
	if err != nil {
		return managed.ExternalObservation{}, fmt.Errorf("cannot read Secret %s/%s in the remote cluster: %w", t.Namespace, t.Name, err)
	}
	if s.Labels[LabelCopiedBy] != mg.Name {
		if meta.WasDeleted(mg) {
			// Not ours: nothing of ours to delete.
			return managed.ExternalObservation{}, nil
		}
		return managed.ExternalObservation{}, fmt.Errorf("Secret %s/%s exists in the remote cluster and was not written by this SecretCopy (its label %s is %q): delete it there, or copy to another name",
			t.Namespace, t.Name, LabelCopiedBy, s.Labels[LabelCopiedBy])
	}
	if meta.WasDeleted(mg) {
		return managed.ExternalObservation{ResourceExists: true}, nil
	}
	want, version, err := e.data(ctx, &mg.Spec.ForProvider)
	if err != nil {
		return managed.ExternalObservation{}, err
	}
	mg.Status.AtProvider = v1alpha1.SecretCopyObservation{Keys: slices.Sorted(maps.Keys(want)), SourceResourceVersion: version}
	mg.SetConditions(xpv2.Available())
	upToDate := maps.EqualFunc(s.Data, want, slices.Equal[[]byte]) && labelled(s.Labels, t.Labels)
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.SecretCopy) (managed.ExternalCreation, error) {
	want, _, err := e.data(ctx, &mg.Spec.ForProvider)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	t := mg.Spec.ForProvider.Target
	s := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: want}
	s.Namespace, s.Name = t.Namespace, t.Name
	s.Labels = labels(mg)
	// A plain create: a Secret someone made since the observation is not
	// taken over.
	if err := e.remote.Create(ctx, s); err != nil {
		return managed.ExternalCreation{}, fmt.Errorf("cannot create Secret %s/%s in the remote cluster: %w", t.Namespace, t.Name, err)
	}
	return managed.ExternalCreation{}, nil
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.SecretCopy) (managed.ExternalUpdate, error) {
	want, _, err := e.data(ctx, &mg.Spec.ForProvider)
	if err != nil {
		return managed.ExternalUpdate{}, err
	}
	t := mg.Spec.ForProvider.Target
	s := &corev1.Secret{}
	if err := e.remote.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, s); err != nil {
		return managed.ExternalUpdate{}, fmt.Errorf("cannot read Secret %s/%s in the remote cluster: %w", t.Namespace, t.Name, err)
	}
	if s.Labels[LabelCopiedBy] != mg.Name {
		return managed.ExternalUpdate{}, fmt.Errorf("Secret %s/%s in the remote cluster is no longer this SecretCopy's (label %s): not written", t.Namespace, t.Name, LabelCopiedBy)
	}
	s.Data = want
	// Labels others set stay; the copy's own are set again.
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	maps.Copy(s.Labels, labels(mg))
	// An update with the read version: a concurrent change is retried
	// from a new observation, not overwritten.
	if err := e.remote.Update(ctx, s); err != nil {
		return managed.ExternalUpdate{}, fmt.Errorf("cannot update Secret %s/%s in the remote cluster: %w", t.Namespace, t.Name, err)
	}
	return managed.ExternalUpdate{}, nil
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.SecretCopy) (managed.ExternalDelete, error) {
	t := mg.Spec.ForProvider.Target
	s := &corev1.Secret{}
	s.Namespace, s.Name = t.Namespace, t.Name
	if err := e.remote.Delete(ctx, s); err != nil && !kerrors.IsNotFound(err) {
		return managed.ExternalDelete{}, fmt.Errorf("cannot delete Secret %s/%s in the remote cluster: %w", t.Namespace, t.Name, err)
	}
	return managed.ExternalDelete{}, nil
}

// data is what the remote Secret must hold, and the source's version. The
// errors name keys and Secrets, never a value.
func (e *external) data(ctx context.Context, p *v1alpha1.SecretCopyParameters) (map[string][]byte, string, error) {
	if err := e.sources.refuse(ctx, p.Source); err != nil {
		return nil, "", err
	}
	src := &corev1.Secret{}
	if err := e.local.Get(ctx, client.ObjectKey{Namespace: p.Source.Namespace, Name: p.Source.Name}, src); err != nil {
		if kerrors.IsNotFound(err) {
			return nil, "", fmt.Errorf("waiting for Secret %s/%s (spec.forProvider.source) to exist in the management cluster", p.Source.Namespace, p.Source.Name)
		}
		return nil, "", fmt.Errorf("cannot read Secret %s/%s (spec.forProvider.source): %w", p.Source.Namespace, p.Source.Name, err)
	}
	return Data(p, src)
}

// Data is what the remote Secret holds for source: the copied keys and the
// literals.
func Data(p *v1alpha1.SecretCopyParameters, source *corev1.Secret) (map[string][]byte, string, error) {
	want := make(map[string][]byte, len(p.Keys)+len(p.Literals))
	for i, k := range p.Keys {
		v, ok := source.Data[k.From]
		if !ok {
			return nil, "", fmt.Errorf("waiting for Secret %s/%s to hold key %q (spec.forProvider.keys[%d].from)", source.Namespace, source.Name, k.From, i)
		}
		if _, dup := want[k.Key()]; dup {
			return nil, "", fmt.Errorf("spec.forProvider.keys[%d] writes key %q a second time: give each key its own name (to)", i, k.Key())
		}
		want[k.Key()] = v
	}
	for _, k := range slices.Sorted(maps.Keys(p.Literals)) {
		if _, dup := want[k]; dup {
			return nil, "", fmt.Errorf("spec.forProvider.literals[%s] is also a copied key: a key is copied or literal, not both", k)
		}
		want[k] = []byte(p.Literals[k])
	}
	return want, source.ResourceVersion, nil
}

func labels(mg *v1alpha1.SecretCopy) map[string]string {
	l := maps.Clone(mg.Spec.ForProvider.Target.Labels)
	if l == nil {
		l = map[string]string{}
	}
	l[LabelCopiedBy] = mg.Name
	return l
}

// labelled says whether have carries every label of want.
func labelled(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
