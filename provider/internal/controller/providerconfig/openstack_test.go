package providerconfig

import (
	"strings"
	"testing"

	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
)

func TestParseCredentials(t *testing.T) {
	clouds := `clouds:
  admin:
    auth: {auth_url: "https://keystone.example/v3", username: admin, password: pw, project_name: admin, user_domain_name: Default, project_domain_name: Default}
    region_name: eu-de-1
`
	cases := map[string]struct {
		format  openstackv1alpha1.CredentialsFormat
		cloud   string
		data    string
		wantErr string
		check   func(t *testing.T, url, user, region string)
	}{
		"clouds.yaml": {format: openstackv1alpha1.CredentialsFormatCloudsYAML, cloud: "admin", data: clouds,
			check: func(t *testing.T, url, user, region string) {
				if url != "https://keystone.example/v3" || user != "admin" || region != "eu-de-1" {
					t.Errorf("got %s %s %s", url, user, region)
				}
			}},
		"clouds.yaml without the cloud": {format: openstackv1alpha1.CredentialsFormatCloudsYAML, cloud: "other", data: clouds, wantErr: `cloud "other"`},
		// As K-ORC's and the c5c3-operator's credentials say it: the CA is the
		// Secret's key cacert, no file of the provider's (it comes through
		// caBundleSecretRef).
		"clouds.yaml naming a CA file beside it": {format: openstackv1alpha1.CredentialsFormatCloudsYAML, cloud: "admin", data: clouds + "    cacert: cacert\n",
			check: func(t *testing.T, url, user, region string) {
				if url != "https://keystone.example/v3" || user != "admin" || region != "eu-de-1" {
					t.Errorf("got %s %s %s", url, user, region)
				}
			}},
		"password":                  {format: openstackv1alpha1.CredentialsFormatPassword, data: `{"username":"u","password":"p","projectName":"x"}`},
		"password without password": {format: openstackv1alpha1.CredentialsFormatPassword, data: `{"username":"u"}`, wantErr: "need username or userID, and password"},
		"password not JSON":         {format: openstackv1alpha1.CredentialsFormatPassword, data: `user: u`, wantErr: "not a JSON object"},
		"application credential":    {format: openstackv1alpha1.CredentialsFormatApplicationCredential, data: `{"applicationCredentialID":"id","applicationCredentialSecret":"s"}`},
		"application credential, no secret": {format: openstackv1alpha1.CredentialsFormatApplicationCredential, data: `{"applicationCredentialID":"id"}`,
			wantErr: "applicationCredentialSecret"},
		"unknown format": {format: "Token", data: `x`, wantErr: `unknown spec.credentials.format "Token"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cfg, err := ParseCredentials(tc.format, tc.cloud, []byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, cfg.Auth.IdentityEndpoint, cfg.Auth.Username, cfg.Region)
			}
		})
	}
}
