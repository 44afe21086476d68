// Package user reconciles Keystone users.
package user

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

const (
	errNoSecretRef  = "spec.writeConnectionSecretToRef must be set when spec.forProvider.passwordSecretRef is unset: the generated password is published only there"
	errGetPassword  = "cannot read spec.forProvider.passwordSecretRef"
	errGetConnected = "cannot read the connection secret"
)

// Setup adds the User controller; newClient builds its client from a session
// (openstack.NewIdentity, or a wrapper in tests).
func Setup(mgr ctrl.Manager, o controller.Options, pc providerconfig.OpenStack, newClient func(*openstack.Session) (openstack.Identity, error)) error {
	created := &pcontroller.Created[users.User]{}
	c := providerconfig.Connector[*v1alpha1.User, openstack.Identity]{
		Client: providerconfig.OpenStackClient(pc, newClient),
		External: func(c openstack.Identity) managed.TypedExternalClient[*v1alpha1.User] {
			return &external{keystone: c, kube: mgr.GetClient(), created: created}
		},
	}
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind("User"), &v1alpha1.UserList{},
		managed.WithTypedExternalConnector[*v1alpha1.User](c))
}

type external struct {
	created  *pcontroller.Created[users.User]
	keystone openstack.Identity
	kube     client.Client
}

func (e *external) finder(p v1alpha1.UserParameters) pcontroller.Finder[users.User] {
	return pcontroller.Finder[users.User]{
		Created: e.created,
		Get:     e.keystone.GetUser,
		FindByName: func(ctx context.Context) (*users.User, error) {
			return e.keystone.FindUser(ctx, domainOf(p), p.Name)
		},
		ID: func(u *users.User) string { return u.ID },
	}
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.User) (managed.ExternalObservation, error) {
	p := &mg.Spec.ForProvider
	if p.PasswordSecretRef == nil && mg.Spec.WriteConnectionSecretToReference == nil {
		return managed.ExternalObservation{}, openstack.Terminal(errors.New(errNoSecretRef))
	}
	observed, adopted, err := e.finder(*p).Lookup(ctx, mg)
	if err != nil {
		return managed.ExternalObservation{}, openstack.Classify(err, "cannot get Keystone user %q", p.Name)
	}
	if observed == nil {
		return managed.ExternalObservation{}, nil
	}
	if observed.DomainID != domainOf(*p) {
		return managed.ExternalObservation{}, openstack.Terminal(fmt.Errorf("keystone user %s is in domain %q, not spec.forProvider.domainID %q", observed.ID, observed.DomainID, domainOf(*p)))
	}
	mg.Status.AtProvider = v1alpha1.UserObservation{ID: observed.ID}
	if !observed.PasswordExpiresAt.IsZero() {
		mg.Status.AtProvider.PasswordExpiresAt = &metav1.Time{Time: observed.PasswordExpiresAt}
	}
	mg.SetConditions(xpv2.Available())
	// A generated password lives only in the connection secret: when the
	// secret lost it (the provider stopped between creating the user and
	// publishing it, or someone deleted the secret), Update sets a new one.
	published := true
	if p.PasswordSecretRef == nil {
		if published, err = e.passwordPublished(ctx, mg); err != nil {
			return managed.ExternalObservation{}, err
		}
	}
	lateInit := lateInitialize(p, observed)
	return managed.ExternalObservation{
		ResourceExists:          true,
		ResourceUpToDate:        published && !needsUpdate(*p, observed),
		ResourceLateInitialized: lateInit || adopted,
		ConnectionDetails:       identityDetails(observed),
	}, nil
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.User) (managed.ExternalCreation, error) {
	p := mg.Spec.ForProvider
	password, err := e.password(ctx, p)
	if err != nil {
		return managed.ExternalCreation{}, err
	}
	created, err := e.finder(p).Create(ctx, mg, func(ctx context.Context) (*users.User, error) {
		return e.keystone.CreateUser(ctx, users.CreateOpts{
			Name: p.Name, DomainID: domainOf(p), Description: p.Description, Enabled: p.Enabled, Password: password,
		})
	})
	if openstack.IsConflict(err) {
		return managed.ExternalCreation{}, e.nameTaken(ctx, p)
	}
	if err != nil {
		return managed.ExternalCreation{}, openstack.Classify(err, "cannot create Keystone user %q", p.Name)
	}
	meta.SetExternalName(mg, created.ID)
	details := identityDetails(created)
	if p.PasswordSecretRef == nil {
		details[v1alpha1.ConnectionSecretKeyPassword] = []byte(password)
	}
	return managed.ExternalCreation{ConnectionDetails: details}, nil
}

