package integration

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// cloudCredential is a Secret holding a clouds.yaml whose cloud "admin"
// logs in as user (password secret) to project admin at authURL.
func cloudCredential(name, authURL, user string) *corev1.Secret {
	y := strings.Replace(strings.Replace(cloudsYAML, keystoneURL, authURL, 1), "username: admin", "username: "+user, 1)
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "crossplane-system"}, StringData: map[string]string{"clouds.yaml": y}}
}

// TestIntegrationManyProviderConfigsIssueNoTokens: 200 clouds, each its own
// ProviderConfig with its own Keystone user, as a landscape of 200 clouds
// has. Once every one has read its catalog (a session and token each), the
// provider's steady-state polls of all 200 authenticate no more: every
// session stays cached at the provider's default size.
func TestIntegrationManyProviderConfigsIssueNoTokens(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	const n = 200
	c := h.clients(t)
	member, err := c.keystone.FindRole(ctx, "", "member")
	if err != nil || member == nil {
		t.Fatalf("no role member in the local Keystone: %v", err)
	}
	admin, err := c.keystone.FindProject(ctx, "default", "admin")
	if err != nil || admin == nil {
		t.Fatalf("no project admin in the local Keystone: %v", err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = h.name(fmt.Sprintf("many-%03d", i))
	}
	// Users, grants, Secrets and ProviderConfigs, three at a time: the
	// local Keystone has three workers, and more at once only wait in its
	// queue, where TLS handshakes time out.
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []string
		work = make(chan string)
	)
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				if err := addCloud(ctx, h, c.keystone, name, member.ID, admin.ID); err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
				}
			}
		}()
	}
	for _, name := range names {
		work <- name
	}
	close(work)
	wg.Wait()
	t.Cleanup(func() {
		for _, name := range names {
			_ = h.kube.Delete(context.Background(), cloudsYAMLConfig(name, "", "", ""))
			_ = h.kube.Delete(context.Background(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "crossplane-system"}})
			if u, err := c.keystone.FindUser(context.Background(), "default", name); err == nil && u != nil {
				_ = c.keystone.DeleteUser(context.Background(), u.ID)
			}
		}
	})
	if len(errs) > 0 {
		t.Fatalf("cannot set up %d of %d clouds, e.g.: %s", len(errs), n, errs[0])
	}

	read := func() (int, string) {
		ready, last := 0, ""
		for _, name := range names {
			pc := &openstackv1alpha1.ProviderConfig{}
			if err := h.kube.Get(ctx, client.ObjectKey{Name: name}, pc); err != nil {
				last = err.Error()
				continue
			}
			if pc.GetCondition(openstackv1alpha1.ConditionCatalogRead).Status == corev1.ConditionTrue {
				ready++
			} else {
				last = name + ": " + pc.GetCondition(openstackv1alpha1.ConditionCatalogRead).Message
			}
		}
		return ready, last
	}
	eventuallyWithin(t, 3*patience, "all 200 ProviderConfigs read their catalog", func() (bool, string) {
		ready, last := read()
		return ready == n, fmt.Sprintf("%d of %d; e.g. %s", ready, n, last)
	})
	before := openstack.ReadCounts()
	time.Sleep(5 * pollInterval)
	d := openstack.ReadCounts().Sub(before)
	t.Logf("over %s of steady state with %d ProviderConfigs: %d API calls, %d tokens", 5*pollInterval, n, d.Requests, d.Tokens)
	if d.Tokens != 0 {
		t.Fatalf("steady-state polls of %d ProviderConfigs issued %d Keystone tokens, want 0 (sessions evicted from the cache?)", n, d.Tokens)
	}
}

