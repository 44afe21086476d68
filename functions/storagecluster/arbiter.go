package main

import (
	"fmt"
	"slices"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	protectionv1beta1 "github.com/crossplane/crossplane/apis/v2/protection/v1beta1"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	arbiterv1alpha1 "github.com/c5c3/consumer-plane/apis/arbiter/v1alpha1"
	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/gardener"
	"github.com/c5c3/consumer-plane/internal/pool"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// A stretched pool spans two zones; a Ceph monitor in a third site, the
// arbiter, keeps quorum when either zone is lost. The external-arbiter-operator
// (installed in the pool cluster with the pool's agents, in arbiterNamespace)
// deploys that monitor into the arbiter cluster from a RemoteCluster (how to
// reach it) and a RemoteArbiter (which CephCluster it joins).
//
// The arbiter cluster is a ControlPlaneCluster, which runs every tenant's
// control plane: the pool cluster must not hold its admin kubeconfig. The
// operator logs in as a ServiceAccount of its own there, whose Role allows
// what the operator does (the monitor's Deployment, Service, ConfigMap and
// Secret) in the one namespace of this pool's monitor, and nothing else; a
// ShootKubeconfig keeps a token of it fresh, and that kubeconfig alone is
// copied into the pool cluster.
const (
	arbiterNamespace = "arbiter-operator"
	// arbiterKubeconfigKey is the key of the arbiter cluster's kubeconfig
	// in the Secret the RemoteCluster reads.
	arbiterKubeconfigKey = "kubeconfig"
	// arbiterServiceAccount is the operator's identity in the arbiter
	// cluster.
	arbiterServiceAccount = "external-arbiter"
	// stretchedZones: Rook places one monitor in each, the arbiter is the
	// third.
	stretchedZones = 2
	// annotationArbiterCluster on a stretched pool's CephCluster names the
	// control-plane cluster its arbiter's monitor runs in.
	annotationArbiterCluster = "c5c3.io/arbiter-cluster"
	// requirementArbiterCluster finds the arbiter cluster's composite.
	requirementArbiterCluster = "arbiter-cluster"
)

// Composed resources of a stretched pool.
const (
	resourceArbiterKubeconfig    resource.Name = "arbiter-kubeconfig-copy"
	resourceArbiterRemoteCluster resource.Name = "arbiter-remote-cluster"
	resourceArbiter              resource.Name = "arbiter"
	// In the arbiter cluster: the monitor's namespace and the operator's
	// identity there.
	resourceArbiterNamespace      resource.Name = "arbiter-namespace"
	resourceArbiterServiceAccount resource.Name = "arbiter-service-account"
	resourceArbiterRole           resource.Name = "arbiter-role"
	resourceArbiterRoleBinding    resource.Name = "arbiter-role-binding"
	// What may run there: only what the arbiter's monitor is.
	resourceArbiterPodPolicy        resource.Name = "arbiter-pod-policy"
	resourceArbiterPodPolicyBinding resource.Name = "arbiter-pod-policy-binding"
	// In the management cluster: the ServiceAccount's kubeconfig, and the
	// usage that keeps the arbiter cluster while the pool needs it.
	resourceArbiterAccess resource.Name = "arbiter-access"
	resourceArbiterUsage  resource.Name = "arbiter-usage"
)

// conditionArbiterReady says whether a stretched pool's arbiter has joined.
const conditionArbiterReady = "ArbiterReady"

func init() {
	// The core and RBAC kinds are manifests placed in the arbiter cluster.
	for _, add := range []func(*runtime.Scheme) error{arbiterv1alpha1.AddToScheme, protectionv1beta1.AddToScheme, corev1.AddToScheme, rbacv1.AddToScheme, admissionv1.AddToScheme} {
		if err := add(composed.Scheme); err != nil {
			panic(err)
		}
	}
}

// requireArbiterCluster asks for the composite of the arbiter cluster.
func requireArbiterCluster(rsp *fnv1.RunFunctionResponse, s *v1alpha1.StorageClusterParameters) {
	if s.ArbiterCluster != "" {
		pool.RequireNamed(rsp, requirementArbiterCluster, v1alpha1.SchemeGroupVersion.String(), v1alpha1.XControlPlaneClusterKind, s.ArbiterCluster)
	}
}

// arbiterRole is what the external-arbiter-operator does in the arbiter
// cluster (its own RBAC, hack/configure-k8s-user.sh upstream): the
// monitor's objects, in the monitor's namespace.
var arbiterRole = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"services", "services/status", "configmaps", "configmaps/status", "secrets", "secrets/status"},
		Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"services/finalizers", "configmaps/finalizers", "secrets/finalizers"}, Verbs: []string{"update"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments", "deployments/status"},
		Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments/finalizers"}, Verbs: []string{"update"}},
}

