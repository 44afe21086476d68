// Package kubernetestest starts a controller of the kubernetes.provider.c5c3.io
// group against the test API server, which plays both the management
// cluster and the remote one its ProviderConfigs reach.
package kubernetestest

import (
	"context"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/logging"
	"github.com/crossplane/crossplane-runtime/v2/pkg/ratelimiter"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	"github.com/c5c3/consumer-plane/test/kubetest"
)

// Setup is a controller's Setup.
type Setup func(ctrl.Manager, controller.Options, *remotekube.Clients) error

// Start runs the controller setup adds until the test ends, polling every
// 2 s (a changed source is seen at the next poll), and returns a client of
// the API server.
func Start(t *testing.T, setup Setup) client.Client {
	t.Helper()
	return StartPolling(t, setup, 2*time.Second)
}

// StartPolling is Start polling every poll: an hour shows that what a
// controller repairs within seconds it learnt from a watch.
func StartPolling(t *testing.T, setup Setup, poll time.Duration) client.Client {
	t.Helper()
	// A second test of a package starts its controller again: the
	// manager lets it take the name the first test's used.
	mgr := kubetest.Manager(t, clientgoscheme.AddToScheme, v1alpha1.AddToScheme)
	o := controller.Options{Logger: logging.NewNopLogger(), GlobalRateLimiter: ratelimiter.NewGlobal(10), PollInterval: poll, MaxConcurrentReconciles: 2}
	if err := setup(mgr, o, remotekube.NewClients(clientgoscheme.Scheme, remotekube.DefaultClients, time.Hour)); err != nil {
		t.Fatal(err)
	}
	return kubetest.Start(t, mgr)
}

// ProviderConfig creates a ProviderConfig name whose credentials are a
// kubeconfig of the test API server, in Secret mgmt/<name>-kubeconfig
// (namespace mgmt is made when absent): the remote cluster the group's
// controllers reach. The Secret is returned with it: deleting it plays a
// cluster whose kubeconfig went with its Shoot.
func ProviderConfig(t *testing.T, kube client.Client, name string) (*v1alpha1.ProviderConfig, *corev1.Secret) {
	t.Helper()
	ctx := context.Background()
	if err := kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "mgmt"}}); err != nil && !kerrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	kc := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: "mgmt"},
		Data: map[string][]byte{"kubeconfig": kubetest.Kubeconfig(t, kubetest.Config(t))}}
	pc := &v1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1alpha1.ProviderConfigSpec{
		Credentials: v1alpha1.ClusterCredentials{Source: xpv2.CredentialsSourceSecret, CommonCredentialSelectors: xpv2.CommonCredentialSelectors{
			SecretRef: &xpv2.SecretKeySelector{SecretReference: xpv2.SecretReference{Namespace: kc.Namespace, Name: kc.Name}, Key: "kubeconfig"}}}}}
	for _, o := range []client.Object{kc, pc} {
		if err := kube.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	return pc, kc
}
