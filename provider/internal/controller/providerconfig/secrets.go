package providerconfig

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultSecretsFor is how long a credentials Secret read from the API
// server answers the reconciles that follow: a rotated credential is used
// at most this much later.
const DefaultSecretsFor = 10 * time.Second

// CachedSecrets is c whose Gets of Secrets are remembered for ttl. The
// provider keeps no informer on Secrets (it would hold every Secret of the
// cluster, #23 §11), so every reconcile's Connect read its ProviderConfig's
// Secret from the API server: 1,420 GETs while 500 resources converged,
// more than any other request (#24 §5). Only the Secrets the provider was
// asked for are kept, each at most ttl; a Get of a Secret that failed is
// not kept. Everything else goes to c.
func CachedSecrets(c client.Client, ttl time.Duration) client.Client {
	return &cachedSecrets{Client: c, ttl: ttl, secrets: map[client.ObjectKey]cachedSecret{}}
}

type cachedSecrets struct {
	client.Client
	ttl     time.Duration
	mu      sync.Mutex
	secrets map[client.ObjectKey]cachedSecret
}

type cachedSecret struct {
	secret *corev1.Secret
	at     time.Time
}

func (c *cachedSecrets) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	s, ok := obj.(*corev1.Secret)
	if !ok || len(opts) > 0 {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	now := time.Now()
	c.mu.Lock()
	e, hit := c.secrets[key]
	c.mu.Unlock()
	if hit && now.Sub(e.at) < c.ttl {
		e.secret.DeepCopyInto(s)
		return nil
	}
	if err := c.Client.Get(ctx, key, s); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.secrets {
		if now.Sub(e.at) >= c.ttl {
			delete(c.secrets, k)
		}
	}
	c.secrets[key] = cachedSecret{secret: s.DeepCopy(), at: now}
	return nil
}
