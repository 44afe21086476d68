// Package gardener requests admin kubeconfigs of Shoots from a garden
// cluster through the shoots/adminkubeconfig subresource.
package gardener

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/provider/internal/clients/cache"
	kubeconfigs "github.com/c5c3/consumer-plane/provider/internal/clients/kubeconfig"
)

// A Kubeconfig is what Gardener issued.
type Kubeconfig struct {
	Data      []byte
	Server    string
	ExpiresAt time.Time
}

// Garden is what the ShootKubeconfig controller needs of a garden cluster.
type Garden interface {
	// AdminKubeconfig requests a new admin kubeconfig of a Shoot that lives
	// for the given time. Errors are Kubernetes API errors
	// (k8s.io/apimachinery/pkg/api/errors recognises them).
	AdminKubeconfig(ctx context.Context, namespace, shoot string, lifetime time.Duration) (Kubeconfig, error)
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = gardencorev1beta1.AddToScheme(s)      //nolint:errcheck // registering known types cannot fail.
	_ = authenticationv1alpha1.AddToScheme(s) //nolint:errcheck // registering known types cannot fail.
	return s
}()

// A static mapping, so no discovery request precedes every reconcile.
var mapper = func() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(gardencorev1beta1.SchemeGroupVersion.WithKind("Shoot"), meta.RESTScopeNamespace)
	return m
}()

// Clients keeps one garden client per kubeconfig, so steady-state polls
// reuse its connections. A landscape has one garden or a few; kubeconfigs
// that rotate away are dropped once unused for an hour, or beyond 64.
type Clients struct {
	clients *cache.Cache[Garden]
}

// NewClients returns an empty client cache.
func NewClients() *Clients { return &Clients{clients: cache.New[Garden](64, time.Hour, nil)} }

// ForKubeconfig returns the client of a garden kubeconfig.
func (c *Clients) ForKubeconfig(kubeconfig []byte) (Garden, error) {
	key := sha256.Sum256(kubeconfig)
	return c.clients.Get(hex.EncodeToString(key[:]), func() (Garden, error) {
		cfg, err := kubeconfigs.RESTConfig(kubeconfig, "the garden kubeconfig")
		if err != nil {
			return nil, err
		}
		return ForConfig(cfg)
	})
}

// ForConfig returns the client of a garden cluster's REST config.
func ForConfig(cfg *rest.Config) (Garden, error) {
	kube, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	return garden{kube: kube}, nil
}

type garden struct{ kube client.Client }

func (g garden) AdminKubeconfig(ctx context.Context, namespace, shoot string, lifetime time.Duration) (Kubeconfig, error) {
	seconds := int64(lifetime / time.Second)
	req := &authenticationv1alpha1.AdminKubeconfigRequest{Spec: authenticationv1alpha1.AdminKubeconfigRequestSpec{ExpirationSeconds: &seconds}}
	s := &gardencorev1beta1.Shoot{ObjectMeta: metav1.ObjectMeta{Name: shoot, Namespace: namespace}}
	if err := g.kube.SubResource("adminkubeconfig").Create(ctx, s, req); err != nil {
		return Kubeconfig{}, err
	}
	kc := Kubeconfig{Data: req.Status.Kubeconfig, ExpiresAt: req.Status.ExpirationTimestamp.Time}
	if cfg, err := clientcmd.Load(kc.Data); err == nil {
		if ctx, ok := cfg.Contexts[cfg.CurrentContext]; ok {
			if cl, ok := cfg.Clusters[ctx.Cluster]; ok {
				kc.Server = cl.Server
			}
		}
	}
	return kc, nil
}