// arbiterPodRules say what a pod in the monitor's namespace may be: what the
// external-arbiter-operator makes of Rook's monitor (not privileged, no
// privilege escalation, no host namespaces or ports, no added capabilities,
// no unconfined seccomp or AppArmor profile, custom SELinux, proc mount or
// sysctls, no node of its own choosing, only the volume types a monitor
// uses, and from its node only its pool's monitor data: monitorDataRule).
// Pod Security cannot say it: its baseline level already forbids that
// hostPath. Whoever holds the operator's kubeconfig may create Deployments
// there, and no more than these pods.
var arbiterPodRules = []admissionv1.Validation{
	{Expression: "!(has(object.spec.hostNetwork) && object.spec.hostNetwork) && !(has(object.spec.hostPID) && object.spec.hostPID) && !(has(object.spec.hostIPC) && object.spec.hostIPC)",
		Message: "the arbiter's monitor uses no host network, PID or IPC namespace"},
	{Expression: "variables.containers.all(c, !has(c.securityContext) || ((!has(c.securityContext.privileged) || !c.securityContext.privileged) && (!has(c.securityContext.allowPrivilegeEscalation) || !c.securityContext.allowPrivilegeEscalation) && (!has(c.securityContext.capabilities) || !has(c.securityContext.capabilities.add) || size(c.securityContext.capabilities.add) == 0)))",
		Message: "the arbiter's monitor runs no privileged container, allows no privilege escalation and adds no capabilities"},
	{Expression: "variables.containers.all(c, (!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)) && (!has(c.securityContext) || (!has(c.securityContext.seLinuxOptions) && (!has(c.securityContext.procMount) || c.securityContext.procMount == 'Default') && (!has(c.securityContext.seccompProfile) || c.securityContext.seccompProfile.type != 'Unconfined') && (!has(c.securityContext.appArmorProfile) || c.securityContext.appArmorProfile.type != 'Unconfined'))))",
		Message: "the arbiter's monitor uses no host port, custom SELinux options, unmasked proc mount, unconfined seccomp or AppArmor profile"},
	{Expression: "!has(object.spec.securityContext) || (!has(object.spec.securityContext.sysctls) && !has(object.spec.securityContext.seLinuxOptions) && (!has(object.spec.securityContext.seccompProfile) || object.spec.securityContext.seccompProfile.type != 'Unconfined') && (!has(object.spec.securityContext.appArmorProfile) || object.spec.securityContext.appArmorProfile.type != 'Unconfined'))",
		Message: "the arbiter's monitor sets no sysctls, custom SELinux options, unconfined seccomp or AppArmor profile"},
	{Expression: "!has(object.metadata.annotations) || object.metadata.annotations.all(k, !k.startsWith('container.apparmor.security.beta.kubernetes.io/') || object.metadata.annotations[k] != 'unconfined')",
		Message: "the arbiter's monitor runs under no unconfined AppArmor profile (annotation container.apparmor.security.beta.kubernetes.io/)"},
	{Expression: "request.operation != 'CREATE' || !has(object.spec.nodeName) || object.spec.nodeName == ''",
		Message: "the arbiter's monitor names no node (spec.nodeName): the scheduler places it"},
	{Expression: "!has(object.spec.volumes) || object.spec.volumes.all(v, has(v.hostPath) || has(v.configMap) || has(v.secret) || has(v.emptyDir) || has(v.projected) || has(v.downwardAPI))",
		Message: "the arbiter's monitor mounts only hostPath (its data), configMap, secret, emptyDir, projected and downwardAPI volumes"},
}

// monIDPrefix is the prefix of the ID of the pool's external monitor
// (RemoteArbiter spec.monIdPrefix): the external-arbiter-operator names the
// monitor prefix plus one letter and keeps its data on its node in
// /var/lib/rook/mon-<id>/data. Every arbiter cluster's control-plane nodes
// may run the monitors of several pools; with the pool's own prefix each
// has a directory of its own, which the pool's namespace policy pins
// (monitorDataRule). Pool names are DNS labels of at most 40 characters, so
// the ID is one of at most 42, as the operator requires.
func monIDPrefix(pool v1alpha1.PoolName) string { return string(pool) + "-" }

