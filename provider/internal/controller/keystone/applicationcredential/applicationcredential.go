// Package applicationcredential reconciles Keystone application credentials
// and publishes each one's secret, once, as a clouds.yaml in its connection
// secret.
package applicationcredential

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	openstackv1alpha1 "github.com/c5c3/consumer-plane/apis/openstack/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Setup adds the ApplicationCredential controller; newClient builds its
// clients from sessions (openstack.NewIdentity, or a wrapper in tests).
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack, newClient func(*openstack.Session) (openstack.Identity, error)) error {
	// Keystone reads credentials from its database, never stale, and a
	// credential missing (deleted, or rotated out) is replaced at once: a
	// create never duplicates one (Create deletes any of the name whose
	// secret was lost), so crossplane's grace period for eventually
	// consistent APIs would only delay the repair.
	// A credential waits for its user's grant as well (GrantedUser).
	wakes := []pcontroller.Wake{{Object: &v1alpha1.Project{}}, {Object: &v1alpha1.User{}}, {Object: &v1alpha1.RoleAssignment{}, Unblocks: v1alpha1.GrantedUser}}
	return pcontroller.SetupManagedReferencing(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("ApplicationCredential"), &v1alpha1.ApplicationCredentialList{}, wakes,
		managed.WithTypedExternalConnector[*v1alpha1.ApplicationCredential](&connector{pc: pc, newClient: newClient, published: mgr.GetClient()}), managed.WithCreationGracePeriod(0))
}

// AnnotationRetired lists the IDs of credentials a rotation replaced, which
// are deleted once the new credential is published: until then the
// connection secret still holds the old one, and its users log in with it.
const AnnotationRetired = "keystone.provider.c5c3.io/retired-credentials"

type connector struct {
	pc        providerconfig.OpenStack
	newClient func(*openstack.Session) (openstack.Identity, error)
	// published reads the connection secret. A stale read right after a
	// publish would look like a lost one: the provider's client for
	// Secrets (clients/secrets) answers from memory only while the watch
	// of Secrets' versions shows the version it read, and reads a Secret
	// written through it from the API server again, so it never returns
	// what was there before its own publish (this was the API reader: a
	// GET of every credential's Secret on every poll).
	published client.Reader
}

// Connect reads the ProviderConfig (tracking its use) for the cloud's
// Keystone and the admin session; the user's own session is opened when a
// call needs it, with the references resolved.
func (c *connector) Connect(ctx context.Context, mg *v1alpha1.ApplicationCredential) (managed.TypedExternalClient[*v1alpha1.ApplicationCredential], error) {
	pc := &openstackv1alpha1.ProviderConfig{}
	if err := providerconfig.Get(ctx, c.pc.Kube, mg, &openstackv1alpha1.ProviderConfigUsage{}, pc); err != nil {
		return nil, err
	}
	cfg, err := c.pc.Config(ctx, pc)
	if err != nil {
		return nil, err
	}
	s, err := c.pc.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	admin, err := c.newClient(s)
	if err != nil {
		return nil, err
	}
	return &external{connector: c, cloud: cfg, admin: admin}, nil
}

type external struct {
	*connector
	// cloud is the ProviderConfig's: Keystone's URL, region and CA.
	cloud openstack.Config
	admin openstack.Identity
}

