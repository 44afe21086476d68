// Package kubeconfig turns a kubeconfig from a Secret into a REST config,
// refusing what would make the provider act outside the Secret: whoever may
// write a ProviderConfig's Secret must not be able to make the provider run
// a command (exec, auth-provider plugins) or read a file of its own
// filesystem (its ServiceAccount token, another credential) and send it to
// a server of their choosing.
package kubeconfig

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// RESTConfig parses a kubeconfig whose credentials are inline (token,
// client-certificate-data and client-key-data, or username and password)
// and whose CAs are inline, and returns the REST config of its current
// context. what names the kubeconfig in errors ("the garden kubeconfig").
func RESTConfig(data []byte, what string) (*rest.Config, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid: %w", what, err)
	}
	if err := inlineOnly(cfg); err != nil {
		return nil, fmt.Errorf("%s is refused: %w", what, err)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("%s is not valid: %w", what, err)
	}
	return rc, nil
}

func inlineOnly(cfg *clientcmdapi.Config) error {
	var refused []string
	for name, u := range cfg.AuthInfos {
		for field, set := range map[string]bool{
			"exec":               u.Exec != nil,
			"auth-provider":      u.AuthProvider != nil,
			"tokenFile":          u.TokenFile != "",
			"client-certificate": u.ClientCertificate != "",
			"client-key":         u.ClientKey != "",
		} {
			if set {
				refused = append(refused, fmt.Sprintf("users[%s].%s", name, field))
			}
		}
	}
	for name, c := range cfg.Clusters {
		if c.CertificateAuthority != "" {
			refused = append(refused, fmt.Sprintf("clusters[%s].certificate-authority", name))
		}
	}
	if len(refused) == 0 {
		return nil
	}
	slices.Sort(refused)
	return fmt.Errorf("it sets %s, which would run a command or read a file of the provider's; use inline credentials (token, client-certificate-data and client-key-data) and certificate-authority-data",
		strings.Join(refused, ", "))
}
