// Package clusteraccess issues a kubeconfig of a remote cluster for a
// ServiceAccount that may keep ConfigMaps and Secrets in one namespace, run
// DaemonSets there if asked, and read named nodes, and nothing else.
package clusteraccess

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/controller"
	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/managed"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/provider/internal/clients/remotekube"
	pcontroller "github.com/c5c3/consumer-plane/provider/internal/controller"
	"github.com/c5c3/consumer-plane/provider/internal/controller/kubernetes"
	"github.com/c5c3/consumer-plane/provider/internal/controller/providerconfig"
)

// Keys of the connection secret.
const (
	KeyKubeconfig = "kubeconfig"
	// KeyNamespaces is the namespace the access may use, as a multicluster
	// operator's cluster registration names the namespaces it watches.
	KeyNamespaces = "namespaces"
)

// LabelAccess marks what a ClusterAccess made in the remote cluster with its
// name: another's object of the same name is refused, not taken over.
const LabelAccess = "kubernetes.provider.c5c3.io/cluster-access"

// defaultLifetime of a token when the spec says none.
const defaultLifetime = 24 * time.Hour

// Setup adds the ClusterAccess controller.
func Setup(mgr ctrl.Manager, o controller.Options, clients *remotekube.Clients) error {
	// Read past the manager's cache, as SecretCopy reads its sources: the
	// provider does not keep the management cluster's Secrets in memory
	// for the one each ClusterAccess publishes.
	kube := mgr.GetAPIReader()
	c := providerconfig.Connector[*v1alpha1.ClusterAccess, *remotekube.Remote]{
		// A pool's cluster goes with its ClusterAccess (its kubeconfig
		// Secret first): the access goes with it (see Observe).
		Client: kubernetes.RemoteOrGone(mgr, clients),
		External: func(remote *remotekube.Remote) managed.TypedExternalClient[*v1alpha1.ClusterAccess] {
			return &external{remote: remote, kube: kube, now: time.Now}
		},
	}
	return pcontroller.SetupManaged(mgr, o, v1alpha1.SchemeGroupVersion.WithKind(v1alpha1.ClusterAccessKind), &v1alpha1.ClusterAccessList{},
		managed.WithTypedExternalConnector[*v1alpha1.ClusterAccess](c))
}

type external struct {
	// remote is nil for a cluster that is gone (see Setup).
	remote *remotekube.Remote
	// kube reads the management cluster, where the connection secret is.
	kube client.Reader
	now  func() time.Time
}

func (e *external) Disconnect(context.Context) error { return nil }

// clusterRoleName names the access's ClusterRole and ClusterRoleBinding:
// one per ClusterAccess, whose name is unique in the management cluster.
func clusterRoleName(mg *v1alpha1.ClusterAccess) string { return "c5c3:cluster-access:" + mg.GetName() }

var (
	read   = []string{"get", "list", "watch"}
	manage = []string{"get", "list", "watch", "create", "update", "patch", "delete"}
)

// namespaceRules are what a cloud's control plane does in its namespace of
// a pool cluster: it keeps ConfigMaps and Secrets there, reads the
// namespace's ServiceAccounts and events, and, with workloads (a
// hypervisor pool), runs nova-compute and ovn-controller as DaemonSets,
// reads their pods and revisions, and deletes a pod to restart it. Nothing
// else: no RBAC and no ServiceAccounts of its own making (no identity
// beside the access's), no tokens of its own minting (serviceaccounts/token:
// a revoked access ends), no pods of its own making, no exec, attach or
// port-forward into them, no Services (externalIPs, CVE-2020-8554), no
// Deployments or Jobs. The order is fixed: drift compares the rules as
// written.
func namespaceRules(workloads bool) []rbacv1.PolicyRule {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: manage},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: read},
		{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: read},
	}
	if !workloads {
		return rules
	}
	return append(rules,
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: manage},
		rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: read},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
		rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
	)
}

// hostPaths are what a pod of a cloud's workloads may mount from its node:
// what nova-compute, libvirt and ovn-controller keep there (their state,
// sockets, logs and configuration), the kernel's modules, devices and
// cgroups. Not the kubelet's credential or its pods' volumes
// (/var/lib/kubelet, /etc/kubernetes), nor the node's root: with them a
// cloud reaches beyond its nodes (docs/security.md).
var hostPaths = []string{
	"/dev", "/lib/modules", "/sys/fs/cgroup", "/run/netns", "/run/lock",
	"/etc/libvirt", "/var/lib/libvirt", "/run/libvirt", "/var/run/libvirt", "/var/log/libvirt",
	"/etc/nova", "/var/lib/nova", "/var/log/nova",
	"/etc/iscsi", "/var/lib/iscsi", "/etc/ceph",
	"/etc/openvswitch", "/var/lib/openvswitch", "/run/openvswitch", "/var/run/openvswitch", "/var/log/openvswitch",
	"/etc/ovn", "/var/lib/ovn", "/run/ovn", "/var/run/ovn", "/var/log/ovn",
}