// asUser is a session of the credential's user, scoped to its project:
// Keystone lets only the user create (and see) its application credentials.
func (e *external) asUser(ctx context.Context, p v1alpha1.ApplicationCredentialParameters) (openstack.Identity, error) {
	if p.UserID == "" || p.ProjectID == "" {
		return nil, openstack.Terminal(errors.New("spec.forProvider must resolve a userID and a projectID"))
	}
	ref := p.PasswordSecretRef
	sec := &corev1.Secret{}
	if err := e.pc.Kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, sec); err != nil {
		return nil, fmt.Errorf("cannot read spec.forProvider.passwordSecretRef %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	password := string(sec.Data[ref.Key])
	if password == "" {
		return nil, fmt.Errorf("spec.forProvider.passwordSecretRef: Secret %s/%s has no key %q yet", ref.Namespace, ref.Name, ref.Key)
	}
	cfg := e.cloud
	cfg.Auth = gophercloud.AuthOptions{
		IdentityEndpoint: e.cloud.Auth.IdentityEndpoint, UserID: p.UserID, Password: password,
		Scope: &gophercloud.AuthScope{ProjectID: p.ProjectID},
	}
	s, err := e.pc.Open(ctx, cfg)
	if err != nil {
		// Not terminal: right after the user is made, it has no role on
		// the project yet (its RoleAssignment grants one), and Keystone
		// refuses a token scoped there.
		return nil, fmt.Errorf("cannot log in as Keystone user %s to project %s (the user needs a role there, as a RoleAssignment grants, and the password in spec.forProvider.passwordSecretRef): %s",
			p.UserID, p.ProjectID, strings.TrimPrefix(err.Error(), "terminal: "))
	}
	return e.newClient(s)
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.ApplicationCredential) (managed.ExternalObservation, error) {
	p := mg.Spec.ForProvider
	id := meta.GetExternalName(mg)
	if id == "" && !observeOnly(mg) {
		// Never adopted by name: an object of the name without a recorded
		// ID is one whose secret was lost; Create replaces it.
		return managed.ExternalObservation{}, nil
	}
	user, err := e.asUser(ctx, p)
	if err != nil {
		if !meta.WasDeleted(mg) {
			return managed.ExternalObservation{}, err
		}
		// Deleting, perhaps after its User, whose password went with it:
		// the credential went with the user, or the admin observes it
		// where Keystone's policy lets admins (as Delete deletes it), so
		// that the deletion finishes.
		if _, gerr := e.admin.GetUser(ctx, p.UserID); openstack.IsNotFound(gerr) {
			return managed.ExternalObservation{}, nil
		}
		user = e.admin
	}
	var observed *applicationcredentials.ApplicationCredential
	if id != "" {
		observed, err = user.GetApplicationCredential(ctx, p.UserID, id)
		if openstack.IsNotFound(err) {
			return managed.ExternalObservation{}, nil
		}
	} else {
		observed, err = user.FindApplicationCredential(ctx, p.UserID, p.KeystoneName())
	}
	if err != nil {
		return managed.ExternalObservation{}, openstack.Classify(err, "cannot get Keystone application credential %q", p.KeystoneName())
	}
	if observed == nil {
		return managed.ExternalObservation{}, nil
	}
	if observed.Name != p.KeystoneName() && !observeOnly(mg) {
		// spec.forProvider.rotation changed: Create makes the new one and
		// retires this, which goes once the new one is published.
		return managed.ExternalObservation{}, nil
	}
	if observed.ProjectID != p.ProjectID && !observeOnly(mg) && !meta.WasDeleted(mg) {
		// The project moved (its reference resolved again to another ID):
		// a credential stays in the project it was made in. Create
		// deletes this one at once, as a lost one of its name, since it
		// logs in to a project this resource no longer names.
		return managed.ExternalObservation{}, nil
	}
	adopted := id == ""
	meta.SetExternalName(mg, observed.ID)
	mg.Status.AtProvider = observation(observed)
	if !observeOnly(mg) && !meta.WasDeleted(mg) {
		published, err := e.publishedID(ctx, mg)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		if published != observed.ID {
			// Keystone showed the secret only at create, and it never
			// reached the connection secret (a failed publish): nobody can
			// use this credential. Create replaces it; the one the secret
			// holds, if any, stays until the new one is published.
			return managed.ExternalObservation{}, nil
		}
		retired, err := e.deleteRetired(ctx, user, mg)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		adopted = adopted || retired
	}
	mg.SetConditions(xpv2.Available())
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: true, ResourceLateInitialized: adopted}, nil
}