// monitorDataRule lets a pod mount from its node only the data directory
// of the pool's monitor: the ID is the pool's prefix and one letter, so one
// pool's arbiter identity cannot mount another pool's monitor (its mon.
// key) even on the same node. The path is matched whole: a prefix would let
// one pod plant a symlink that another mounts. (A pool name is lower-case
// letters, digits and dashes: nothing in it means more to a regular
// expression or a CEL string.)
func monitorDataRule(prefix string) admissionv1.Validation {
	return admissionv1.Validation{
		Expression: "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath) || v.hostPath.path.matches('^/var/lib/rook/mon-" + prefix + "[a-z]/data$'))",
		Message:    "the arbiter's monitor mounts from its node only its own pool's monitor data directory, /var/lib/rook/mon-" + prefix + "<letter>/data",
	}
}

// arbiterSecretRule refuses a Secret of type
// kubernetes.io/service-account-token in the monitor's namespace: the
// operator's Role keeps Secrets there, and such a Secret would hold a token
// of its ServiceAccount that never expires (the ShootKubeconfig's is
// renewed, and revoked with it).
var arbiterSecretRule = admissionv1.Validation{
	Expression: "object.type != 'kubernetes.io/service-account-token'",
	Message:    "the arbiter's namespace holds no Secret of type kubernetes.io/service-account-token: its operator's token is the one it is given",
}

// arbiterPolicy is the admission policy of the monitor's namespace: pods
// as arbiterPodRules and monitorDataRule say, Secrets as arbiterSecretRule
// does.
func arbiterPolicy(monitorNamespace, monIDPrefix string) admissionv1.ValidatingAdmissionPolicySpec {
	// Each rule holds for the other kind first: CEL's || is true when
	// either side is, without reading the other (a Secret has no spec).
	validations := make([]admissionv1.Validation, 0, len(arbiterPodRules)+2)
	for _, r := range append(slices.Clone(arbiterPodRules), monitorDataRule(monIDPrefix)) {
		r.Expression = "object.kind != 'Pod' || (" + r.Expression + ")"
		validations = append(validations, r)
	}
	secret := arbiterSecretRule
	secret.Expression = "object.kind != 'Secret' || (" + secret.Expression + ")"
	return admissionv1.ValidatingAdmissionPolicySpec{
		FailurePolicy: ptr.To(admissionv1.Fail),
		MatchConstraints: &admissionv1.MatchResources{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: monitorNamespace}},
			ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
				Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods", "secrets"}},
			}}},
		},
		Variables: []admissionv1.Variable{{Name: "containers",
			Expression: "object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : []) + (has(object.spec.ephemeralContainers) ? object.spec.ephemeralContainers : [])"}},
		Validations: append(validations, secret),
	}
}

// arbiterAccess are the manifests of the monitor's namespace in the arbiter
// cluster, of what may run there and of the operator's identity there, by
// composed resource name.
func arbiterAccess(monitorNamespace, monIDPrefix string) map[resource.Name]runtime.Object {
	meta := metav1.ObjectMeta{Name: arbiterServiceAccount, Namespace: monitorNamespace}
	policy := metav1.ObjectMeta{Name: "cobaltcore-" + monitorNamespace}
	return map[resource.Name]runtime.Object{
		resourceArbiterPodPolicy: &admissionv1.ValidatingAdmissionPolicy{
			TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicy"}, ObjectMeta: policy,
			Spec: arbiterPolicy(monitorNamespace, monIDPrefix),
		},
		resourceArbiterPodPolicyBinding: &admissionv1.ValidatingAdmissionPolicyBinding{
			TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "ValidatingAdmissionPolicyBinding"}, ObjectMeta: policy,
			Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
		},
		resourceArbiterNamespace: &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: monitorNamespace}},
		resourceArbiterServiceAccount: &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta,
			// The token is requested, never mounted.
			AutomountServiceAccountToken: ptr.To(false)},
		resourceArbiterRole: &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"}, ObjectMeta: meta,
			Rules: arbiterRole},
		resourceArbiterRoleBinding: &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"}, ObjectMeta: meta,
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: arbiterServiceAccount},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: arbiterServiceAccount, Namespace: monitorNamespace}}},
	}
}

