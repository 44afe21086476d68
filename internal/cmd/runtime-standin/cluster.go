package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"time"

	pkgv1 "github.com/crossplane/crossplane/apis/v2/pkg/v1"
	"github.com/crossplane/crossplane/apis/v2/pkg/v1beta1"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/consumer-plane/internal/localgarden"
)

// Core's defaults for a package's pod (internal/controller/pkg/runtime of
// Crossplane v2.4.0): the user and group every package runs as unless its
// runtime config says otherwise, the container the runtime config's
// template addresses, and where the TLS server Secret is mounted.
const (
	defaultUser       = 2000
	containerName     = "package-runtime"
	tlsServerDir      = "/tls/server"
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	rootCASecret      = "crossplane-root-ca"
	tokenLifetime     = 7 * 24 * time.Hour
)

type cluster struct {
	kube client.Client
	cs   kubernetes.Interface
	cfg  *rest.Config
	ns   string
}

func newCluster(kubeconfig, ns string) (*cluster, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{pkgv1.AddToScheme, v1beta1.AddToScheme, corev1.AddToScheme, rbacv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	kube, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &cluster{kube: kube, cs: cs, cfg: cfg, ns: ns}, nil
}

// revision is the active revision of an installed package.
type revision struct {
	kind, pkg, name, image string
	obj                    pkgv1.PackageRevisionWithRuntime
	// The package's runtime config: with --package-runtime=External core
	// does not copy it to the revision (its Deployment runtime does), so
	// it is read from the package, as that runtime would see it.
	runtimeConfig *pkgv1.RuntimeConfigReference
}

// activeRevision waits for the package's active revision and the image core
// resolved for it.
func (c *cluster) activeRevision(ctx context.Context, kind, pkg string) (*revision, error) {
	for {
		var list pkgv1.PackageRevisionList = &pkgv1.FunctionRevisionList{}
		if kind == "provider" {
			list = &pkgv1.ProviderRevisionList{}
		}
		err := c.kube.List(ctx, list, client.MatchingLabels{pkgv1.LabelParentPackage: pkg})
		if err == nil {
			for _, r := range list.GetRevisions() {
				pr, ok := r.(pkgv1.PackageRevisionWithRuntime)
				if !ok || r.GetDesiredState() != pkgv1.PackageRevisionActive || r.GetResolvedSource() == "" {
					continue
				}
				var parent pkgv1.PackageWithRuntime = &pkgv1.Function{}
				if kind == "provider" {
					parent = &pkgv1.Provider{}
				}
				if err = c.kube.Get(ctx, client.ObjectKey{Name: pkg}, parent); err != nil {
					break
				}
				return &revision{kind: kind, pkg: pkg, name: r.GetName(), image: r.GetResolvedSource(), obj: pr, runtimeConfig: parent.GetRuntimeConfigRef()}, nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return nil, fmt.Errorf("listing the revisions of %s %s: %w", kind, pkg, err)
			}
			return nil, fmt.Errorf("%s %s has no active revision with a resolved image: is it installed (a dependency of the Configuration), and did core pull it? (kubectl describe %s %s)", kind, pkg, kind, pkg)
		case <-time.After(2 * time.Second):
		}
	}
}

// pod is what the package's pod would be given: files mounted into it, its
// environment and arguments, and the user it runs as.
type pod struct {
	files    map[string][]byte
	env      []string
	args     []string
	hasArgs  bool
	uid, gid uint32
}

// prepare does what core's runtime does for a revision before its pod runs
// and returns the pod.
func (c *cluster) prepare(ctx context.Context, rev *revision) (*pod, error) {
	rc, err := c.runtimeConfig(ctx, rev)
	if err != nil {
		return nil, err
	}
	p := &pod{files: map[string][]byte{}, uid: defaultUser, gid: defaultUser}
	sa := rev.name
	if rc != nil && rc.Spec.ServiceAccountTemplate != nil && rc.Spec.ServiceAccountTemplate.Metadata != nil && rc.Spec.ServiceAccountTemplate.Metadata.Name != nil {
		sa = *rc.Spec.ServiceAccountTemplate.Metadata.Name
	}
	if err := c.fromRuntimeConfig(rc, p); err != nil {
		return nil, err
	}
	if err := c.ensureServiceAccount(ctx, rev, sa); err != nil {
		return nil, err
	}
	if rev.kind == "provider" {
		if err := c.bindSystemRole(ctx, rev, sa); err != nil {
			return nil, err
		}
	}
	if err := c.serviceAccountFiles(ctx, sa, p); err != nil {
		return nil, err
	}
	secret, err := c.tlsServerSecret(ctx, rev)
	if err != nil {
		return nil, err
	}
	for k, v := range secret.Data {
		p.files[tlsServerDir+"/"+k] = v
	}
	// Core's runtime records the Secret on the revision before the pod
	// starts; the revision's controller waits for it to establish a
	// provider's CRDs (their conversion webhook's CA).
	if err := c.updateRevisionStatus(ctx, rev, func() error {
		rev.obj.SetObservedTLSServerSecretName(ptr.To(secret.Name))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("recording the TLS server Secret on revision %s: %w", rev.name, err)
	}
	p.env = append(p.env, "POD_NAMESPACE="+c.ns, "TLS_SERVER_CERTS_DIR="+tlsServerDir)
	if rev.kind == "provider" {
		p.env = append(p.env, "PROVIDER_NAME="+rev.pkg, "REVISION_NAME="+rev.name, "REVISION_UID="+string(rev.obj.GetUID()),
			"WEBHOOK_TLS_CERT_DIR="+tlsServerDir)
	} else {
		p.env = append(p.env, "FUNCTION_NAME="+rev.pkg, "REVISION_NAME="+rev.name, "REVISION_UID="+string(rev.obj.GetUID()))
	}
	return p, nil
}

func (c *cluster) runtimeConfig(ctx context.Context, rev *revision) (*v1beta1.DeploymentRuntimeConfig, error) {
	ref := rev.runtimeConfig
	if ref == nil {
		return nil, nil
	}
	rc := &v1beta1.DeploymentRuntimeConfig{}
	if err := c.kube.Get(ctx, client.ObjectKey{Name: ref.Name}, rc); err != nil {
		if kerrors.IsNotFound(err) && ref.Name == "default" {
			return nil, nil
		}
		return nil, fmt.Errorf("the revision's DeploymentRuntimeConfig %s: %w", ref.Name, err)
	}
	return rc, nil
}

// fromRuntimeConfig applies the package-runtime container's args, env and
// user from the runtime config, as core merges them into its Deployment.
func (c *cluster) fromRuntimeConfig(rc *v1beta1.DeploymentRuntimeConfig, p *pod) error {
	if rc == nil || rc.Spec.DeploymentTemplate == nil || rc.Spec.DeploymentTemplate.Spec == nil {
		return nil
	}
	spec := rc.Spec.DeploymentTemplate.Spec.Template.Spec
	nonRoot := false
	if sc := spec.SecurityContext; sc != nil {
		setIDs(p, sc.RunAsUser, sc.RunAsGroup)
		nonRoot = ptr.Deref(sc.RunAsNonRoot, false)
	}
	for _, ctr := range spec.Containers {
		if ctr.Name != containerName {
			continue
		}
		if len(ctr.Args) > 0 {
			p.args, p.hasArgs = ctr.Args, true
		}
		for _, e := range ctr.Env {
			if e.ValueFrom != nil {
				return fmt.Errorf("DeploymentRuntimeConfig %s: env %s takes its value from a source, which this stand-in does not resolve", rc.Name, e.Name)
			}
			p.env = append(p.env, e.Name+"="+e.Value)
		}
		if sc := ctr.SecurityContext; sc != nil {
			setIDs(p, sc.RunAsUser, sc.RunAsGroup)
			nonRoot = nonRoot || ptr.Deref(sc.RunAsNonRoot, false)
		}
	}
	if nonRoot && p.uid == 0 {
		return fmt.Errorf("DeploymentRuntimeConfig %s: runAsNonRoot, but the container would run as root (a kubelet refuses it)", rc.Name)
	}
	return nil
}

func setIDs(p *pod, uid, gid *int64) {
	if uid != nil {
		p.uid = uint32(*uid) //nolint:gosec // a Kubernetes user ID
	}
	if gid != nil {
		p.gid = uint32(*gid) //nolint:gosec // a Kubernetes group ID
	}
}

// ensureServiceAccount creates the package's ServiceAccount, controlled by
// its revision as core's runtime makes it, unless it exists.
func (c *cluster) ensureServiceAccount(ctx context.Context, rev *revision, name string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns, OwnerReferences: []metav1.OwnerReference{owner(rev)}}}
	if err := c.kube.Create(ctx, sa); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("ServiceAccount %s: %w", name, err)
	}
	return nil
}