// policyName names the access's ValidatingAdmissionPolicy and its binding:
// an object name, which a ClusterRole's may not be.
func policyName(mg *v1alpha1.ClusterAccess) string { return "c5c3-cluster-access." + mg.GetName() }

// matchRule matches operations on a resource of a group, in every version
// and scope. It says the scope the API server would default ("*"): a rule
// read back differs from one without it, and observe would find the policy
// drifted at every poll, setting it again and issuing a new token each time.
func matchRule(ops []admissionv1.OperationType, group, resource string) admissionv1.NamedRuleWithOperations {
	return admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
		Operations: ops,
		Rule:       admissionv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}, Scope: ptr.To(admissionv1.AllScopes)},
	}}
}

// policy is the admission policy of the access's namespace, whoever makes
// what it matches. Every access's: no Secret of type
// kubernetes.io/service-account-token, a token of its ServiceAccount that
// would not expire (the Role allows Secrets, and RBAC cannot say which
// type). With workloads, placement too: the workloads (the cloud's
// DaemonSets, the DaemonSet controller's pods) run on the nodes the node
// selector picks: each must select those labels, name no node, and mount
// from the host only hostPaths. RBAC cannot say which node a pod runs on;
// this can.
func policy(mg *v1alpha1.ClusterAccess) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	p := mg.Spec.ForProvider
	labels := map[string]string{LabelAccess: mg.GetName()}
	validations := []admissionv1.Validation{{
		Expression: "object.kind != 'Secret' || !has(object.type) || object.type != 'kubernetes.io/service-account-token'",
		Message:    fmt.Sprintf("namespace %s holds no Secret of type kubernetes.io/service-account-token: a token of its ServiceAccount outliving the access (spec.forProvider.tokenLifetime) is not given", p.Namespace),
		Reason:     ptr.To(metav1.StatusReasonForbidden),
	}}
	createOrUpdate := []admissionv1.OperationType{admissionv1.Create, admissionv1.Update}
	rules := []admissionv1.NamedRuleWithOperations{matchRule(createOrUpdate, "", "secrets")}
	var variables []admissionv1.Variable
	if p.Workloads {
		validations = append(validations, placement(p)...)
		rules = append(rules,
			matchRule(createOrUpdate, "apps", "daemonsets"),
			matchRule([]admissionv1.OperationType{admissionv1.Create}, "", "pods"),
		)
		// A Secret has no spec: its validations never read the variable
		// (a placement rule holds for it first, see placement).
		variables = []admissionv1.Variable{{Name: "spec", Expression: "object.kind == 'Pod' ? object.spec : object.spec.template.spec"}}
	}
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: policyName(mg), Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: rules},
			Variables:        variables,
			Validations:      validations,
		},
	}
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policyName(mg), Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policyName(mg),
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			MatchResources: &admissionv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: p.Namespace},
			}},
		},
	}
	return policy, binding
}

