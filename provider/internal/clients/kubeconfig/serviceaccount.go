package kubeconfig

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// A ServiceAccountKubeconfig logs in as a ServiceAccount.
type ServiceAccountKubeconfig struct {
	Data      []byte
	ExpiresAt time.Time
}

// ForServiceAccount returns a kubeconfig of the cluster the admin
// kubeconfig reaches that logs in as a ServiceAccount there: the same
// server and CA, and a token from the ServiceAccount's TokenRequest API
// that lives for the given time (the cluster may shorten it). Errors of the
// request are Kubernetes API errors (k8s.io/apimachinery/pkg/api/errors
// recognises them).
func ForServiceAccount(ctx context.Context, admin []byte, namespace, name string, lifetime time.Duration) (ServiceAccountKubeconfig, error) {
	const what = "the admin kubeconfig"
	rc, err := RESTConfig(admin, what)
	if err != nil {
		return ServiceAccountKubeconfig{}, err
	}
	cfg, err := clientcmd.Load(admin)
	if err != nil {
		return ServiceAccountKubeconfig{}, fmt.Errorf("%s is not valid: %w", what, err)
	}
	current, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.Clusters[current.Cluster] == nil {
		return ServiceAccountKubeconfig{}, fmt.Errorf("%s has no cluster in its current context %q", what, cfg.CurrentContext)
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return ServiceAccountKubeconfig{}, err
	}
	seconds := int64(lifetime / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return ServiceAccountKubeconfig{}, err
	}

	// Only what reaches the cluster is carried over: the admin's
	// credentials, extensions and other contexts stay behind.
	cluster := cfg.Clusters[current.Cluster]
	user := namespace + "/" + name
	out := clientcmdapi.NewConfig()
	out.Clusters[current.Cluster] = &clientcmdapi.Cluster{
		Server:                   cluster.Server,
		TLSServerName:            cluster.TLSServerName,
		CertificateAuthorityData: cluster.CertificateAuthorityData,
		ProxyURL:                 cluster.ProxyURL,
	}
	out.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	out.Contexts[user] = &clientcmdapi.Context{Cluster: current.Cluster, AuthInfo: user, Namespace: namespace}
	out.CurrentContext = user
	data, err := clientcmd.Write(*out)
	if err != nil {
		return ServiceAccountKubeconfig{}, err
	}
	return ServiceAccountKubeconfig{Data: data, ExpiresAt: tr.Status.ExpirationTimestamp.Time}, nil
}
