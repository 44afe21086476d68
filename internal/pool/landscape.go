package pool

import (
	"fmt"
	"slices"
	"strings"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/gardener"
)

// RequirementCloudProfile is the landscape's Gardener CloudProfile (the
// ShootSettings' cloudProfile): its regions' zones are the zones of a
// cluster whose spec names none, and its machine types what a pool's
// machines offer.
const RequirementCloudProfile = "cloud-profile"

// errCloudProfilePending: the CloudProfile is required and Crossplane has
// not answered yet; it calls the function again with it.
var errCloudProfilePending = errors.New("waiting for Crossplane to supply the CloudProfile")

// requireCloudProfile asks Crossplane for the CloudProfile on every run, so
// that the requirements stay the same from one call to the next.
func requireCloudProfile(rsp *fnv1.RunFunctionResponse, s *input.ShootSettings) {
	ns := ""
	if s.CloudProfile.Kind == "NamespacedCloudProfile" {
		ns = s.ProjectNamespace
	}
	function.Require(rsp, RequirementCloudProfile, gardencorev1beta1.SchemeGroupVersion.String(), s.CloudProfile.Kind, s.CloudProfile.Name, ns)
}

// Landscape is what a cluster function reads of the landscape it runs in.
type Landscape struct {
	settings *input.ShootSettings
	// supplied: Crossplane answered the CloudProfile requirement (perhaps
	// with nothing).
	supplied bool
	// profile is the CloudProfile's spec (a NamespacedCloudProfile's
	// merged one); nil when it does not exist.
	profile *gardencorev1beta1.CloudProfileSpec
}

func landscapeOf(req *fnv1.RunFunctionRequest, s *input.ShootSettings) (Landscape, error) {
	l := Landscape{settings: s, supplied: function.Supplied(req, RequirementCloudProfile)}
	cps, err := function.Required(req, RequirementCloudProfile)
	if err != nil || len(cps) == 0 {
		return l, err
	}
	what := s.CloudProfile.Kind + " " + s.CloudProfile.Name
	if s.CloudProfile.Kind == "NamespacedCloudProfile" {
		ncp := &gardencorev1beta1.NamespacedCloudProfile{}
		if err := function.FromObject(cps[0].Resource.Object, what, ncp); err != nil {
			return l, err
		}
		l.profile = ncp.Status.CloudProfileSpec.DeepCopy()
		return l, nil
	}
	cp := &gardencorev1beta1.CloudProfile{}
	if err := function.FromObject(cps[0].Resource.Object, what, cp); err != nil {
		return l, err
	}
	l.profile = &cp.Spec
	return l, nil
}

// CloudProfile is the landscape's CloudProfile spec, or nil while it is not
// supplied or does not exist.
func (l Landscape) CloudProfile() *gardencorev1beta1.CloudProfileSpec { return l.profile }

// CloudProfileName says which CloudProfile the Composition names, for
// messages.
func (l Landscape) CloudProfileName() string {
	return l.settings.CloudProfile.Kind + " " + l.settings.CloudProfile.Name
}

// Unoffered says why the workers' machine type is not one the CloudProfile
// offers (a usable entry of its machineTypes), naming field and the machine
// types there are; "" when it is offered, or while the CloudProfile is not
// known (the zones wait for it, and Gardener checks the Shoot itself).
func (l Landscape) Unoffered(workers []gardener.Worker, field string) string {
	if l.profile == nil || field == "" {
		return ""
	}
	var offered []string
	for _, mt := range l.profile.MachineTypes {
		if mt.Usable == nil || *mt.Usable {
			offered = append(offered, mt.Name)
		}
	}
	for _, w := range workers {
		if slices.Contains(offered, w.MachineType) {
			continue
		}
		if len(offered) == 0 {
			return fmt.Sprintf("%s: %s offers no machine type; the platform adds them to its spec.machineTypes", field, l.CloudProfileName())
		}
		slices.Sort(offered)
		return fmt.Sprintf("%s: machine type %q is not offered by %s: name one of %s", field, w.MachineType, l.CloudProfileName(), strings.Join(offered, ", "))
	}
	return ""
}

// DefaultZones fills in the zones of a cluster whose spec names none: the
// zones its status recorded, so that they never change under a running
// cluster, else every zone of its region in the CloudProfile. The caller
// passes a pointer to its spec's zones and reads them afterwards.
func (l Landscape) DefaultZones(zones *[]string, recorded []string, region v1alpha1.Region) error {
	if len(*zones) > 0 {
		return nil
	}
	if len(recorded) > 0 {
		*zones = recorded
		return nil
	}
	if !l.supplied {
		return errCloudProfilePending
	}
	if l.profile == nil {
		return fmt.Errorf("spec.zones is empty and %s (the Composition's cloudProfile) does not exist to take the zones of region %q from: name the zones in spec.zones", l.CloudProfileName(), region)
	}
	var names []string
	for _, r := range l.profile.Regions {
		if r.Name != string(region) {
			continue
		}
		for _, z := range r.Zones {
			names = append(names, z.Name)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("spec.zones is empty and region %q has no zones in %s: name the zones in spec.zones, or use a region of the CloudProfile", region, l.CloudProfileName())
	}
	*zones = names
	return nil
}