// placement are the validations that confine a namespace's workloads to
// the nodes p's node selector picks. Each holds for a Secret first
// (object.kind == 'Secret' ||): CEL's || is true when either side is,
// without reading the other.
func placement(p v1alpha1.ClusterAccessParameters) []admissionv1.Validation {
	// The keys are label names (checkPlacement) and the values label
	// values (the CRD's schema), which need no escaping in a CEL string.
	var selected []string
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
		selected = append(selected, k+"="+string(p.NodeSelector[k]))
	}
	notSecret := func(expr string) string { return "object.kind == 'Secret' || (" + expr + ")" }
	validations := []admissionv1.Validation{{
		Expression: notSecret("!has(variables.spec.nodeName) || variables.spec.nodeName == ''"),
		Message:    fmt.Sprintf("the workloads of namespace %s may not name their node (spec.nodeName): they run on the nodes labelled %s", p.Namespace, strings.Join(selected, ",")),
		Reason:     ptr.To(metav1.StatusReasonForbidden),
	}}
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
		validations = append(validations, admissionv1.Validation{
			Expression: notSecret(fmt.Sprintf("has(variables.spec.nodeSelector) && '%s' in variables.spec.nodeSelector && variables.spec.nodeSelector['%s'] == '%s'", k, k, p.NodeSelector[k])),
			Message:    fmt.Sprintf("the workloads of namespace %s must select the nodes labelled %s=%s (spec.nodeSelector)", p.Namespace, k, p.NodeSelector[k]),
			Reason:     ptr.To(metav1.StatusReasonForbidden),
		})
	}
	quoted := make([]string, len(hostPaths))
	for i, h := range hostPaths {
		quoted[i] = "'" + h + "'"
	}
	return append(validations, admissionv1.Validation{
		Expression: notSecret(fmt.Sprintf("!has(variables.spec.volumes) || variables.spec.volumes.all(v, !has(v.hostPath) || (!v.hostPath.path.contains('..') && [%s].exists(p, v.hostPath.path == p || v.hostPath.path.startsWith(p + '/'))))", strings.Join(quoted, ", "))),
		Message:    fmt.Sprintf("the workloads of namespace %s may mount from their node only %s and what is below them (spec.volumes[].hostPath)", p.Namespace, strings.Join(hostPaths, ", ")),
		Reason:     ptr.To(metav1.StatusReasonForbidden),
	})
}

// checkPlacement refuses a node selector whose key is not a label name:
// the placement policy writes it into its expressions.
func checkPlacement(p v1alpha1.ClusterAccessParameters) error {
	for _, k := range slices.Sorted(maps.Keys(p.NodeSelector)) {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("spec.forProvider.nodeSelector: key %q is not a label name: %s", k, strings.Join(errs, "; "))
		}
	}
	return nil
}

// objects are what the access is in the remote cluster, as desired: the
// ServiceAccount, the namespace's Role and RoleBinding, the nodes'
// ClusterRole and ClusterRoleBinding, and the namespace's admission policy
// and its binding.
func objects(mg *v1alpha1.ClusterAccess) []client.Object {
	p := mg.Spec.ForProvider
	labels := map[string]string{LabelAccess: mg.GetName()}
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: p.ServiceAccount, Namespace: p.Namespace}}
	var nodeRules []rbacv1.PolicyRule
	if len(p.Nodes) > 0 {
		// Read only: a node's labels place the clouds' workloads (the
		// NodeLabel of the hypervisor pool writes the placement label), so a
		// cloud that could write them could lure another cloud's
		// nova-compute onto its node.
		nodeRules = []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes"}, ResourceNames: slices.Sorted(slices.Values(p.Nodes)), Verbs: read},
		}
	}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: p.ServiceAccount, Namespace: p.Namespace, Labels: labels}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: p.ServiceAccount, Namespace: p.Namespace, Labels: labels}, Rules: namespaceRules(p.Workloads)},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: p.ServiceAccount, Namespace: p.Namespace, Labels: labels},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: p.ServiceAccount}, Subjects: subject},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: clusterRoleName(mg), Labels: labels}, Rules: nodeRules},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: clusterRoleName(mg), Labels: labels},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterRoleName(mg)}, Subjects: subject},
	}
	vap, binding := policy(mg)
	return append(objs, vap, binding)
}

// notOurs refuses an object of the access's name that another made: it is
// never taken over.
func notOurs(mg *v1alpha1.ClusterAccess, o client.Object) error {
	if o.GetLabels()[LabelAccess] == mg.GetName() {
		return nil
	}
	return fmt.Errorf("%T %s already exists in the remote cluster and is not this ClusterAccess's (label %s): %w", o, o.GetName(), LabelAccess, errNotOurs)
}

// errNotOurs: an object of the access's name is another's.
var errNotOurs = errors.New("it is never taken over")

