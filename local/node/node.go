// Package node makes the local management cluster's kube-apiserver
// (controller-runtime's envtest) one that a real node on this machine
// joins: a kubelet registers with it, pods get ServiceAccount tokens and
// reach it through the kubernetes Service, as in a cluster.
//
// envtest starts kube-apiserver for tests: bound to 127.0.0.1 (pods on a
// bridge network cannot reach it), advertised on loopback (which the
// kubernetes Service may not point at), ServiceAccount admission off (pods
// would get no token), RBAC only (a kubelet needs the Node authorizer), and
// a serving certificate for localhost alone (a pod's in-cluster client dials
// the Service's IP). Prepare changes exactly these before the start.
package node

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/c5c3/consumer-plane/local/garden"
)

const (
	// ServiceCIDR is the range of ClusterIPs; kube-proxy routes them.
	ServiceCIDR = "10.96.0.0/16"
	// KubernetesServiceIP is the ClusterIP of the kubernetes Service, the
	// first of ServiceCIDR, where a pod's in-cluster client dials.
	KubernetesServiceIP = "10.96.0.1"
)

// Files are what the node's other components need of the API server's PKI.
type Files struct {
	// CA signed the API server's serving certificate, which
	// kube-controller-manager publishes to every namespace
	// (kube-root-ca.crt) for pods to trust, and its client certificate
	// towards kubelets, which kubelet trusts.
	CA string
	// ServiceAccountKey signs ServiceAccount tokens (kube-controller-manager's
	// --service-account-private-key-file).
	ServiceAccountKey string
}

// Prepare configures api, before it starts, to serve a node at nodeIP: it
// writes a serving certificate for every name a client on the machine or in
// a pod uses, and the ServiceAccount signing key, into dir (envtest uses
// them instead of generating its own), and sets the flags.
func Prepare(api *envtest.APIServer, dir, nodeIP string) (Files, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Files{}, err
	}
	ca, err := garden.NewCA("local management cluster CA")
	if err != nil {
		return Files{}, err
	}
	serving, err := ca.Server("kube-apiserver", "localhost", "127.0.0.1", nodeIP, KubernetesServiceIP,
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	if err != nil {
		return Files{}, err
	}
	// The API server's identity towards kubelets (logs, exec): kubelet
	// trusts the CA (its clientCAFile) and asks the API server whether
	// the user may.
	kubeletClient, err := ca.Client("kube-apiserver-kubelet-client", "system:masters")
	if err != nil {
		return Files{}, err
	}
	sa, err := garden.NewCA("service-account-signer")
	if err != nil {
		return Files{}, err
	}
	files := Files{CA: filepath.Join(dir, "ca.crt"), ServiceAccountKey: filepath.Join(dir, "sa-signer.key")}
	// envtest's file names: with apiserver.crt present it generates none
	// of these and passes the directory as --cert-dir.
	for name, data := range map[string][]byte{
		"ca.crt":             ca.CertPEM(),
		"apiserver.crt":      serving.Cert,
		"apiserver.key":      serving.Key,
		"kubelet-client.crt": kubeletClient.Cert,
		"kubelet-client.key": kubeletClient.Key,
		"sa-signer.crt":      sa.CertPEM(),
		"sa-signer.key":      garden.KeyPEM(sa.Key),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return Files{}, fmt.Errorf("cannot write %s: %w", name, err)
		}
	}
	api.CertDir = dir
	api.SecureServing.CA = ca.CertPEM()

	args := api.Configure()
	// Pods on the bridge reach it at the node's address; clients on the
	// machine keep 127.0.0.1 (the kubeconfigs name it).
	args.Set("bind-address", "0.0.0.0")
	args.Set("advertise-address", nodeIP)
	args.Set("service-cluster-ip-range", ServiceCIDR)
	// Every admission plugin a cluster has on by default, ServiceAccount
	// included, and NodeRestriction: a kubelet changes only its own node
	// and its pods.
	args.Disable("disable-admission-plugins")
	args.Set("enable-admission-plugins", "NodeRestriction")
	args.Set("authorization-mode", "Node,RBAC")
	args.Set("kubelet-client-certificate", filepath.Join(dir, "kubelet-client.crt"))
	args.Set("kubelet-client-key", filepath.Join(dir, "kubelet-client.key"))
	// No cluster DNS resolves the node's name.
	args.Set("kubelet-preferred-address-types", "InternalIP")
	return files, nil
}

// Component is a node or control-plane component and the identity it
// logs in as: the user names and groups Kubernetes' default RBAC binds.
type Component struct {
	Name   string
	User   string
	Groups []string
}

// Components of a one-node cluster, each with the identity a cluster gives
// it (the kubelet's Node authorizer identity for node).
func Components(node string) []Component {
	return []Component{
		{Name: "kubelet", User: "system:node:" + node, Groups: []string{"system:nodes"}},
		{Name: "kube-proxy", User: "system:kube-proxy"},
		{Name: "kube-scheduler", User: "system:kube-scheduler"},
		{Name: "kube-controller-manager", User: "system:kube-controller-manager"},
	}
}

// WriteKubeconfigs writes, for each component, dir/<name>.kubeconfig that
// logs into the started env as the component's identity.
func WriteKubeconfigs(env *envtest.Environment, dir string, components []Component) error {
	for _, c := range components {
		u, err := env.AddUser(envtest.User{Name: c.User, Groups: c.Groups}, nil)
		if err != nil {
			return fmt.Errorf("cannot add the user of %s: %w", c.Name, err)
		}
		kc, err := u.KubeConfig()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".kubeconfig"), kc, 0o600); err != nil {
			return err
		}
	}
	return nil
}