// composeArbiter places the arbiter objects: the operator's identity in the
// arbiter cluster (a ControlPlaneCluster, named by its claim), a
// ShootKubeconfig that keeps its token fresh, a copy of that kubeconfig in
// the pool cluster (by reference, so the token passes through no function,
// log or status), the RemoteCluster and RemoteArbiter, and a usage that
// keeps the arbiter cluster while this pool exists. It reports whether the
// arbiter is Ready, and why not.
func composeArbiter(req *fnv1.RunFunctionRequest, xr *v1alpha1.XStorageCluster, run *pool.Result) (bool, string, error) {
	s, a, observed, desired := &xr.Spec, run.Access, run.Observed, run.Desired
	cluster, supplied, found := pool.Named(req, requirementArbiterCluster, s.ArbiterCluster)
	switch {
	case !supplied:
		return false, "looking up the arbiter cluster " + s.ArbiterCluster, nil
	case !found:
		return false, fmt.Sprintf("spec.arbiterCluster names the ControlPlaneCluster %s, which does not exist: create it, or name an existing one", s.ArbiterCluster), nil
	}
	if err := composeArbiterUsage(xr, cluster, desired); err != nil {
		return false, "", err
	}

	pc := a.ProviderConfigName()
	arbiterPC := pool.Access{Kind: pool.KindControlPlane, Name: s.ArbiterCluster}.ProviderConfigName()
	monitorNamespace := "ceph-arbiter-" + string(s.Name)
	for n, o := range arbiterAccess(monitorNamespace, monIDPrefix(s.Name)) {
		u, err := function.Composed(o)
		if err != nil {
			return false, "", err
		}
		desired[n] = &resource.DesiredComposed{Resource: remote.Created(pc+"-"+string(n), arbiterPC, u.Object)}
	}

	// The token is requested once its ServiceAccount may do its job.
	ready := markReady(observed, desired, resourceArbiterPodPolicy, resourceArbiterPodPolicyBinding,
		resourceArbiterNamespace, resourceArbiterServiceAccount, resourceArbiterRole, resourceArbiterRoleBinding)
	// Each stage below is kept once composed, whatever the one before it
	// says now: a RemoteArbiter deleted takes the tiebreaker monitor away.
	inPool := []resource.Name{resourceArbiterKubeconfig, resourceArbiterRemoteCluster, resourceArbiter}
	if !ready && !pool.Kept(observed, append(inPool, resourceArbiterAccess)...) {
		return false, fmt.Sprintf("creating the arbiter's ServiceAccount %s/%s in cluster %s", monitorNamespace, arbiterServiceAccount, s.ArbiterCluster), nil
	}
	access := pool.Access{Kind: a.Kind, Name: a.Name + "-arbiter", SecretNamespace: a.SecretNamespace}
	token, err := function.Composed(&gardenerv1alpha1.ShootKubeconfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: gardenerv1alpha1.SchemeGroupVersion.String(), Kind: gardenerv1alpha1.ShootKubeconfigKind},
		ObjectMeta: metav1.ObjectMeta{Name: access.ProviderConfigName()},
		Spec: gardenerv1alpha1.ShootKubeconfigSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{
				WriteConnectionSecretToReference: &xpv2.SecretReference{Name: access.SecretName(), Namespace: access.SecretNamespace},
			},
			ForProvider: gardenerv1alpha1.ShootKubeconfigParameters{
				// The control-plane cluster's Shoot is named after it as its
				// own function names it.
				ShootRef:          gardenerv1alpha1.ShootReference{Name: gardener.ShootName(run.Settings.ProjectNamespace, s.ArbiterCluster), Namespace: run.Settings.ProjectNamespace},
				ServiceAccountRef: &gardenerv1alpha1.ServiceAccountReference{Namespace: monitorNamespace, Name: arbiterServiceAccount},
			},
		},
	})
	if err != nil {
		return false, "", err
	}
	desired[resourceArbiterAccess] = &resource.DesiredComposed{Resource: token}
	if !markReady(observed, desired, resourceArbiterAccess) && !pool.Kept(observed, inPool...) {
		msg := fmt.Sprintf("waiting for ShootKubeconfig %s to write the arbiter's kubeconfig", access.ProviderConfigName())
		if o, ok := observed[resourceArbiterAccess]; ok {
			if m := o.Resource.GetCondition(xpv2.TypeSynced).Message; m != "" {
				msg += ": " + m
			}
		}
		return false, msg, nil
	}

	// In the pool cluster, the arbiter operator's namespace and CRDs come
	// with the pool's layer.
	if !pool.Kept(observed, inPool...) && !pool.LayerApplied(observed) {
		return false, "waiting for Flux to apply the pool's layer, which brings the arbiter operator's namespace and CRDs (see " + pool.ConditionLayerApplied + ")", nil
	}
	secretName := "arbiter-" + s.ArbiterCluster + "-kubeconfig"
	kc, err := remote.SecretCopy(pc+"-arbiter-kubeconfig", pc, remote.Copy{
		SourceNamespace: access.SecretNamespace, SourceName: access.SecretName(),
		Keys:            []kubernetesv1alpha1.KeyCopy{{From: gardenerv1alpha1.ConnectionSecretKeyKubeconfig, To: arbiterKubeconfigKey}},
		TargetNamespace: arbiterNamespace, TargetName: secretName,
	})
	if err != nil {
		return false, "", err
	}
	desired[resourceArbiterKubeconfig] = &resource.DesiredComposed{Resource: kc}

	rc, err := function.Composed(&arbiterv1alpha1.RemoteCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: arbiterv1alpha1.SchemeGroupVersion.String(), Kind: "RemoteCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: s.ArbiterCluster, Namespace: arbiterNamespace},
		Spec: arbiterv1alpha1.RemoteClusterSpec{
			AccessKeyRef: arbiterv1alpha1.KubeconfigSecretSource{Name: secretName, Key: arbiterKubeconfigKey},
			Namespace:    monitorNamespace,
		},
	})
	if err != nil {
		return false, "", err
	}
	const stateReady = "object.status.state == 'Ready'"
	desired[resourceArbiterRemoteCluster] = &resource.DesiredComposed{Resource: remote.ReadyWhen(pc+"-arbiter-remote-cluster", pc, rc.Object, stateReady)}

	ra, err := function.Composed(&arbiterv1alpha1.RemoteArbiter{
		TypeMeta:   metav1.TypeMeta{APIVersion: arbiterv1alpha1.SchemeGroupVersion.String(), Kind: "RemoteArbiter"},
		ObjectMeta: metav1.ObjectMeta{Name: string(s.Name), Namespace: arbiterNamespace},
		Spec: arbiterv1alpha1.RemoteArbiterSpec{
			CephCluster:   arbiterv1alpha1.NamespacedReference{Namespace: rookNamespace, Name: string(s.Name)},
			RemoteCluster: arbiterv1alpha1.RemoteClusterConfiguration{Name: s.ArbiterCluster},
			MonIDPrefix:   monIDPrefix(s.Name),
		},
	})
	if err != nil {
		return false, "", err
	}
	desired[resourceArbiter] = &resource.DesiredComposed{Resource: remote.ReadyWhen(pc+"-arbiter", pc, ra.Object, stateReady)}

	if markReady(observed, desired, resourceArbiterKubeconfig, resourceArbiterRemoteCluster, resourceArbiter) {
		mon, _ := observed[resourceArbiter].Resource.GetString("status.atProvider.manifest.status.monId")
		return true, fmt.Sprintf("monitor %s runs in cluster %s", mon, s.ArbiterCluster), nil
	}
	msg := fmt.Sprintf("waiting for the arbiter monitor in cluster %s", s.ArbiterCluster)
	if o, ok := observed[resourceArbiter]; ok {
		if m, _ := o.Resource.GetString("status.atProvider.manifest.status.message"); m != "" {
			msg += ": " + m
		}
	}
	return false, msg, nil
}

