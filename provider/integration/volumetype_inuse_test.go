package integration

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cinderv1alpha1 "github.com/c5c3/consumer-plane/apis/cinder/v1alpha1"
)

// TestIntegrationVolumeTypeInUseIsKept: a Cinder volume type that a volume
// uses is not deleted with its resource (Cinder refuses, and the resource
// says why and stays) until the volume is gone; then it goes. The tenant's
// volumes are never taken with a volume type (#39 §4).
func TestIntegrationVolumeTypeInUseIsKept(t *testing.T) {
	h := withOpenStack(t)
	ctx := context.Background()
	cinder := h.clients(t).cinder
	name := h.name("in-use")
	mg := &cinderv1alpha1.VolumeType{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: cinderv1alpha1.VolumeTypeSpec{
		ClusterManagedResourceSpec: managedBy(pcLocal),
		ForProvider:                cinderv1alpha1.VolumeTypeParameters{Name: name, BackendName: "ceph-st-pool-a"},
	}}
	h.create(t, mg)
	h.waitReady(t, mg)
	id := meta.GetExternalName(mg)
	volume := fakeVolume(t, id, h.name("tenant-project"), "tenant-volume-1")

	h.delete(t, mg)
	h.waitSyncError(t, mg, "volumes of this type must be gone first")
	if v, err := cinder.GetVolumeType(ctx, id); err != nil || v == nil {
		t.Fatalf("the volume type a volume uses went with its resource: %v", err)
	}

	removeFakeVolume(t, volume)
	h.waitGone(t, mg)
	if _, err := cinder.GetVolumeType(ctx, id); err == nil {
		t.Fatal("the volume type is still in Cinder once its volume is gone and its resource deleted")
	}
}

// fakeVolume adds a volume of volume type typeID to the local Cinder's
// database (local/openstack/fake-volume.py) and returns its UUID.
func fakeVolume(t *testing.T, typeID, project, name string) string {
	t.Helper()
	out, err := exec.Command("/usr/bin/python3", "../../local/openstack/fake-volume.py", "add", typeID, project, name).CombinedOutput()
	if err != nil {
		t.Fatalf("fake volume of type %s: %v: %s", typeID, err, out)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		_ = exec.Command("/usr/bin/python3", "../../local/openstack/fake-volume.py", "remove", id).Run()
	})
	return id
}

func removeFakeVolume(t *testing.T, id string) {
	t.Helper()
	if out, err := exec.Command("/usr/bin/python3", "../../local/openstack/fake-volume.py", "remove", id).CombinedOutput(); err != nil {
		t.Fatal(fmt.Errorf("removing fake volume %s: %w: %s", id, err, out))
	}
}