// drifted reports whether an observed object differs from the desired one
// in what the access grants.
func drifted(desired, observed client.Object) bool {
	switch d := desired.(type) {
	case *rbacv1.Role:
		return !rulesEqual(d.Rules, observed.(*rbacv1.Role).Rules)
	case *rbacv1.ClusterRole:
		return !rulesEqual(d.Rules, observed.(*rbacv1.ClusterRole).Rules)
	case *rbacv1.RoleBinding:
		o := observed.(*rbacv1.RoleBinding)
		return d.RoleRef != o.RoleRef || !slices.Equal(d.Subjects, o.Subjects)
	case *rbacv1.ClusterRoleBinding:
		o := observed.(*rbacv1.ClusterRoleBinding)
		return d.RoleRef != o.RoleRef || !slices.Equal(d.Subjects, o.Subjects)
	case *admissionv1.ValidatingAdmissionPolicy:
		// What the API server defaults (matchPolicy, selectors) is left out.
		o := observed.(*admissionv1.ValidatingAdmissionPolicy)
		return !equality.Semantic.DeepEqual(d.Spec.Validations, o.Spec.Validations) ||
			!equality.Semantic.DeepEqual(d.Spec.Variables, o.Spec.Variables) ||
			!equality.Semantic.DeepEqual(d.Spec.FailurePolicy, o.Spec.FailurePolicy) ||
			o.Spec.MatchConstraints == nil || !equality.Semantic.DeepEqual(d.Spec.MatchConstraints.ResourceRules, o.Spec.MatchConstraints.ResourceRules)
	case *admissionv1.ValidatingAdmissionPolicyBinding:
		o := observed.(*admissionv1.ValidatingAdmissionPolicyBinding)
		return d.Spec.PolicyName != o.Spec.PolicyName || !slices.Equal(d.Spec.ValidationActions, o.Spec.ValidationActions) ||
			o.Spec.MatchResources == nil || !equality.Semantic.DeepEqual(d.Spec.MatchResources.NamespaceSelector, o.Spec.MatchResources.NamespaceSelector)
	}
	return false
}

func rulesEqual(a, b []rbacv1.PolicyRule) bool {
	return slices.EqualFunc(a, b, func(x, y rbacv1.PolicyRule) bool {
		return slices.Equal(x.APIGroups, y.APIGroups) && slices.Equal(x.Resources, y.Resources) &&
			slices.Equal(x.ResourceNames, y.ResourceNames) && slices.Equal(x.Verbs, y.Verbs) && slices.Equal(x.NonResourceURLs, y.NonResourceURLs)
	})
}

// observe reads the access's objects: whether the ServiceAccount exists,
// and whether anything needs to be made or set again. An object of the
// access's name that another made is an error.
func (e *external) observe(ctx context.Context, mg *v1alpha1.ClusterAccess) (exists, upToDate bool, err error) {
	upToDate = true
	for i, want := range objects(mg) {
		got := want.DeepCopyObject().(client.Object)
		switch err := e.remote.Get(ctx, client.ObjectKeyFromObject(want), got); {
		case kerrors.IsNotFound(err):
			upToDate = false
			continue
		case err != nil:
			return false, false, fmt.Errorf("cannot read %T %s of the remote cluster: %w", want, want.GetName(), err)
		}
		if err := notOurs(mg, got); err != nil {
			return false, false, err
		}
		if i == 0 {
			exists = true
		}
		upToDate = upToDate && !drifted(want, got)
	}
	return exists, upToDate, nil
}

func (e *external) Observe(ctx context.Context, mg *v1alpha1.ClusterAccess) (managed.ExternalObservation, error) {
	if e.remote == nil {
		return managed.ExternalObservation{}, nil // the cluster is gone, and the access with it
	}
	exists, upToDate, err := e.observe(ctx, mg)
	switch {
	case errors.Is(err, errNotOurs) && meta.WasDeleted(mg):
		// Refused from the start: it made nothing there, and what is
		// there is another's.
		return managed.ExternalObservation{}, nil
	case err != nil && meta.WasDeleted(mg):
		// Only a cluster that is gone (its kubeconfig with it: remote is
		// nil above) is let go without revoking the access and deleting
		// what the cloud made there: one that is unreachable is waited
		// for, saying why.
		return managed.ExternalObservation{}, fmt.Errorf("cannot revoke the access, its cluster cannot be read (a cluster gone for good: delete the kubeconfig Secret of ProviderConfig %s, and the access goes without it): %w", providerConfigName(mg), err)
	}
	if err != nil || !exists {
		return managed.ExternalObservation{}, err
	}
	if !meta.WasDeleted(mg) {
		fresh, err := e.tokenFresh(ctx, mg)
		if err != nil {
			return managed.ExternalObservation{}, err
		}
		upToDate = upToDate && fresh
		mg.Status.AtProvider.Nodes = int32(len(mg.Spec.ForProvider.Nodes)) //nolint:gosec // at most 5000 by the schema
		mg.SetConditions(xpv2.Available())
	}
	return managed.ExternalObservation{ResourceExists: true, ResourceUpToDate: upToDate}, nil
}