// markReady marks the desired resources that are observed ready, and
// reports whether all of them are.
func markReady(observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed, names ...resource.Name) bool {
	all := true
	for _, n := range names {
		if function.ObservedReady(observed, n) {
			desired[n].Ready = resource.ReadyTrue
			continue
		}
		all = false
	}
	return all
}

// composeArbiterUsage keeps the arbiter cluster while this pool exists:
// core's webhook refuses to delete it until the pool — and with it the
// monitor's objects there — is gone.
func composeArbiterUsage(xr *v1alpha1.XStorageCluster, arbiter pool.Namesake, desired map[resource.Name]*resource.DesiredComposed) error {
	gv := v1alpha1.SchemeGroupVersion.String()
	cu, err := function.Composed(&protectionv1beta1.ClusterUsage{
		TypeMeta: metav1.TypeMeta{APIVersion: protectionv1beta1.SchemeGroupVersion.String(), Kind: protectionv1beta1.ClusterUsageKind},
		Spec: protectionv1beta1.ClusterUsageSpec{
			Of:             protectionv1beta1.Resource{APIVersion: gv, Kind: v1alpha1.XControlPlaneClusterKind, ResourceRef: &protectionv1beta1.ResourceRef{Name: arbiter.Composite}},
			By:             &protectionv1beta1.Resource{APIVersion: gv, Kind: v1alpha1.XStorageClusterKind, ResourceRef: &protectionv1beta1.ResourceRef{Name: xr.GetName()}},
			Reason:         ptr.To(fmt.Sprintf("stretched storage pool %s runs its arbiter monitor in control-plane cluster %s", xr.Spec.Name, xr.Spec.ArbiterCluster)),
			ReplayDeletion: ptr.To(true),
		},
	})
	if err != nil {
		return err
	}
	// A usage protects; it serves nothing the pool waits on.
	desired[resourceArbiterUsage] = &resource.DesiredComposed{Resource: cu, Ready: resource.ReadyTrue}
	return nil
}