// bindSystemRole binds the RBAC manager's system ClusterRole of a provider
// revision to the provider's ServiceAccount, as the RBAC manager does once
// it sees the revision's Deployment. The binding has a name of its own: the
// RBAC manager owns the one named like the role, and empties its subjects
// while no Deployment names a ServiceAccount.
func (c *cluster) bindSystemRole(ctx context.Context, rev *revision, sa string) error {
	role := "crossplane:provider:" + rev.name + ":system"
	n := role + ":runtime-standin"
	b := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: n, OwnerReferences: []metav1.OwnerReference{owner(rev)}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: c.ns}},
	}
	if err := c.kube.Create(ctx, b); err != nil && !kerrors.IsAlreadyExists(err) {
		return fmt.Errorf("ClusterRoleBinding %s: %w", n, err)
	}
	return nil
}

func owner(rev *revision) metav1.OwnerReference {
	gvk := pkgv1.FunctionRevisionGroupVersionKind
	if rev.kind == "provider" {
		gvk = pkgv1.ProviderRevisionGroupVersionKind
	}
	return metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: rev.name, UID: rev.obj.GetUID(), Controller: ptr.To(true)}
}

// serviceAccountFiles issues the ServiceAccount's token and names the API
// server as a pod sees them: the token, CA and namespace files, and
// KUBERNETES_SERVICE_HOST/PORT (client-go's in-cluster configuration).
func (c *cluster) serviceAccountFiles(ctx context.Context, sa string, p *pod) error {
	tr, err := c.cs.CoreV1().ServiceAccounts(c.ns).CreateToken(ctx, sa, &authv1.TokenRequest{
		Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(tokenLifetime.Seconds()))},
	}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("a token for ServiceAccount %s: %w", sa, err)
	}
	ca := c.cfg.CAData
	if len(ca) == 0 && c.cfg.CAFile != "" {
		if ca, err = os.ReadFile(c.cfg.CAFile); err != nil {
			return err
		}
	}
	u, err := url.Parse(c.cfg.Host)
	if err != nil {
		return fmt.Errorf("the API server's address %q: %w", c.cfg.Host, err)
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Hostname(), "443"
	}
	p.files[serviceAccountDir+"/token"] = []byte(tr.Status.Token)
	p.files[serviceAccountDir+"/ca.crt"] = ca
	p.files[serviceAccountDir+"/namespace"] = []byte(c.ns)
	p.env = append(p.env, "KUBERNETES_SERVICE_HOST="+host, "KUBERNETES_SERVICE_PORT="+port)
	return nil
}