// nameTaken explains a 409: the name belongs to a user this resource did not
// create, which it will not silently take over.
func (e *external) nameTaken(ctx context.Context, p v1alpha1.UserParameters) error {
	id := "unknown"
	if other, err := e.keystone.FindUser(ctx, domainOf(p), p.Name); err == nil && other != nil {
		id = other.ID
	}
	return pcontroller.NameTaken(fmt.Sprintf("a Keystone user named %q in domain %q (ID %s)", p.Name, domainOf(p), id))
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.User) (managed.ExternalUpdate, error) {
	p := mg.Spec.ForProvider
	opts := users.UpdateOpts{Name: p.Name, Description: &p.Description, Enabled: p.Enabled}
	var details managed.ConnectionDetails
	// A password from a Secret is set on every update, so a changed Secret
	// takes effect with the next change; a generated one only when the
	// connection secret lost it.
	published := true
	if p.PasswordSecretRef == nil {
		var err error
		if published, err = e.passwordPublished(ctx, mg); err != nil {
			return managed.ExternalUpdate{}, err
		}
	}
	if p.PasswordSecretRef != nil || !published {
		password, err := e.password(ctx, p)
		if err != nil {
			return managed.ExternalUpdate{}, err
		}
		opts.Password = password
		if p.PasswordSecretRef == nil {
			details = managed.ConnectionDetails{v1alpha1.ConnectionSecretKeyPassword: []byte(password)}
		}
	}
	_, err := e.keystone.UpdateUser(ctx, meta.GetExternalName(mg), opts)
	if err != nil {
		return managed.ExternalUpdate{}, openstack.Classify(err, "cannot update Keystone user %q", p.Name)
	}
	return managed.ExternalUpdate{ConnectionDetails: details}, nil
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.User) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	err := e.keystone.DeleteUser(ctx, meta.GetExternalName(mg))
	if openstack.IsNotFound(err) {
		return managed.ExternalDelete{}, nil
	}
	return managed.ExternalDelete{}, openstack.Classify(err, "cannot delete Keystone user %q", mg.Spec.ForProvider.Name)
}

func (e *external) Disconnect(context.Context) error { return nil }

// password is the user's password: the referenced Secret's, or a new one.
func (e *external) password(ctx context.Context, p v1alpha1.UserParameters) (string, error) {
	ref := p.PasswordSecretRef
	if ref == nil {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		return base64.RawURLEncoding.EncodeToString(b), nil
	}
	s := &corev1.Secret{}
	if err := e.kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s); err != nil {
		return "", fmt.Errorf("%s %s/%s: %w", errGetPassword, ref.Namespace, ref.Name, err)
	}
	v, ok := s.Data[ref.Key]
	if !ok || len(v) == 0 {
		return "", openstack.Terminal(fmt.Errorf("spec.forProvider.passwordSecretRef: Secret %s/%s has no key %q", ref.Namespace, ref.Name, ref.Key))
	}
	return string(v), nil
}

// passwordPublished reports whether the connection secret holds a password.
func (e *external) passwordPublished(ctx context.Context, mg *v1alpha1.User) (bool, error) {
	ref := mg.Spec.WriteConnectionSecretToReference
	s := &corev1.Secret{}
	err := e.kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s)
	if kerrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s %s/%s: %w", errGetConnected, ref.Namespace, ref.Name, err)
	}
	return len(s.Data[v1alpha1.ConnectionSecretKeyPassword]) > 0, nil
}

func identityDetails(u *users.User) managed.ConnectionDetails {
	return managed.ConnectionDetails{
		v1alpha1.ConnectionSecretKeyUserID:   []byte(u.ID),
		v1alpha1.ConnectionSecretKeyUserName: []byte(u.Name),
		v1alpha1.ConnectionSecretKeyDomainID: []byte(u.DomainID),
	}
}

func domainOf(p v1alpha1.UserParameters) string {
	if p.DomainID == "" {
		return "default"
	}
	return p.DomainID
}

// needsUpdate compares what the spec manages with Keystone's user.
func needsUpdate(p v1alpha1.UserParameters, o *users.User) bool {
	enabled := p.Enabled == nil || *p.Enabled
	return p.Name != o.Name || p.Description != o.Description || enabled != o.Enabled
}

// lateInitialize fills unset optional fields from Keystone.
func lateInitialize(p *v1alpha1.UserParameters, o *users.User) bool {
	if p.Enabled != nil {
		return false
	}
	enabled := o.Enabled
	p.Enabled = &enabled
	return true
}