// tokenFresh reports whether the published kubeconfig is there and its
// token has more than a third of its lifetime left.
func (e *external) tokenFresh(ctx context.Context, mg *v1alpha1.ClusterAccess) (bool, error) {
	exp := mg.Status.AtProvider.ExpiresAt
	if exp == nil || exp.Sub(e.now()) < lifetime(mg)/3 {
		return false, nil
	}
	ref := mg.GetWriteConnectionSecretToReference()
	if ref == nil {
		return true, nil
	}
	s := &corev1.Secret{}
	switch err := e.kube.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, s); {
	case kerrors.IsNotFound(err):
		return false, nil // lost: issued again
	case err != nil:
		return false, fmt.Errorf("cannot read connection secret %s/%s: %w", ref.Namespace, ref.Name, err)
	}
	return len(s.Data[KeyKubeconfig]) > 0, nil
}

func lifetime(mg *v1alpha1.ClusterAccess) time.Duration {
	if l := mg.Spec.ForProvider.TokenLifetime; l != nil && l.Duration > 0 {
		return l.Duration
	}
	return defaultLifetime
}

func (e *external) Create(ctx context.Context, mg *v1alpha1.ClusterAccess) (managed.ExternalCreation, error) {
	details, err := e.issue(ctx, mg)
	return managed.ExternalCreation{ConnectionDetails: details}, err
}

func (e *external) Update(ctx context.Context, mg *v1alpha1.ClusterAccess) (managed.ExternalUpdate, error) {
	details, err := e.issue(ctx, mg)
	return managed.ExternalUpdate{ConnectionDetails: details}, err
}

// issue makes or sets again the access's objects, then a token of the
// ServiceAccount, and returns the kubeconfig that holds it.
func (e *external) issue(ctx context.Context, mg *v1alpha1.ClusterAccess) (managed.ConnectionDetails, error) {
	p := mg.Spec.ForProvider
	if err := checkPlacement(p); err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: p.Namespace}}
	if err := e.remote.Create(ctx, ns); err != nil && !kerrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("cannot create namespace %s in the remote cluster: %w", p.Namespace, err)
	}
	for _, want := range objects(mg) {
		got := want.DeepCopyObject().(client.Object)
		if _, err := controllerutil.CreateOrUpdate(ctx, e.remote, got, func() error {
			if got.GetResourceVersion() != "" {
				if err := notOurs(mg, got); err != nil {
					return err
				}
			}
			set(got, want)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("cannot apply %T %s in the remote cluster: %w", want, want.GetName(), err)
		}
	}
	if err := e.enforced(ctx, mg); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: p.ServiceAccount, Namespace: p.Namespace}}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(lifetime(mg).Seconds()))}}
	if err := e.remote.SubResource("token").Create(ctx, sa, tr); err != nil {
		return nil, fmt.Errorf("cannot issue a token of ServiceAccount %s/%s in the remote cluster: %w", p.Namespace, p.ServiceAccount, err)
	}
	kubeconfig, err := kubeconfigOf(e.remote.Config, p, tr.Status.Token)
	if err != nil {
		return nil, err
	}
	mg.Status.AtProvider.ExpiresAt = &tr.Status.ExpirationTimestamp
	return managed.ConnectionDetails{KeyKubeconfig: kubeconfig, KeyNamespaces: []byte(p.Namespace)}, nil
}

// enforced returns nil once the API server enforces the namespace's
// admission policy (it does a moment after the policy is made): no token
// is issued before what confines its holder is in force. It asks with a
// dry run of what the policy refuses to everyone, a token Secret.
func (e *external) enforced(ctx context.Context, mg *v1alpha1.ClusterAccess) error {
	p := mg.Spec.ForProvider
	probe := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "c5c3-policy-probe", Namespace: p.Namespace, Annotations: map[string]string{corev1.ServiceAccountNameKey: p.ServiceAccount}},
		Type:       corev1.SecretTypeServiceAccountToken,
	}
	switch err := e.remote.Create(ctx, probe, client.DryRunAll); {
	case kerrors.IsForbidden(err):
		return nil
	case err != nil:
		return fmt.Errorf("cannot tell whether the remote cluster enforces the admission policy %s: %w", policyName(mg), err)
	default:
		return fmt.Errorf("the remote cluster does not enforce the admission policy %s yet: the token is issued once it does", policyName(mg))
	}
}