// tlsServerSecret writes the revision's TLS server Secret as core's runtime
// does: a certificate signed by core's CA for the package's Service names
// (and 127.0.0.1, where the process listens here).
func (c *cluster) tlsServerSecret(ctx context.Context, rev *revision) (*corev1.Secret, error) {
	name := rev.pkg + pkgv1.TLSServerSecretNameSuffix
	if n := rev.obj.GetTLSServerSecretName(); n != nil {
		name = *n
	}
	root := &corev1.Secret{}
	if err := c.kube.Get(ctx, client.ObjectKey{Namespace: c.ns, Name: rootCASecret}, root); err != nil {
		return nil, fmt.Errorf("core's CA (Secret %s, written by crossplane core init): %w", rootCASecret, err)
	}
	ca, err := localgarden.ParseCA(root.Data["tls.crt"], root.Data["tls.key"])
	if err != nil {
		return nil, fmt.Errorf("core's CA (Secret %s): %w", rootCASecret, err)
	}
	svc := rev.pkg
	pair, err := ca.Server(svc, svc, svc+"."+c.ns, svc+"."+c.ns+".svc", svc+"."+c.ns+".svc.cluster.local", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns}}
	// tls.crt carries the chain: core copies it into the caBundle of a
	// provider's CRD conversion webhooks, so the API server finds the CA.
	chain := append(append([]byte{}, pair.Cert...), ca.CertPEM()...)
	data := map[string][]byte{corev1.TLSCertKey: chain, corev1.TLSPrivateKeyKey: pair.Key, "ca.crt": ca.CertPEM()}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		_, err := controllerutil.CreateOrUpdate(ctx, c.kube, s, func() error { s.Data = data; return nil })
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("TLS server Secret %s: %w", name, err)
	}
	return s, nil
}

// reportHealthy records on the revision what core's runtime reports once
// the package's Deployment is available.
func (c *cluster) reportHealthy(ctx context.Context, rev *revision, endpoint string) error {
	return c.updateRevisionStatus(ctx, rev, func() error {
		if fr, ok := rev.obj.(*pkgv1.FunctionRevision); ok {
			if endpoint == "" {
				return errors.New("a function needs -endpoint: where core calls it")
			}
			fr.Status.Endpoint = "dns:///" + endpoint
		}
		rev.obj.SetConditions(pkgv1.RuntimeHealthy().WithMessage(fmt.Sprintf("runs from image %s under cluster/demo's runtime stand-in", rev.image)))
		return nil
	})
}

func (c *cluster) updateRevisionStatus(ctx context.Context, rev *revision, change func() error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.kube.Get(ctx, client.ObjectKeyFromObject(rev.obj), rev.obj); err != nil {
			return err
		}
		if err := change(); err != nil {
			return err
		}
		return c.kube.Status().Update(ctx, rev.obj)
	})
}
