package render

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/c5c3/consumer-plane/test/kubetest"
)

// arbiterDoesOnlyItsJob applies to a real kube-apiserver what a rendered
// stretched pool places in its arbiter cluster (the Objects of ProviderConfig
// arbiterPC: the monitor's namespace, and the external-arbiter-operator's
// ServiceAccount, Role and RoleBinding), then acts as that ServiceAccount
// (impersonated): it may manage the monitor's Deployment, Service, ConfigMap
// and Secret in that namespace, and nothing else of the cluster that runs
// every tenant's control plane.
func arbiterDoesOnlyItsJob(t *testing.T, rendered []byte, arbiterPC string) {
	t.Helper()
	ctx := context.Background()
	objs, err := ParseObjects(rendered)
	if err != nil {
		t.Fatal(err)
	}
	admin := kubetest.Client(t)
	var namespace, serviceAccount string
	for _, o := range objs {
		if o.GetKind() != "Object" {
			continue
		}
		if pc, _, _ := unstructured.NestedString(o.Object, "spec", "providerConfigRef", "name"); pc != arbiterPC {
			continue
		}
		m, _, _ := unstructured.NestedMap(o.Object, "spec", "forProvider", "manifest")
		u := &unstructured.Unstructured{Object: m}
		switch u.GetKind() {
		case "Namespace":
			namespace = u.GetName()
			t.Cleanup(func() { _ = admin.Delete(ctx, u) })
		case "ServiceAccount":
			serviceAccount = u.GetName()
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			t.Cleanup(func() { _ = admin.Delete(ctx, u) })
		}
		if err := admin.Create(ctx, u); err != nil {
			t.Fatalf("the arbiter cluster refuses %s %s of Object %s: %v", u.GetKind(), u.GetName(), o.GetName(), err)
		}
	}
	if namespace == "" || serviceAccount == "" {
		t.Fatalf("the render places no namespace and ServiceAccount in the arbiter cluster (ProviderConfig %s)", arbiterPC)
	}

	cfg := rest.CopyConfig(kubetest.Config(t))
	cfg.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + serviceAccount,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	as, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	meta := metav1.ObjectMeta{Name: "mon-arbiter"}
	labels := map[string]string{"app": "mon-arbiter"}
	deployment := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "mon", Image: "quay.io/ceph/ceph:v19.2.3"}}}},
	}}
	create := metav1.CreateOptions{}

	// Its job: the monitor's objects, in the monitor's namespace.
	for what, do := range map[string]func() error{
		"create the monitor's Deployment": func() error {
			_, err := as.AppsV1().Deployments(namespace).Create(ctx, deployment, create)
			return err
		},
		"create the monitor's Service": func() error {
			_, err := as.CoreV1().Services(namespace).Create(ctx, &corev1.Service{ObjectMeta: meta,
				Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "msgr2", Port: 3300}}}}, create)
			return err
		},
		"create the monitor's ConfigMap": func() error {
			_, err := as.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta}, create)
			return err
		},
		"create the monitor's keyring Secret": func() error {
			_, err := as.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: meta}, create)
			return err
		},
		"list its namespace's Secrets": func() error {
			_, err := as.CoreV1().Secrets(namespace).List(ctx, metav1.ListOptions{})
			return err
		},
	} {
		if err := do(); err != nil {
			t.Errorf("the arbiter's ServiceAccount cannot %s in %s: %v", what, namespace, err)
		}
	}
	if err := as.AppsV1().Deployments(namespace).Delete(ctx, deployment.Name, metav1.DeleteOptions{}); err != nil {
		t.Errorf("the arbiter's ServiceAccount cannot delete the monitor's Deployment: %v", err)
	}

	// Nothing else.
	for what, do := range map[string]func() error{
		"read kube-system's Secrets": func() error {
			_, err := as.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{})
			return err
		},
		"list every namespace's Secrets": func() error {
			_, err := as.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		},
		"create a Deployment in another namespace": func() error {
			_, err := as.AppsV1().Deployments("default").Create(ctx, deployment, create)
			return err
		},
		"create a namespace": func() error {
			_, err := as.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "arbiter-escape"}}, create)
			return err
		},
		"list nodes": func() error {
			_, err := as.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err
		},
		"create a Pod (a Deployment's are the controller's)": func() error {
			_, err := as.CoreV1().Pods(namespace).Create(ctx, &corev1.Pod{ObjectMeta: meta, Spec: deployment.Spec.Template.Spec}, create)
			return err
		},
		"grant itself more (a RoleBinding to cluster-admin)": func() error {
			_, err := as.RbacV1().RoleBindings(namespace).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta,
				RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: serviceAccount, Namespace: namespace}}}, create)
			return err
		},
		"read (let alone change) its own Role": func() error {
			_, err := as.RbacV1().Roles(namespace).Get(ctx, serviceAccount, metav1.GetOptions{})
			return err
		},
	} {
		if err := do(); !kerrors.IsForbidden(err) {
			t.Errorf("the arbiter's ServiceAccount may %s: %v, want Forbidden", what, err)
		}
	}

	// The pool's RemoteArbiter (composed once the token exists, so not in
	// this render; functions/storagecluster's tests check its spec) names
	// the monitor <pool>-<letter>: the operator's ID prefix is the pool's.
	monitorRunsOnlyAsItself(ctx, t, namespace, strings.TrimPrefix(namespace, "ceph-arbiter-")+"-")
}