// publishedID is the credential ID the connection secret holds; "" when
// there is none. A credential without a connection secret is taken as
// published.
func (e *external) publishedID(ctx context.Context, mg *v1alpha1.ApplicationCredential) (string, error) {
	ref := mg.GetWriteConnectionSecretToReference()
	if ref == nil {
		return meta.GetExternalName(mg), nil
	}
	s := &corev1.Secret{}
	err := e.published.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s)
	if kerrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the connection secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return string(s.Data[v1alpha1.ConnectionSecretKeyAppCredID]), nil
}

// deleteRetired deletes the credentials a rotation replaced, now that the
// new one is published, and says whether it changed the annotation.
func (e *external) deleteRetired(ctx context.Context, user openstack.Identity, mg *v1alpha1.ApplicationCredential) (bool, error) {
	ids := retired(mg)
	if len(ids) == 0 {
		return false, nil
	}
	for _, id := range ids {
		if err := e.remove(ctx, user, mg.Spec.ForProvider.UserID, id); err != nil {
			return false, err
		}
	}
	meta.RemoveAnnotations(mg, AnnotationRetired)
	return true, nil
}

func retired(mg *v1alpha1.ApplicationCredential) []string {
	v := mg.GetAnnotations()[AnnotationRetired]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.ApplicationCredential) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	user, err := e.asUser(ctx, p)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	old := meta.GetExternalName(mg)
	// A credential of this name was made by a create whose answer was
	// lost, or its secret never reached the connection secret (Observe
	// found it unpublished): its secret, shown only at create, is gone and
	// nobody logs in with it.
	lost, err := user.FindApplicationCredential(ctx, p.UserID, p.KeystoneName())
	if err != nil {
		return managed.ExternalCreation{}, openstack.Classify(err, "cannot look up Keystone application credential %q", p.KeystoneName())
	}
	if lost != nil {
		if err := e.remove(ctx, user, p.UserID, lost.ID); err != nil {
			return managed.ExternalCreation{}, err
		}
	}
	if old != "" && (lost == nil || lost.ID != old) {
		// A rotation (or a credential deleted by hand): the recorded
		// credential, if it still exists, is what the connection secret
		// holds. It goes once the new one is published (Observe).
		retire(mg, old)
	}
	opts := applicationcredentials.CreateOpts{Name: p.KeystoneName(), Description: p.Description, Unrestricted: false}
	for _, r := range p.Roles {
		opts.Roles = append(opts.Roles, applicationcredentials.Role{Name: r})
	}
	if p.ExpiresAt != nil {
		t := p.ExpiresAt.UTC()
		opts.ExpiresAt = &t
	}
	created, err := user.CreateApplicationCredential(ctx, p.UserID, opts)
	if err != nil {
		return managed.ExternalCreation{}, openstack.Classify(err, "cannot create Keystone application credential %q", p.KeystoneName())
	}
	meta.SetExternalName(mg, created.ID)
	mg.Status.AtProvider = observation(created)
	details, err := e.connectionDetails(p, created)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	return managed.ExternalCreation{ConnectionDetails: details}, nil
}

// retire records id among the credentials to delete once a new one is
// published.
func retire(mg *v1alpha1.ApplicationCredential, id string) {
	ids := retired(mg)
	if slices.Contains(ids, id) {
		return
	}
	meta.AddAnnotations(mg, map[string]string{AnnotationRetired: strings.Join(append(ids, id), ",")})
}

