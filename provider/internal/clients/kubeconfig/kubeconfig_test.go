package kubeconfig

import (
	"strings"
	"testing"
)

const inline = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: ""}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`

func TestRESTConfig(t *testing.T) {
	cases := map[string]struct {
		user, cluster string
		refused       []string
	}{
		"inline token":            {user: `{token: abc}`},
		"username and password":   {user: `{username: a, password: b}`},
		"exec plugin":             {user: `{exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, "curl evil"]}}`, refused: []string{"users[u].exec"}},
		"auth provider":           {user: `{auth-provider: {name: oidc, config: {}}}`, refused: []string{"users[u].auth-provider"}},
		"token file":              {user: `{tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}`, refused: []string{"users[u].tokenFile"}},
		"client certificate file": {user: `{client-certificate: /etc/x.crt, client-key: /etc/x.key}`, refused: []string{"users[u].client-certificate", "users[u].client-key"}},
		"ca file":                 {user: `{token: abc}`, cluster: `{server: "https://127.0.0.1:6443", certificate-authority: /etc/ca.crt}`, refused: []string{"clusters[c].certificate-authority"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			y := strings.Replace(inline, "{token: abc}", tc.user, 1)
			if tc.cluster != "" {
				y = strings.Replace(y, `{server: "https://127.0.0.1:6443", certificate-authority-data: ""}`, tc.cluster, 1)
			}
			cfg, err := RESTConfig([]byte(y), "the test kubeconfig")
			if len(tc.refused) == 0 {
				if err != nil || cfg.Host != "https://127.0.0.1:6443" {
					t.Fatalf("RESTConfig = %v, %v; want the config", cfg, err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted, want refused")
			}
			for _, f := range tc.refused {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q does not name %s", err, f)
				}
			}
			if !strings.HasPrefix(err.Error(), "the test kubeconfig is refused") {
				t.Errorf("error %q does not name the kubeconfig", err)
			}
		})
	}
}