// monitorRunsOnlyAsItself checks, with the cluster's own admission, what a
// pod in the monitor's namespace may be, whoever creates it (the Deployment
// controller, for the arbiter's Deployments): what the external-arbiter-
// operator makes of Rook's monitor is admitted (its data in
// /var/lib/rook/mon-<monIDPrefix>a/data); a privileged pod, one on the
// host's network, one mounting the host's root or another pool's monitor
// data is Forbidden. Dry runs, as an admin, so that only the namespace's
// policy can refuse them.
func monitorRunsOnlyAsItself(ctx context.Context, t *testing.T, namespace, monIDPrefix string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(kubetest.Config(t))
	if err != nil {
		t.Fatal(err)
	}
	dry := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	monID := monIDPrefix + "a"
	data := "/var/lib/rook/mon-" + monID + "/data"
	monitor := func(edit func(*corev1.PodSpec)) *corev1.Pod {
		spec := corev1.PodSpec{
			Containers: []corev1.Container{{Name: "mon", Image: "quay.io/ceph/ceph:v19.2.3",
				SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"NET_RAW"}}},
				VolumeMounts:    []corev1.VolumeMount{{Name: "ceph-daemon-data", MountPath: "/var/lib/ceph/mon/ceph-" + monID}}}},
			Volumes: []corev1.Volume{{Name: "ceph-daemon-data", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: data}}}},
		}
		if edit != nil {
			edit(&spec)
		}
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "mon-arbiter-a", Namespace: namespace}, Spec: spec}
	}
	// The policy is enforced once the API server has compiled it.
	kubetest.Until(t, "the monitor's namespace refuses a privileged pod", 30*time.Second, func() error {
		_, err := cs.CoreV1().Pods(namespace).Create(ctx, monitor(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Privileged = ptr.To(true) }), dry)
		if !kerrors.IsInvalid(err) && !kerrors.IsForbidden(err) {
			return fmt.Errorf("a privileged pod: %v, want refused", err)
		}
		return nil
	})
	// Nor a token of the operator's ServiceAccount that never expires:
	// its Role keeps Secrets there.
	token := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forever", Namespace: namespace,
		Annotations: map[string]string{corev1.ServiceAccountNameKey: "external-arbiter"}}, Type: corev1.SecretTypeServiceAccountToken}
	if _, err := cs.CoreV1().Secrets(namespace).Create(ctx, token, dry); !kerrors.IsForbidden(err) && !kerrors.IsInvalid(err) {
		t.Errorf("a token Secret of the arbiter's ServiceAccount is admitted in %s: %v", namespace, err)
	}
	if _, err := cs.CoreV1().Secrets(namespace).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "keyring", Namespace: namespace}}, dry); err != nil {
		t.Errorf("the monitor's keyring Secret is refused in %s: %v", namespace, err)
	}
	if _, err := cs.CoreV1().Pods(namespace).Create(ctx, monitor(nil), dry); err != nil {
		t.Errorf("the arbiter's monitor, as the external-arbiter-operator makes it, is refused in %s: %v", namespace, err)
	}
	for what, edit := range map[string]func(*corev1.PodSpec){
		"on the host's network":       func(s *corev1.PodSpec) { s.HostNetwork = true },
		"in the host's PID namespace": func(s *corev1.PodSpec) { s.HostPID = true },
		"mounting the host's root":    func(s *corev1.PodSpec) { s.Volumes[0].HostPath.Path = "/" },
		"mounting beyond its data": func(s *corev1.PodSpec) {
			s.Volumes[0].HostPath.Path = "/var/lib/rook/mon-" + monID + "/../../../../etc"
		},
		"mounting below a monitor's data, where a symlink may wait": func(s *corev1.PodSpec) {
			s.Volumes[0].HostPath.Path = data + "/escape"
		},
		// Every stretched pool's arbiter may run on the same control-plane
		// node: another pool's monitor data holds that pool's mon. key.
		"mounting another pool's monitor data": func(s *corev1.PodSpec) {
			s.Volumes[0].HostPath.Path = "/var/lib/rook/mon-st-pool-other-a/data"
		},
		"mounting a monitor's data under the operator's default prefix": func(s *corev1.PodSpec) {
			s.Volumes[0].HostPath.Path = "/var/lib/rook/mon-ext-a/data"
		},
		"mounting a Rook monitor's data (no prefix)": func(s *corev1.PodSpec) {
			s.Volumes[0].HostPath.Path = "/var/lib/rook/mon-a/data"
		},
		"mounting the data of its prefix with a longer suffix (another pool's prefix)": func(s *corev1.PodSpec) {
			s.Volumes[0].HostPath.Path = "/var/lib/rook/mon-" + monIDPrefix + "x-a/data"
		},
		"on a host port": func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 3300, HostPort: 3300}}
		},
		"with an unconfined seccomp profile": func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}}
		},
		"setting sysctls": func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{Sysctls: []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "0"}}}
		},
		"adding SYS_ADMIN": func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
		},
		"allowing privilege escalation": func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true)
		},
		"with an unconfined AppArmor profile": func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}}
		},
		"with a container's unconfined AppArmor profile": func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		},
		"naming its node": func(s *corev1.PodSpec) { s.NodeName = "control-plane-node-0" },
		"mounting a volume claim": func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "claim", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "another-pools-mon"}}})
		},
		"with a privileged init container": func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "init", Image: "busybox", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
		},
	} {
		_, err := cs.CoreV1().Pods(namespace).Create(ctx, monitor(edit), dry)
		if !kerrors.IsInvalid(err) && !kerrors.IsForbidden(err) {
			t.Errorf("a pod %s is admitted in the monitor's namespace %s: %v", what, namespace, err)
		}
	}
}
