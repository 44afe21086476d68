package main

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crossplane/crossplane/apis/v2/pkg/v1beta1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func runtimeConfig(pod *corev1.PodSecurityContext, ctr corev1.Container) *v1beta1.DeploymentRuntimeConfig {
	rc := &v1beta1.DeploymentRuntimeConfig{}
	rc.Name = "rc"
	rc.Spec.DeploymentTemplate = &v1beta1.DeploymentTemplate{Spec: &appsv1.DeploymentSpec{}}
	rc.Spec.DeploymentTemplate.Spec.Template.Spec.SecurityContext = pod
	rc.Spec.DeploymentTemplate.Spec.Template.Spec.Containers = []corev1.Container{ctr}
	return rc
}

func TestFromRuntimeConfig(t *testing.T) {
	cases := map[string]struct {
		rc      *v1beta1.DeploymentRuntimeConfig
		args    []string
		env     []string
		uid     uint32
		wantErr string
	}{
		"no runtime config: core's default user": {uid: defaultUser},
		"the package-runtime container's args and env": {
			rc:   runtimeConfig(nil, corev1.Container{Name: containerName, Args: []string{"--sanitize-secrets"}, Env: []corev1.EnvVar{{Name: "A", Value: "b"}}}),
			args: []string{"--sanitize-secrets"}, env: []string{"A=b"}, uid: defaultUser,
		},
		"another container is not the package's": {
			rc:  runtimeConfig(nil, corev1.Container{Name: "sidecar", Args: []string{"x"}}),
			uid: defaultUser,
		},
		"the container's user over the pod's": {
			rc:  runtimeConfig(&corev1.PodSecurityContext{RunAsUser: ptr.To(int64(1000))}, corev1.Container{Name: containerName, SecurityContext: &corev1.SecurityContext{RunAsUser: ptr.To(int64(65532))}}),
			uid: 65532,
		},
		"runAsNonRoot with user 0 is refused, as a kubelet refuses it": {
			rc:      runtimeConfig(&corev1.PodSecurityContext{RunAsUser: ptr.To(int64(0)), RunAsNonRoot: ptr.To(true)}, corev1.Container{Name: containerName}),
			wantErr: "runAsNonRoot",
		},
		"env from a source is refused by name": {
			rc:      runtimeConfig(nil, corev1.Container{Name: containerName, Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{}}}}),
			wantErr: "env TOKEN",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &pod{uid: defaultUser, gid: defaultUser}
			err := (&cluster{}).fromRuntimeConfig(tc.rc, p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(p.args, " ") != strings.Join(tc.args, " ") || strings.Join(p.env, " ") != strings.Join(tc.env, " ") || p.uid != tc.uid {
				t.Errorf("args %v env %v uid %d, want %v %v %d", p.args, p.env, p.uid, tc.args, tc.env, tc.uid)
			}
		})
	}
}

func TestUnpackEntryStaysInRoot(t *testing.T) {
	root := t.TempDir()
	err := unpackEntry(root, &tar.Header{Name: "../../etc/passwd", Typeflag: tar.TypeReg, Mode: 0o444}, strings.NewReader("x"))
	// A leading ../ is cleaned against the image's root, as a container
	// runtime does: the file lands inside root, never beside it.
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "etc", "passwd")); err != nil {
		t.Errorf("the entry did not land inside the root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(root)), "etc", "passwd")); err == nil {
		t.Error("the entry escaped the root")
	}
}

func TestUnpackEntryRefusesSymlinkOut(t *testing.T) {
	root := t.TempDir()
	if err := unpackEntry(root, &tar.Header{Name: "lib", Typeflag: tar.TypeSymlink, Linkname: "/"}, nil); err != nil {
		t.Fatal(err)
	}
	err := unpackEntry(root, &tar.Header{Name: "lib/x", Typeflag: tar.TypeReg, Mode: 0o444}, strings.NewReader("x"))
	if err == nil || !strings.Contains(err.Error(), "symlink out of its root") {
		t.Fatalf("err = %v, want the write through lib -> / refused", err)
	}
}

func TestLookPath(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr/local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "usr/local/bin/provider"), nil, 0o555); err != nil {
		t.Fatal(err)
	}
	if p, err := lookPath(root, "provider", nil); err != nil || p != "/usr/local/bin/provider" {
		t.Errorf("lookPath = %q, %v; want /usr/local/bin/provider", p, err)
	}
	if _, err := lookPath(root, "provider", []string{"PATH=/bin"}); err == nil {
		t.Error("found an entrypoint outside the image's PATH")
	}
	if p, _ := lookPath(root, "/function", nil); p != "/function" {
		t.Errorf("an absolute entrypoint became %q", p)
	}
}