// set copies what the access grants from want into got.
func set(got, want client.Object) {
	labels := got.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[LabelAccess] = want.GetLabels()[LabelAccess]
	got.SetLabels(labels)
	switch w := want.(type) {
	case *rbacv1.Role:
		got.(*rbacv1.Role).Rules = w.Rules
	case *rbacv1.ClusterRole:
		got.(*rbacv1.ClusterRole).Rules = w.Rules
	case *rbacv1.RoleBinding:
		g := got.(*rbacv1.RoleBinding)
		if g.GetResourceVersion() == "" {
			g.RoleRef = w.RoleRef // immutable once made
		}
		g.Subjects = w.Subjects
	case *rbacv1.ClusterRoleBinding:
		g := got.(*rbacv1.ClusterRoleBinding)
		if g.GetResourceVersion() == "" {
			g.RoleRef = w.RoleRef
		}
		g.Subjects = w.Subjects
	case *admissionv1.ValidatingAdmissionPolicy:
		got.(*admissionv1.ValidatingAdmissionPolicy).Spec = w.Spec
	case *admissionv1.ValidatingAdmissionPolicyBinding:
		got.(*admissionv1.ValidatingAdmissionPolicyBinding).Spec = w.Spec
	}
}

// kubeconfigOf is a kubeconfig of the cluster cfg reaches (or p.Server) for
// a bearer token.
func kubeconfigOf(cfg *rest.Config, p v1alpha1.ClusterAccessParameters, token string) ([]byte, error) {
	if cfg == nil || cfg.Host == "" {
		return nil, errors.New("the ProviderConfig names no API server address to issue a kubeconfig for")
	}
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		b, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read the remote cluster's CA: %w", err)
		}
		ca = b
	}
	server := p.Server
	if server == "" {
		server = cfg.Host
	}
	const name = "cluster"
	c := clientcmdapi.NewConfig()
	c.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca, InsecureSkipTLSVerify: len(ca) == 0 && cfg.Insecure}
	c.AuthInfos[p.ServiceAccount] = &clientcmdapi.AuthInfo{Token: token}
	c.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: p.ServiceAccount, Namespace: p.Namespace}
	c.CurrentContext = name
	return clientcmd.Write(*c)
}

func (e *external) Delete(ctx context.Context, mg *v1alpha1.ClusterAccess) (managed.ExternalDelete, error) {
	mg.SetConditions(xpv2.Deleting())
	if e.remote == nil {
		return managed.ExternalDelete{}, nil
	}
	objs := objects(mg)
	var errs []error
	del := func(o client.Object) {
		if err := e.remote.Delete(ctx, o); err != nil && !kerrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cannot delete %T %s in the remote cluster: %w", o, o.GetName(), err))
		}
	}
	// The bindings first: once they go, nothing is granted. Then what the
	// cloud made in its namespace. The policy last: what the cloud runs
	// stays confined while the rest goes.
	for _, i := range []int{4, 2, 3, 1, 0} {
		del(objs[i])
	}
	errs = append(errs, e.deleteMade(ctx, mg.Spec.ForProvider.Namespace)...)
	for _, o := range objs[5:] {
		del(o)
	}
	return managed.ExternalDelete{}, errors.Join(errs...)
}

// deleteMade deletes what the cloud made in its namespace: every object of
// the kinds the access lets it make (namespaceRules), but the CA bundle
// Kubernetes publishes in every namespace. Revoking the access so leaves
// nothing the cloud made (nova-compute on its nodes, a key in a Secret)
// behind it. The namespace stays: another access of the cloud may come,
// and a namespace being deleted refuses what it would make.
func (e *external) deleteMade(ctx context.Context, namespace string) []error {
	var errs []error
	for _, o := range []client.Object{&appsv1.DaemonSet{}, &corev1.Pod{}, &corev1.Secret{}, &corev1.ConfigMap{}} {
		opts := []client.DeleteAllOfOption{client.InNamespace(namespace), client.PropagationPolicy(metav1.DeletePropagationBackground)}
		if _, ok := o.(*corev1.ConfigMap); ok {
			opts = append(opts, client.MatchingFieldsSelector{Selector: fields.OneTermNotEqualSelector("metadata.name", rootCA)})
		}
		if err := e.remote.DeleteAllOf(ctx, o, opts...); err != nil && !kerrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("cannot delete the %T objects of namespace %s in the remote cluster: %w", o, namespace, err))
		}
	}
	return errs
}

// rootCA is the ConfigMap of the cluster's CA that Kubernetes keeps in
// every namespace.
const rootCA = "kube-root-ca.crt"

// providerConfigName names the access's ProviderConfig, for messages.
func providerConfigName(mg *v1alpha1.ClusterAccess) string {
	if r := mg.GetProviderConfigReference(); r != nil {
		return r.Name
	}
	return "(none)"
}
