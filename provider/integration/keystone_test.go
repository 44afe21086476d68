package integration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/roles"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/trusts"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/users"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	keystonev1alpha1 "github.com/c5c3/consumer-plane/apis/keystone/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/openstack"
)

// login authenticates against the local Keystone with cfg's credential and
// reports Keystone's answer (nil: a token was issued).
func login(ctx context.Context, cfg openstack.Config) error {
	_, err := openstack.NewCache(1, time.Minute).Session(ctx, cfg)
	return err
}

// asUser is a client of the local Keystone as a user, scoped to a project.
func asUser(t *testing.T, userID, password, projectID string) openstack.Identity {
	t.Helper()
	s, err := openstack.NewCache(1, time.Minute).Session(context.Background(), openstack.Config{Region: "RegionOne", CABundle: openstackCA, Auth: gophercloud.AuthOptions{
		IdentityEndpoint: keystoneURL, UserID: userID, Password: password, Scope: &gophercloud.AuthScope{ProjectID: projectID},
	}})
	if err != nil {
		t.Fatalf("log in as user %s: %v", userID, err)
	}
	c, err := openstack.NewIdentity(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (h *harness) secret(t *testing.T, name string) map[string][]byte {
	t.Helper()
	s := &corev1.Secret{}
	if err := h.kube.Get(context.Background(), client.ObjectKey{Namespace: "crossplane-system", Name: name}, s); err != nil {
		t.Fatalf("connection secret %s: %v", name, err)
	}
	return s.Data
}

// cloudsYAMLLogin logs in with the clouds.yaml of a connection secret, as
// `openstack --os-cloud NAME` would: gophercloud's own clouds.yaml reader,
// trusting the CA the clouds.yaml names (the secret's key cacert) and
// nothing else.
func cloudsYAMLLogin(t *testing.T, data map[string][]byte, cloud string) error {
	t.Helper()
	return login(context.Background(), appCredentialConfig(t, data, cloud))
}

// appCredentialConfig is the credential of a connection secret's clouds.yaml.
func appCredentialConfig(t *testing.T, data map[string][]byte, cloud string) openstack.Config {
	t.Helper()
	var parsed struct {
		Clouds map[string]clouds.Cloud `json:"clouds"`
	}
	if err := yaml.Unmarshal(data[keystonev1alpha1.ConnectionSecretKeyCloudsYAML], &parsed); err != nil {
		t.Fatalf("clouds.yaml: %v", err)
	}
	c, ok := parsed.Clouds[cloud]
	if !ok || c.AuthType != clouds.AuthV3ApplicationCredential || c.AuthInfo == nil {
		t.Fatalf("clouds.yaml has no application credential cloud %q:\n%s", cloud, data[keystonev1alpha1.ConnectionSecretKeyCloudsYAML])
	}
	if c.CACertFile != keystonev1alpha1.ConnectionSecretKeyCACert || len(data[keystonev1alpha1.ConnectionSecretKeyCACert]) == 0 {
		t.Fatalf("the clouds.yaml names CA file %q, want the secret's key %q holding the CA of the HTTPS Keystone (keys: %v)",
			c.CACertFile, keystonev1alpha1.ConnectionSecretKeyCACert, slices.Collect(maps.Keys(data)))
	}
	return openstack.Config{Region: c.RegionName, CABundle: data[keystonev1alpha1.ConnectionSecretKeyCACert], Auth: gophercloud.AuthOptions{
		IdentityEndpoint: c.AuthInfo.AuthURL, ApplicationCredentialID: c.AuthInfo.ApplicationCredentialID,
		ApplicationCredentialSecret: c.AuthInfo.ApplicationCredentialSecret,
	}}
}

// TestIntegrationRoleAssignment grants a role by name to a user on a project
// and keeps it granted: create, a grant revoked by hand comes back, import
// with Observe only, delete, delete of a grant already gone, a role Keystone
// does not have.
func TestIntegrationRoleAssignment(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	c := h.clients(t)
	p, err := c.keystone.CreateProject(ctx, projects.CreateOpts{Name: h.name("ra-project"), DomainID: "default"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.keystone.DeleteProject(ctx, p.ID) })
	u, err := c.keystone.CreateUser(ctx, users.CreateOpts{Name: h.name("ra-user"), DomainID: "default", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.keystone.DeleteUser(ctx, u.ID) })
	member, err := c.keystone.FindRole(ctx, "", "member")
	if err != nil || member == nil {
		t.Fatalf("the local Keystone has no role member: %v", err)
	}
	grant := roles.AssignOpts{UserID: u.ID, ProjectID: p.ID}
	granted := func() bool {
		ok, err := c.keystone.HasGrant(ctx, member.ID, grant)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	newRA := func(name, role string) *keystonev1alpha1.RoleAssignment {
		return &keystonev1alpha1.RoleAssignment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.RoleAssignmentSpec{
			ClusterManagedResourceSpec: managedBy(pcLocal),
			ForProvider: keystonev1alpha1.RoleAssignmentParameters{Role: role,
				UserIDReference: keystonev1alpha1.UserIDReference{UserID: u.ID}, ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectID: p.ID}},
		}}
	}

	ra := newRA(h.name("ra-life"), "member")
	h.create(t, ra)
	h.waitReady(t, ra)
	if want := "project/" + p.ID + "/user/" + u.ID + "/" + member.ID; meta.GetExternalName(ra) != want {
		t.Errorf("external name = %q, want %q", meta.GetExternalName(ra), want)
	}
	if !granted() {
		t.Fatal("the role is not granted in Keystone")
	}

	if err := c.keystone.Revoke(ctx, member.ID, grant); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a grant revoked by hand is granted again", func() (bool, string) { return granted(), "not granted" })

	h.delete(t, ra)
	h.waitGone(t, ra)
	if granted() {
		t.Fatal("deleting the RoleAssignment left the grant")
	}

	// Import: a grant made by hand, observed only, stays when its resource goes.
	if err := c.keystone.Grant(ctx, member.ID, grant); err != nil {
		t.Fatal(err)
	}
	imp := newRA(h.name("ra-import"), "member")
	imp.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
	h.create(t, imp)
	h.waitReady(t, imp)
	h.delete(t, imp)
	h.waitGone(t, imp)
	if !granted() {
		t.Fatal("an Observe-only RoleAssignment revoked the grant")
	}

	// Delete of a grant already revoked.
	gone := newRA(h.name("ra-gone"), "member")
	h.create(t, gone)
	h.waitReady(t, gone)
	if err := c.keystone.Revoke(ctx, member.ID, grant); err != nil {
		t.Fatal(err)
	}
	h.delete(t, gone)
	h.waitGone(t, gone)

	bad := newRA(h.name("ra-bad"), "no-such-role")
	h.create(t, bad)
	h.waitSyncError(t, bad, "terminal", "spec.forProvider.role", `no role "no-such-role"`)
	h.delete(t, bad)
	h.waitGone(t, bad)
}

// TestIntegrationTenantCredential is what a cloud composes for its tenant,
// against the real Keystone: a Project, a User with a generated password, the
// member role on the project (by references), and an application credential
// the user makes, published as a clouds.yaml that logs in. Then the
// credential's lifecycle: deleted by hand it is made again, a rotation
// replaces it (the old one stops working), a crash or a lost answer after
// the create leaves exactly one, an Observe-only import, deletion; and a
// generated password the connection secret lost is replaced.
func TestIntegrationTenantCredential(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	base := h.name("tc")
	conn := func(name string) *xpv2.SecretReference {
		return &xpv2.SecretReference{Namespace: "crossplane-system", Name: name}
	}

	project := &keystonev1alpha1.Project{ObjectMeta: metav1.ObjectMeta{Name: base}, Spec: keystonev1alpha1.ProjectSpec{
		ClusterManagedResourceSpec: managedBy(pcLocal), ForProvider: keystonev1alpha1.ProjectParameters{Name: base},
	}}
	user := &keystonev1alpha1.User{ObjectMeta: metav1.ObjectMeta{Name: base}, Spec: keystonev1alpha1.UserSpec{
		ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: ref(pcLocal), WriteConnectionSecretToReference: conn(base + "-user")},
		ForProvider:                keystonev1alpha1.UserParameters{Name: base, Description: "the tenant"},
	}}
	grant := &keystonev1alpha1.RoleAssignment{ObjectMeta: metav1.ObjectMeta{Name: base}, Spec: keystonev1alpha1.RoleAssignmentSpec{
		ClusterManagedResourceSpec: managedBy(pcLocal),
		ForProvider: keystonev1alpha1.RoleAssignmentParameters{Role: "member",
			UserIDReference: keystonev1alpha1.UserIDReference{UserIDRef: ref(base)}, ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectIDRef: ref(base)}},
	}}
	newCred := func(name, keystoneName string) *keystonev1alpha1.ApplicationCredential {
		return &keystonev1alpha1.ApplicationCredential{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.ApplicationCredentialSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: ref(pcLocal), WriteConnectionSecretToReference: conn(name + "-cloud")},
			ForProvider: keystonev1alpha1.ApplicationCredentialParameters{Name: keystoneName, Roles: []string{"member"},
				UserIDReference:    keystonev1alpha1.UserIDReference{UserIDRef: ref(base)},
				ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectIDRef: ref(base)},
				PasswordSecretRef:  xpv2.SecretKeySelector{SecretReference: *conn(base + "-user"), Key: "password"},
				Cloud:              keystonev1alpha1.CloudsYAML{Name: "tenant"}},
		}}
	}
	for _, mg := range []client.Object{project, user, grant} {
		h.create(t, mg)
	}
	t.Cleanup(func() {
		for _, mg := range []client.Object{grant, user, project} {
			_ = h.kube.Delete(ctx, mg)
		}
	})
	h.waitReady(t, project)
	h.waitReady(t, user)
	h.waitReady(t, grant)
	userID, projectID := meta.GetExternalName(user), meta.GetExternalName(project)
	password := string(h.secret(t, base+"-user")["password"])
	if password == "" || string(h.secret(t, base+"-user")["user_id"]) != userID {
		t.Fatalf("the User's connection secret lacks its password or ID: %v", h.secret(t, base+"-user"))
	}
	me := asUser(t, userID, password, projectID)
	count := func(name string) int {
		a, err := me.FindApplicationCredential(ctx, userID, name)
		if err != nil {
			t.Fatal(err)
		}
		return boolCount(a != nil)
	}

	cred := newCred(base+"-cred", base)
	h.create(t, cred)
	h.waitReady(t, cred)
	first := meta.GetExternalName(cred)
	data := h.secret(t, base+"-cred-cloud")
	if err := cloudsYAMLLogin(t, data, "tenant"); err != nil {
		t.Fatalf("the clouds.yaml of the connection secret does not log in: %v", err)
	}
	if string(data["application_credential_id"]) != first || cred.Status.AtProvider.ProjectID != projectID {
		t.Errorf("credential %s, secret's %s, project %s want %s", first, data["application_credential_id"], cred.Status.AtProvider.ProjectID, projectID)
	}
	if err := h.kube.Get(ctx, client.ObjectKeyFromObject(cred), cred); err != nil {
		t.Fatal(err)
	}
	if b, _ := yaml.Marshal(cred); strings.Contains(string(b), string(data["application_credential_secret"])) {
		t.Fatal("the credential's secret is in the managed resource")
	}

	t.Run("the published credential holds the member role and cannot make credentials or trusts", func(t *testing.T) {
		sess, err := openstack.NewCache(1, time.Minute).Session(ctx, appCredentialConfig(t, data, "tenant"))
		if err != nil {
			t.Fatal(err)
		}
		sc, err := sess.Service(openstack.ServiceIdentity)
		if err != nil {
			t.Fatal(err)
		}
		granted, err := tokens.Get(ctx, sc, sc.Token()).ExtractRoles()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, r := range granted {
			names = append(names, r.Name)
		}
		if !slices.Equal(names, []string{"member"}) {
			t.Errorf("the credential's token holds roles %v, want [member] only", names)
		}
		// A restricted application credential may not make another one,
		// nor a trust: the tenant cannot mint credentials that outlive
		// the one the platform rotates and deletes.
		_, err = applicationcredentials.Create(ctx, sc, userID, applicationcredentials.CreateOpts{Name: base + "-minted"}).Extract()
		if !gophercloud.ResponseCodeIs(err, 403) {
			t.Errorf("creating an application credential with the published one: %v, want 403", err)
		}
		_, err = trusts.Create(ctx, sc, trusts.CreateOpts{TrustorUserID: userID, TrusteeUserID: userID, ProjectID: projectID, Roles: []trusts.Role{{Name: "member"}}}).Extract()
		if !gophercloud.ResponseCodeIs(err, 403) {
			t.Errorf("creating a trust with the published credential: %v, want 403", err)
		}
	})

	t.Run("deleted by hand, it is made again and published", func(t *testing.T) {
		if err := me.DeleteApplicationCredential(ctx, userID, first); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a new credential", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(cred), cred)
			id := meta.GetExternalName(cred)
			return id != first && id != "" && string(h.secret(t, base+"-cred-cloud")["application_credential_id"]) == id, "external name " + id
		})
		if err := cloudsYAMLLogin(t, h.secret(t, base+"-cred-cloud"), "tenant"); err != nil {
			t.Fatalf("the new credential does not log in: %v", err)
		}
	})

	t.Run("rotation replaces it; the old one stops working", func(t *testing.T) {
		old := h.secret(t, base+"-cred-cloud")
		oldID := meta.GetExternalName(cred)
		h.update(t, cred, func() { cred.Spec.ForProvider.Rotation = "r2" })
		eventually(t, "the rotated credential", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(cred), cred)
			return cred.Status.AtProvider.Name == base+"-r2" && meta.GetExternalName(cred) != oldID, "name " + cred.Status.AtProvider.Name
		})
		h.waitReady(t, cred)
		if err := cloudsYAMLLogin(t, h.secret(t, base+"-cred-cloud"), "tenant"); err != nil {
			t.Fatalf("the rotated credential does not log in: %v", err)
		}
		eventually(t, "the old credential is refused", func() (bool, string) {
			err := cloudsYAMLLogin(t, old, "tenant")
			return err != nil, "the old credential still logs in"
		})
		if n := count(base); n != 0 {
			t.Fatalf("the rotated-out credential %s is still there", base)
		}
	})

	publishedID := func(name string) string {
		sec := &corev1.Secret{}
		if err := h.kube.Get(ctx, client.ObjectKey{Namespace: "crossplane-system", Name: name}, sec); err != nil {
			return ""
		}
		return string(sec.Data[keystonev1alpha1.ConnectionSecretKeyAppCredID])
	}

	t.Run("a rotation keeps the old credential until the new one is published", func(t *testing.T) {
		name := base + "-cred-cloud"
		old, oldID := h.secret(t, name), meta.GetExternalName(cred)
		// The API server refuses to change the credential the connection
		// secret holds: the rotated credential is made, and its publish
		// fails, as any failed write of the Secret would.
		unblock := refuseNewCredentialIn(t, h, name)
		h.update(t, cred, func() { cred.Spec.ForProvider.Rotation = "r3" })
		eventually(t, "the rotated credential made, and not published", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(cred), cred)
			n, id := count(base+"-r3"), meta.GetExternalName(cred)
			return n == 1 && id != oldID && publishedID(name) == oldID,
				fmt.Sprintf("%d credentials named %s-r3, external name %s, published %s", n, base, id, publishedID(name))
		})
		if err := cloudsYAMLLogin(t, old, "tenant"); err != nil {
			t.Fatalf("the published credential stopped working before its successor was published: %v", err)
		}
		if _, err := me.GetApplicationCredential(ctx, userID, oldID); err != nil {
			t.Fatalf("the published credential %s was deleted before its successor was published: %v", oldID, err)
		}
		unblock()
		eventually(t, "the rotated credential published", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(cred), cred)
			id := meta.GetExternalName(cred)
			return id != oldID && publishedID(name) == id, "external name " + id + ", published " + publishedID(name)
		})
		if err := cloudsYAMLLogin(t, h.secret(t, name), "tenant"); err != nil {
			t.Fatalf("the rotated credential does not log in: %v", err)
		}
		eventually(t, "the old credential deleted once its successor is published", func() (bool, string) {
			_, err := me.GetApplicationCredential(ctx, userID, oldID)
			return openstack.IsNotFound(err), fmt.Sprintf("still there (%v)", err)
		})
		if n := count(base + "-r3"); n != 1 {
			t.Fatalf("credentials named %s-r3: %d, want 1", base, n)
		}
	})

	t.Run("a connection secret that does not hold the credential gets a new one", func(t *testing.T) {
		name := base + "-cred-cloud"
		lostID := meta.GetExternalName(cred)
		// What a publish that failed after the create leaves: a connection
		// secret without the credential Keystone showed only then.
		sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: name}}
		h.update(t, sec, func() { sec.Data = nil })
		eventually(t, "a new credential, published", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(cred), cred)
			id := meta.GetExternalName(cred)
			return id != "" && id != lostID && publishedID(name) == id, "external name " + id + ", published " + publishedID(name)
		})
		if err := cloudsYAMLLogin(t, h.secret(t, name), "tenant"); err != nil {
			t.Fatalf("the published credential does not log in: %v", err)
		}
		if n := count(cred.Spec.ForProvider.KeystoneName()); n != 1 {
			t.Fatalf("credentials named %s: %d, want 1 (the unusable one deleted)", cred.Spec.ForProvider.KeystoneName(), n)
		}
	})

	t.Run("a crash or a lost answer after the create leaves exactly one", func(t *testing.T) {
		for _, name := range []string{crashPrefix + base, lostPrefix + base} {
			mg := newCred(strings.ToLower(name)+"-mr", name)
			h.create(t, mg)
			h.waitReady(t, mg)
			if n := count(name); n != 1 {
				t.Fatalf("credentials named %s: %d, want 1", name, n)
			}
			if err := cloudsYAMLLogin(t, h.secret(t, mg.Name+"-cloud"), "tenant"); err != nil {
				t.Fatalf("%s: the published credential does not log in (its secret was lost): %v", name, err)
			}
			h.delete(t, mg)
			h.waitGone(t, mg)
			if n := count(name); n != 0 {
				t.Fatalf("deleting %s left %d credentials", name, n)
			}
		}
		if _, ok := crashed.Load(crashPrefix + base); !ok {
			t.Error("the reconcile was not interrupted after the create")
		}
		if _, ok := lost.Load(lostPrefix + base); !ok {
			t.Error("the create's answer was not lost")
		}
	})

	t.Run("import with Observe only", func(t *testing.T) {
		name := base + "-byhand"
		a, err := me.CreateApplicationCredential(ctx, userID, applicationcredentials.CreateOpts{Name: name, Roles: []applicationcredentials.Role{{Name: "member"}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = me.DeleteApplicationCredential(ctx, userID, a.ID) })
		mg := newCred(name+"-mr", name)
		mg.SetManagementPolicies(xpv2.ManagementPolicies{xpv2.ManagementActionObserve})
		h.create(t, mg)
		h.waitReady(t, mg)
		if meta.GetExternalName(mg) != a.ID {
			t.Fatalf("external name %q, want the imported credential %s", meta.GetExternalName(mg), a.ID)
		}
		h.delete(t, mg)
		h.waitGone(t, mg)
		if n := count(name); n != 1 {
			t.Fatal("an Observe-only ApplicationCredential deleted the credential")
		}
	})

	t.Run("IDs resolved wrong follow their references: the grant and the credential in another project go", func(t *testing.T) {
		// What the reference race of stop 78 left: a grant and a published
		// credential in another cloud's project, under resolved IDs that
		// name it (crossplane-runtime keeps a resolved ID; the provider
		// now resolves references by name at every reconcile).
		c := h.clients(t)
		other, err := c.keystone.CreateProject(ctx, projects.CreateOpts{Name: base + "-other", DomainID: "default"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.keystone.DeleteProject(ctx, other.ID) })
		member, err := c.keystone.FindRole(ctx, "", "member")
		if err != nil || member == nil {
			t.Fatalf("the local Keystone has no role member: %v", err)
		}
		paused := map[string]string{meta.AnnotationKeyReconciliationPaused: "true"}
		h.update(t, grant, func() { meta.AddAnnotations(grant, paused) })
		h.update(t, cred, func() { meta.AddAnnotations(cred, paused) })

		wrongGrant := roles.AssignOpts{UserID: userID, ProjectID: other.ID}
		if err := c.keystone.Grant(ctx, member.ID, wrongGrant); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.keystone.Revoke(ctx, member.ID, wrongGrant) })
		name := cred.Spec.ForProvider.KeystoneName()
		if err := me.DeleteApplicationCredential(ctx, userID, meta.GetExternalName(cred)); err != nil {
			t.Fatal(err)
		}
		wrong, err := asUser(t, userID, password, other.ID).CreateApplicationCredential(ctx, userID,
			applicationcredentials.CreateOpts{Name: name, Roles: []applicationcredentials.Role{{Name: "member"}}})
		if err != nil {
			t.Fatal(err)
		}
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: base + "-cred-cloud"}}
		h.update(t, secret, func() { secret.Data[keystonev1alpha1.ConnectionSecretKeyAppCredID] = []byte(wrong.ID) })
		h.update(t, grant, func() {
			grant.Spec.ForProvider.ProjectID = other.ID
			meta.SetExternalName(grant, "project/"+other.ID+"/user/"+userID+"/"+member.ID)
			meta.RemoveAnnotations(grant, meta.AnnotationKeyReconciliationPaused)
		})
		h.update(t, cred, func() {
			cred.Spec.ForProvider.ProjectID = other.ID
			meta.SetExternalName(cred, wrong.ID)
			meta.RemoveAnnotations(cred, meta.AnnotationKeyReconciliationPaused)
		})

		eventually(t, "the grant back on its own project, the other project's revoked", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(grant), grant)
			inOther, err := c.keystone.HasGrant(ctx, member.ID, wrongGrant)
			if err != nil {
				return false, err.Error()
			}
			return grant.Spec.ForProvider.ProjectID == projectID && !inOther &&
					meta.GetExternalName(grant) == "project/"+projectID+"/user/"+userID+"/"+member.ID,
				fmt.Sprintf("projectID %s, external name %s, granted in the other project: %t, conditions %v", grant.Spec.ForProvider.ProjectID, meta.GetExternalName(grant), inOther, grant.Status.Conditions)
		})
		eventually(t, "a credential in its own project published, the other project's deleted", func() (bool, string) {
			_ = h.kube.Get(ctx, client.ObjectKeyFromObject(cred), cred)
			id := meta.GetExternalName(cred)
			_, err := me.GetApplicationCredential(ctx, userID, wrong.ID)
			return cred.Spec.ForProvider.ProjectID == projectID && cred.Status.AtProvider.ProjectID == projectID &&
					id != wrong.ID && publishedID(base+"-cred-cloud") == id && openstack.IsNotFound(err),
				fmt.Sprintf("projectID %s, observed project %s, external name %s, published %s, the other's credential: %v",
					cred.Spec.ForProvider.ProjectID, cred.Status.AtProvider.ProjectID, id, publishedID(base+"-cred-cloud"), err)
		})
		h.waitReady(t, cred)
		if err := cloudsYAMLLogin(t, h.secret(t, base+"-cred-cloud"), "tenant"); err != nil {
			t.Fatalf("the credential made again does not log in: %v", err)
		}
		if n := count(name); n != 1 {
			t.Fatalf("credentials named %s: %d, want 1", name, n)
		}
	})

	t.Run("delete, and delete of one already gone", func(t *testing.T) {
		id := meta.GetExternalName(cred)
		h.delete(t, cred)
		h.waitGone(t, cred)
		if n := count(base + "-r2"); n != 0 {
			t.Fatalf("deleting the ApplicationCredential left %s", id)
		}
		gone := newCred(base+"-gone", base+"-gone")
		h.create(t, gone)
		h.waitReady(t, gone)
		if err := me.DeleteApplicationCredential(ctx, userID, meta.GetExternalName(gone)); err != nil {
			t.Fatal(err)
		}
		h.delete(t, gone)
		h.waitGone(t, gone)
	})

	t.Run("deleted after its user and the user's password, the deletion finishes", func(t *testing.T) {
		// As when a cloud goes: its User may be deleted first, and the
		// password Secret (the User's connection secret) with it.
		name := base + "-u2"
		u2 := &keystonev1alpha1.User{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.UserSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{ProviderConfigReference: ref(pcLocal), WriteConnectionSecretToReference: conn(name + "-user")},
			ForProvider:                keystonev1alpha1.UserParameters{Name: name},
		}}
		g2 := &keystonev1alpha1.RoleAssignment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: keystonev1alpha1.RoleAssignmentSpec{
			ClusterManagedResourceSpec: managedBy(pcLocal),
			ForProvider: keystonev1alpha1.RoleAssignmentParameters{Role: "member",
				UserIDReference: keystonev1alpha1.UserIDReference{UserIDRef: ref(name)}, ProjectIDReference: keystonev1alpha1.ProjectIDReference{ProjectIDRef: ref(base)}},
		}}
		c2 := newCred(name+"-cred", name)
		c2.Spec.ForProvider.UserIDReference.UserIDRef = ref(name)
		c2.Spec.ForProvider.PasswordSecretRef.Name = name + "-user"
		for _, mg := range []client.Object{u2, g2, c2} {
			h.create(t, mg)
		}
		h.waitReady(t, c2)
		h.delete(t, g2)
		h.waitGone(t, g2)
		h.delete(t, u2)
		h.waitGone(t, u2)
		// This API server runs no garbage collector: the Secret goes as
		// the collector would take it with its User.
		h.delete(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: name + "-user"}})
		h.delete(t, c2)
		h.waitGone(t, c2)
	})

	// Last: a new password revokes the user's tokens, the test's own session's too.
	t.Run("a generated password the connection secret lost is replaced", func(t *testing.T) {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: base + "-user"}}
		h.delete(t, s)
		eventually(t, "a new password, published", func() (bool, string) {
			s := &corev1.Secret{}
			if err := h.kube.Get(ctx, client.ObjectKey{Namespace: "crossplane-system", Name: base + "-user"}, s); err != nil {
				return false, err.Error()
			}
			p := string(s.Data["password"])
			return p != "" && p != password, "password not republished"
		})
		p := string(h.secret(t, base+"-user")["password"])
		if err := login(ctx, openstack.Config{Region: "RegionOne", CABundle: openstackCA, Auth: gophercloud.AuthOptions{IdentityEndpoint: keystoneURL, UserID: userID, Password: p}}); err != nil {
			t.Fatalf("the republished password does not log in: %v", err)
		}
	})

}