// Update has nothing to do: Keystone cannot change an application
// credential. A new spec.forProvider.rotation replaces it (Observe reports
// it missing, Create makes the new one).
func (e *external) Update(context.Context, *v1alpha1.ApplicationCredential) (managed.ExternalUpdate, error) {
	return managed.ExternalUpdate{}, nil
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.ApplicationCredential) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	p := mg.Spec.ForProvider
	id := meta.GetExternalName(mg)
	if id == "" || p.UserID == "" {
		return managed.ExternalDelete{}, nil
	}
	// Keystone deletes a user's credentials with the user.
	if _, err := e.admin.GetUser(ctx, p.UserID); openstack.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	var c openstack.Identity = e.admin
	if user, err := e.asUser(ctx, p); err == nil {
		c = user
	}
	// Without the user's password (its User is going too), the admin
	// deletes them where Keystone's policy lets admins. Rotated-out
	// credentials not deleted yet go too.
	for _, id := range append(retired(mg), id) {
		if err := e.remove(ctx, c, p.UserID, id); err != nil {
			return managed.ExternalDelete{}, err
		}
	}
	return managed.ExternalDelete{}, nil
}

func (e *external) remove(ctx context.Context, c openstack.Identity, userID, id string) error {
	err := c.DeleteApplicationCredential(ctx, userID, id)
	if err == nil || openstack.IsNotFound(err) {
		return nil
	}
	return openstack.Classify(err, "cannot delete Keystone application credential %s", id)
}

func (e *external) Disconnect(context.Context) error { return nil }

func observeOnly(mg *v1alpha1.ApplicationCredential) bool {
	return pcontroller.MayAdopt(mg) && !meta.ExternalCreateIncomplete(mg)
}

func observation(a *applicationcredentials.ApplicationCredential) v1alpha1.ApplicationCredentialObservation {
	o := v1alpha1.ApplicationCredentialObservation{ID: a.ID, Name: a.Name, ProjectID: a.ProjectID}
	for _, r := range a.Roles {
		o.Roles = append(o.Roles, r.Name)
	}
	if !a.ExpiresAt.IsZero() {
		o.ExpiresAt = &metav1.Time{Time: a.ExpiresAt.Truncate(time.Second)}
	}
	return o
}

// connectionDetails is what a user of the credential needs to log in: a
// clouds.yaml (openstack --os-cloud NAME) and its parts, and the CA of a
// TLS Keystone the ProviderConfig trusts.
func (e *external) connectionDetails(p v1alpha1.ApplicationCredentialParameters, a *applicationcredentials.ApplicationCredential) (managed.ConnectionDetails, error) {
	authURL, region, name := p.Cloud.AuthURL, p.Cloud.Region, p.Cloud.Name
	if authURL == "" {
		authURL = e.cloud.Auth.IdentityEndpoint
	}
	if region == "" {
		region = e.cloud.Region
	}
	if name == "" {
		name = "openstack"
	}
	cloud := map[string]any{
		"auth_type": "v3applicationcredential",
		"auth": map[string]any{
			"auth_url": authURL, "application_credential_id": a.ID, "application_credential_secret": a.Secret,
		},
		"identity_api_version": 3,
		"interface":            "public",
	}
	if region != "" {
		cloud["region_name"] = region
	}
	details := managed.ConnectionDetails{
		v1alpha1.ConnectionSecretKeyAppCredID:  []byte(a.ID),
		v1alpha1.ConnectionSecretKeyAppCredKey: []byte(a.Secret),
		v1alpha1.ConnectionSecretKeyAuthURL:    []byte(authURL),
		v1alpha1.ConnectionSecretKeyRegion:     []byte(region),
	}
	if len(e.cloud.CABundle) > 0 {
		// clouds.yaml names a file: save key cacert beside it.
		cloud["cacert"] = v1alpha1.ConnectionSecretKeyCACert
		details[v1alpha1.ConnectionSecretKeyCACert] = e.cloud.CABundle
	}
	b, err := yaml.Marshal(map[string]any{"clouds": map[string]any{name: cloud}})
	if err != nil {
		return nil, err
	}
	details[v1alpha1.ConnectionSecretKeyCloudsYAML] = b
	return details, nil
}
