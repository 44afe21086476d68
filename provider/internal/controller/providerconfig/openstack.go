// Package providerconfig holds the ProviderConfig reconcilers (usage
// counting, deletion protection) and what managed-resource connectors share:
// reading a ProviderConfig and its credentials and turning them into a
// client session.
package providerconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/cache"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
)

const (
	errTrackUsage = "cannot track ProviderConfig usage"
	errGetPC      = "cannot get ProviderConfig %q"
	errGetCreds   = "cannot read the credentials of ProviderConfig %q"
	errGetCA      = "cannot read spec.caBundleSecretRef of ProviderConfig %q"
)

// OpenStack connects managed resources to the cloud their ProviderConfig
// names, through a session cache shared by every controller.
type OpenStack struct {
	Kube     client.Client
	Sessions *openstack.Cache
}

// Session tracks mg's use of its ProviderConfig, reads the ProviderConfig
// and its Secrets and returns the (cached) session of that credential.
func (o OpenStack) Session(ctx context.Context, mg resource.LegacyManaged) (*openstack.Session, error) {
	pc := &openstackv1alpha1.ProviderConfig{}
	if err := Get(ctx, o.Kube, mg, &openstackv1alpha1.ProviderConfigUsage{}, pc); err != nil {
		return nil, err
	}
	cfg, err := o.Config(ctx, pc)
	if err != nil {
		return nil, err
	}
	return o.Open(ctx, cfg)
}

// Open returns the (cached) session of cfg's credential. While another
// reconcile is authenticating as that credential for longer than the cache
// lets a caller wait, it fails, and the managed resource being reconciled
// with ctx goes on as soon as that authentication is through, not at its
// backoff (pcontroller.WakeWhen).
func (o OpenStack) Open(ctx context.Context, cfg openstack.Config) (*openstack.Session, error) {
	s, err := o.Sessions.Session(ctx, cfg)
	if busy := (*cache.BusyError)(nil); errors.As(err, &busy) {
		pcontroller.WakeWhen(ctx, busy.Done)
	}
	return s, err
}

// Config resolves a ProviderConfig into what a session needs.
func (o OpenStack) Config(ctx context.Context, pc *openstackv1alpha1.ProviderConfig) (openstack.Config, error) {
	s := pc.Spec
	data, err := resource.CommonCredentialExtractor(ctx, s.Credentials.Source, o.Kube, s.Credentials.CommonCredentialSelectors)
	if err != nil {
		return openstack.Config{}, errors.Wrapf(err, errGetCreds, pc.Name)
	}
	cfg, err := ParseCredentials(s.Credentials.Format, s.Credentials.Cloud, data)
	if err != nil {
		return openstack.Config{}, openstack.Terminal(fmt.Errorf("ProviderConfig %q: %w", pc.Name, err))
	}
	if s.AuthURL != "" {
		cfg.Auth.IdentityEndpoint = s.AuthURL
	}
	if s.Region != "" {
		cfg.Region = s.Region
	}
	if cfg.Auth.IdentityEndpoint == "" {
		return openstack.Config{}, openstack.Terminal(fmt.Errorf("ProviderConfig %q: no Keystone URL: set spec.authURL or auth.auth_url in the clouds.yaml", pc.Name))
	}
	if ca := s.CABundleSecretRef; ca != nil {
		b, err := resource.CommonCredentialExtractor(ctx, xpv2.CredentialsSourceSecret, o.Kube, xpv2.CommonCredentialSelectors{SecretRef: ca})
		if err != nil {
			return openstack.Config{}, errors.Wrapf(err, errGetCA, pc.Name)
		}
		cfg.CABundle = b
	}
	return cfg, nil
}

// withoutCACertFile drops the cloud's cacert from a clouds.yaml. In a
// Secret it names a file beside the clouds.yaml (K-ORC's and the
// c5c3-operator's credentials say "cacert: cacert", the Secret's key),
// which is no file of the provider's: gophercloud would fail to open it.
// The CA reaches the provider through the ProviderConfig's
// caBundleSecretRef instead.
func withoutCACertFile(data []byte, cloud string) ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a clouds.yaml: %w", err)
	}
	clouds, _ := doc["clouds"].(map[string]any)
	entry, _ := clouds[cloud].(map[string]any)
	if _, ok := entry["cacert"]; !ok {
		return data, nil
	}
	delete(entry, "cacert")
	return yaml.Marshal(doc)
}