// addCloud makes a Keystone user (member of project admin), the Secret of
// its clouds.yaml and an OpenStack ProviderConfig, all named name. Each
// step is tried again on failure (by again): on a loaded machine the
// local Keystone's answers time out now and then (seen in CI: a TLS
// handshake timeout), and this is the test's setup, not what it measures.
// A user whose creation answered with an error may exist: it is looked up
// before it is made again.
func addCloud(ctx context.Context, h *harness, k openstack.Identity, name, roleID, projectID string) error {
	enabled := true
	var u *users.User
	if err := again(func() error {
		if found, err := k.FindUser(ctx, "default", name); err != nil || found != nil {
			u = found
			return err
		}
		made, err := k.CreateUser(ctx, users.CreateOpts{Name: name, DomainID: "default", Password: "secret", Enabled: &enabled})
		u = made
		return err
	}); err != nil {
		return fmt.Errorf("user %s: %w", name, err)
	}
	if err := again(func() error { return k.Grant(ctx, roleID, roles.AssignOpts{UserID: u.ID, ProjectID: projectID}) }); err != nil {
		return fmt.Errorf("grant to %s: %w", name, err)
	}
	for _, o := range []client.Object{cloudCredential(name, keystoneURL, name), cloudsYAMLConfig(name, "crossplane-system", name, "")} {
		if err := again(func() error {
			if err := h.kube.Create(ctx, o); !kerrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

// again runs f until it succeeds, up to six times, waiting 1, 2, 4, 8
// and 16 s between: a Keystone whose three workers are all busy leaves a
// TLS handshake waiting past the client's 10 s, and three tries a second
// apart did not outlast that in CI (stop 72: 1 of 200 clouds failed).
func again(f func() error) error {
	var err error
	for wait := time.Second; ; wait *= 2 {
		if err = f(); err == nil || wait > 16*time.Second {
			return err
		}
		time.Sleep(wait)
	}
}

// TestIntegrationHangingCloudHoldsNoOneElse: one cloud's Keystone accepts
// connections and never answers (each request would hold a worker for the
// client's 60 s timeout). Its resources wait, saying why; every other
// cloud's resources converge as if it were not there.
func TestIntegrationHangingCloudHoldsNoOneElse(t *testing.T) {
	h := withOpenStack(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	})
	hanging := h.name("hanging")
	secret := cloudCredential(hanging, "http://"+l.Addr().String()+"/v3", "admin")
	h.create(t, secret)
	h.create(t, cloudsYAMLConfig(hanging, "crossplane-system", hanging, ""))
	t.Cleanup(func() {
		_ = h.kube.Delete(context.Background(), cloudsYAMLConfig(hanging, "", "", ""))
		_ = h.kube.Delete(context.Background(), secret)
	})

	// More of the hanging cloud's resources than the Project controller
	// has workers (5), created first, then the healthy cloud's.
	var stuck, healthy []resource.Managed
	for i := range 10 {
		mg := kinds[0].newMR(h.name(fmt.Sprintf("hang-%d", i)), "on a hanging cloud").(*keystonev1alpha1.Project)
		mg.Spec.ProviderConfigReference = ref(hanging)
		h.create(t, mg)
		stuck = append(stuck, mg)
	}
	for i := range 10 {
		mg := kinds[0].newMR(h.name(fmt.Sprintf("beside-hang-%d", i)), "beside a hanging cloud")
		h.create(t, mg)
		healthy = append(healthy, mg)
	}
	for _, mg := range healthy {
		h.waitReady(t, mg)
	}
	h.waitSyncError(t, stuck[len(stuck)-1], "127.0.0.1")

	// Cleanup: the healthy cloud's projects go; the hanging cloud's
	// resources never made anything, and go once their cloud answers
	// again (its credential pointed back at the local Keystone).
	for _, mg := range append(healthy, stuck...) {
		h.delete(t, mg)
	}
	h.update(t, secret, func() {
		secret.StringData = map[string]string{"clouds.yaml": cloudsYAML}
	})
	for _, mg := range append(healthy, stuck...) {
		h.waitGone(t, mg)
	}
}