// refuseNewCredentialIn makes the API server refuse any change of the
// credential ID the connection secret name holds, with a
// ValidatingAdmissionPolicy, until the returned function removes it.
func refuseNewCredentialIn(t *testing.T, h *harness, name string) func() {
	t.Helper()
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-refuse-" + name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptrTo(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
				ResourceNames: []string{name},
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"secrets"}},
				},
			}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "!has(oldObject.data) || !('application_credential_id' in oldObject.data) || " +
					"(has(object.data) && 'application_credential_id' in object.data && object.data['application_credential_id'] == oldObject.data['application_credential_id'])",
				Message: "the test refuses a new credential in this Secret",
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}},
	}
	h.create(t, policy)
	h.create(t, binding)
	// The policy takes effect once the API server has read it: a change
	// of the ID is refused from then on.
	probe := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "crossplane-system", Name: name}}
	eventually(t, "the API server enforces the policy", func() (bool, string) {
		if err := h.kube.Get(ctx, client.ObjectKeyFromObject(probe), probe); err != nil {
			return false, err.Error()
		}
		p := probe.DeepCopy()
		p.Data = map[string][]byte{"application_credential_id": []byte("probe")}
		err := h.kube.Update(ctx, p, client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), "refuses a new credential"), fmt.Sprintf("a dry-run change: %v", err)
	})
	removed := false
	remove := func() {
		if removed {
			return
		}
		removed = true
		_ = h.kube.Delete(ctx, binding)
		_ = h.kube.Delete(ctx, policy)
	}
	t.Cleanup(remove)
	return remove
}

func ptrTo[T any](v T) *T { return &v }
