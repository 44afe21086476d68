package providerconfig

import (
	"context"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ovnv1alpha1 "github.com/c5c3/consumer-plane/apis/ovn/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ovn"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// OVN connects managed resources to the OVN databases their ProviderConfig
// names, through a connection cache shared by every controller.
type OVN struct {
	Kube  client.Client
	Conns *ovn.Cache
}

// Conn tracks mg's use of its ProviderConfig, reads it (and its TLS
// Secret) and returns the shared connection.
func (o OVN) Conn(ctx context.Context, mg resource.LegacyManaged) (*ovn.Conn, error) {
	pc := &ovnv1alpha1.ProviderConfig{}
	if err := Get(ctx, o.Kube, mg, &ovnv1alpha1.ProviderConfigUsage{}, pc); err != nil {
		return nil, err
	}
	cfg, err := o.Config(ctx, pc)
	if err != nil {
		return nil, err
	}
	return o.Conns.Conn(ctx, cfg)
}

// Config resolves a ProviderConfig into what a connection needs.
func (o OVN) Config(ctx context.Context, pc *ovnv1alpha1.ProviderConfig) (ovn.Config, error) {
	s := pc.Spec
	cfg := ovn.Config{Northbound: s.Northbound.Endpoints, LeaderOnly: ptr.Deref(s.LeaderOnly, true)}
	if s.Southbound != nil {
		cfg.Southbound = s.Southbound.Endpoints
	}
	if ref := s.TLSSecretRef; ref != nil {
		sec := &corev1.Secret{}
		if err := o.Kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
			return ovn.Config{}, errors.Wrapf(err, "cannot read spec.tlsSecretRef %s/%s of ProviderConfig %q", ref.Namespace, ref.Name, pc.Name)
		}
		cfg.CA, cfg.Cert, cfg.Key = sec.Data[ovnv1alpha1.TLSSecretKeyCA], sec.Data[ovnv1alpha1.TLSSecretKeyCert], sec.Data[ovnv1alpha1.TLSSecretKeyKey]
		if len(cfg.Cert) == 0 || len(cfg.Key) == 0 {
			return ovn.Config{}, terminal.Wrap(fmt.Errorf("ProviderConfig %q: Secret %s/%s needs keys %s and %s (and %s for the CA)",
				pc.Name, ref.Namespace, ref.Name, ovnv1alpha1.TLSSecretKeyCert, ovnv1alpha1.TLSSecretKeyKey, ovnv1alpha1.TLSSecretKeyCA))
		}
	}
	return cfg, nil
}