// passwordCredential is the JSON of format Password.
type passwordCredential struct {
	Username          string `json:"username"`
	UserID            string `json:"userID"`
	Password          string `json:"password"`
	UserDomainName    string `json:"userDomainName"`
	UserDomainID      string `json:"userDomainID"`
	ProjectName       string `json:"projectName"`
	ProjectID         string `json:"projectID"`
	ProjectDomainName string `json:"projectDomainName"`
	ProjectDomainID   string `json:"projectDomainID"`
}

// applicationCredential is the JSON of format ApplicationCredential.
type applicationCredential struct {
	ID       string `json:"applicationCredentialID"`
	Name     string `json:"applicationCredentialName"`
	Secret   string `json:"applicationCredentialSecret"`
	Username string `json:"username"`
	UserID   string `json:"userID"`
	Domain   string `json:"userDomainName"`
}

// ParseCredentials reads a credentials Secret key in the given format; for
// CloudsYAML, cloud picks the entry. Errors name what is missing.
func ParseCredentials(format openstackv1alpha1.CredentialsFormat, cloud string, data []byte) (openstack.Config, error) {
	switch format {
	case openstackv1alpha1.CredentialsFormatPassword:
		var p passwordCredential
		if err := json.Unmarshal(data, &p); err != nil {
			return openstack.Config{}, fmt.Errorf("credentials (format Password) are not a JSON object: %w", err)
		}
		if (p.Username == "" && p.UserID == "") || p.Password == "" {
			return openstack.Config{}, fmt.Errorf("credentials (format Password) need username or userID, and password")
		}
		a := gophercloud.AuthOptions{Username: p.Username, UserID: p.UserID, Password: p.Password,
			DomainName: p.UserDomainName, DomainID: p.UserDomainID}
		if p.ProjectName != "" || p.ProjectID != "" {
			a.Scope = &gophercloud.AuthScope{ProjectName: p.ProjectName, ProjectID: p.ProjectID,
				DomainName: p.ProjectDomainName, DomainID: p.ProjectDomainID}
		}
		return openstack.Config{Auth: a}, nil

	case openstackv1alpha1.CredentialsFormatApplicationCredential:
		var c applicationCredential
		if err := json.Unmarshal(data, &c); err != nil {
			return openstack.Config{}, fmt.Errorf("credentials (format ApplicationCredential) are not a JSON object: %w", err)
		}
		if (c.ID == "" && c.Name == "") || c.Secret == "" {
			return openstack.Config{}, fmt.Errorf("credentials (format ApplicationCredential) need applicationCredentialID (or applicationCredentialName with username) and applicationCredentialSecret")
		}
		return openstack.Config{Auth: gophercloud.AuthOptions{ApplicationCredentialID: c.ID, ApplicationCredentialName: c.Name,
			ApplicationCredentialSecret: c.Secret, Username: c.Username, UserID: c.UserID, DomainName: c.Domain}}, nil

	case openstackv1alpha1.CredentialsFormatCloudsYAML, "":
		if cloud == "" {
			cloud = "admin"
		}
		data, err := withoutCACertFile(data, cloud)
		if err != nil {
			return openstack.Config{}, fmt.Errorf("credentials (format CloudsYAML, cloud %q): %w", cloud, err)
		}
		a, eo, tlsCfg, err := clouds.Parse(clouds.WithCloudsYAML(bytes.NewReader(data)), clouds.WithCloudName(cloud))
		if err != nil {
			return openstack.Config{}, fmt.Errorf("credentials (format CloudsYAML, cloud %q): %w", cloud, err)
		}
		cfg := openstack.Config{Auth: a, Region: eo.Region}
		if tlsCfg != nil {
			cfg.Insecure = tlsCfg.InsecureSkipVerify
		}
		return cfg, nil
	}
	return openstack.Config{}, fmt.Errorf("unknown spec.credentials.format %q: use Password, ApplicationCredential or CloudsYAML", format)
}
