package providerconfig

import (
	"context"
	"fmt"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cephv1alpha1 "github.com/c5c3/consumer-plane/apis/ceph/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/ceph"
	"github.com/c5c3/consumer-plane/provider/internal/terminal"
)

// Ceph connects managed resources to the Ceph cluster their ProviderConfig
// names, through a connection cache shared by every controller.
type Ceph struct {
	Kube  client.Client
	Conns *ceph.Cache
}

// Client tracks mg's use of its ProviderConfig, reads it and its Secret
// and returns a client on the shared connection.
func (c Ceph) Client(ctx context.Context, mg resource.LegacyManaged) (*ceph.Client, error) {
	pc := &cephv1alpha1.ProviderConfig{}
	if err := Get(ctx, c.Kube, mg, &cephv1alpha1.ProviderConfigUsage{}, pc); err != nil {
		return nil, err
	}
	cfg, err := c.Config(ctx, pc)
	if err != nil {
		return nil, err
	}
	return c.Conns.Client(cfg)
}

// Config resolves a ProviderConfig: the key from the credentials Secret,
// the monitors from spec.monHosts or else from that Secret's mon_host key
// (which is how a StorageCluster publishes Rook's monitor list).
func (c Ceph) Config(ctx context.Context, pc *cephv1alpha1.ProviderConfig) (ceph.Config, error) {
	s := pc.Spec
	ref := s.Credentials.SecretRef
	if ref == nil {
		return ceph.Config{}, terminal.Wrap(fmt.Errorf("ProviderConfig %q: spec.credentials.secretRef is required", pc.Name))
	}
	sec := &corev1.Secret{}
	if err := c.Kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
		return ceph.Config{}, errors.Wrapf(err, errGetCreds, pc.Name)
	}
	key := strings.TrimSpace(string(sec.Data[ref.Key]))
	if key == "" {
		return ceph.Config{}, fmt.Errorf("ProviderConfig %q: Secret %s/%s has no key %q (the CephX key of client.%s)", pc.Name, ref.Namespace, ref.Name, ref.Key, user(s))
	}
	hosts := s.MonHosts
	if len(hosts) == 0 {
		hosts = strings.Split(strings.TrimSpace(string(sec.Data[cephv1alpha1.ConnectionSecretKeyMonHost])), ",")
	}
	mon := MonHost(hosts)
	if mon == "" {
		return ceph.Config{}, fmt.Errorf("ProviderConfig %q: no monitors: set spec.monHosts or key %s of Secret %s/%s", pc.Name,
			cephv1alpha1.ConnectionSecretKeyMonHost, ref.Namespace, ref.Name)
	}
	return ceph.Config{MonHost: mon, User: user(s), Key: key}, nil
}

func user(s cephv1alpha1.ProviderConfigSpec) string {
	if s.User == "" {
		return "admin"
	}
	return s.User
}

// MonHost turns monitor addresses (host:port, [v2:...,v1:...], or Rook's
// name=host:port) into Ceph's mon_host list.
func MonHost(hosts []string) string {
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		if name, addr, ok := strings.Cut(h, "="); ok && !strings.ContainsAny(name, ":[") {
			h = addr
		}
		if h != "" {
			out = append(out, h)
		}
	}
	return strings.Join(out, ",")
}
