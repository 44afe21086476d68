// Package pool composes what every cluster-backed composite needs, in order:
// its Gardener Shoot; then, once Gardener reports the Shoot ready, access to
// the Shoot's cluster — a ShootKubeconfig of our provider that keeps a fresh
// admin kubeconfig in a Secret, and a provider-kubernetes ProviderConfig that
// reads it, under a name other compositions can derive to place objects in
// the cluster. A step is only composed once the step before it is observed
// ready, so nothing is asked of a cluster that does not exist yet.
package pool

import (
	"fmt"
	"strings"
	"time"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/resource/composed"
	"github.com/crossplane/function-sdk-go/response"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/c5c3/consumer-plane/apis/consumer/v1alpha1"
	gardenerv1alpha1 "github.com/c5c3/consumer-plane/apis/gardener/v1alpha1"
	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	ironcorev1alpha1 "github.com/c5c3/consumer-plane/apis/ironcore/v1alpha1"
	kubernetesv1alpha1 "github.com/c5c3/consumer-plane/apis/kubernetes/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/function"
	"github.com/c5c3/consumer-plane/internal/gardener"
)

func init() {
	// composed.From looks up the GVKs of typed objects in this scheme.
	for _, add := range []func(*runtime.Scheme) error{gardencorev1beta1.AddToScheme, gardenerv1alpha1.AddToScheme, ironcorev1alpha1.AddToScheme} {
		if err := add(composed.Scheme); err != nil {
			panic(err)
		}
	}
}

var errDedicatedWithoutTenants = errors.New("spec.allowedTenants must name the tenant namespace(s) a dedicated pool is for")

// Names of the composed resources, stable across releases: Crossplane matches
// desired and observed resources by them.
const (
	ResourceShoot          resource.Name = "shoot"
	ResourceKubeconfig     resource.Name = "kubeconfig"
	ResourceProviderConfig resource.Name = "provider-config"
	// ResourceSecretsProviderConfig is this project's provider's
	// ProviderConfig of the cluster (kubernetes.provider.c5c3.io, of the
	// same name), through which SecretCopies write keys there.
	ResourceSecretsProviderConfig resource.Name = "secrets-provider-config"
)

// Conditions the composite and its claim carry, in the order a cluster
// reaches them.
const (
	ConditionShootReady  = "ShootReady"
	ConditionAccessReady = "AccessReady"
)

// ReasonRefused is ShootReady's reason, and its Warning event's, while
// Gardener refuses the Shoot.
const ReasonRefused = "Refused"

// Kind of cluster, which prefixes the name of its access objects.
type Kind string

// Kinds of cluster.
const (
	KindControlPlane Kind = "control-plane"
	KindHypervisor   Kind = "hypervisor"
	KindStorage      Kind = "storage"
)

// ProviderConfigName is the name of the provider-kubernetes ProviderConfig
// that places objects in a cluster: other compositions derive it from the
// kind and name of the cluster they consume.
func ProviderConfigName(k Kind, name string) string {
	return fmt.Sprintf("%s-%s", strings.ReplaceAll(string(k), "-", ""), name)
}

// Access says where the access objects of a cluster go.
type Access struct {
	Kind Kind
	// Name of the cluster (a pool's spec.name, a control-plane cluster's
	// claim name).
	Name string
	// SecretNamespace holds the kubeconfig Secret.
	SecretNamespace string
}

// ProviderConfigName of the cluster.
func (a Access) ProviderConfigName() string { return ProviderConfigName(a.Kind, a.Name) }

// SecretName of the kubeconfig Secret.
func (a Access) SecretName() string { return a.ProviderConfigName() + "-kubeconfig" }

// State is how far a cluster is.
type State struct {
	Shoot       gardener.Readiness
	ClusterName string
	// ShootName is the name of the cluster's Shoot in the Gardener project
	// (gardener.ShootName), which may differ from the cluster's name.
	ShootName string
	// AccessReady is set once the kubeconfig Secret is kept fresh.
	AccessReady   bool
	AccessMessage string
	// Inventory is the verdict on the pool's bare-metal servers; nil for
	// clusters that are not pools.
	Inventory *Inventory
	// Withheld is set when the Shoot is not composed because the inventory
	// cannot provide it or Gardener refused it.
	Withheld bool
	// Refusal is Gardener's refusal of the Shoot, while it holds.
	Refusal *v1alpha1.ShootRefusal
	// Refused is set when the function itself refuses to make the Shoot:
	// its machine type is not one the CloudProfile offers (see
	// Landscape.Unoffered).
	Refused bool
	// Zones the cluster's nodes are spread over (status.zones).
	Zones []string
}

// Ready reports whether the cluster exists and can be reached.
func (s State) Ready() bool { return s.Shoot.Ready && s.AccessReady }

// Placing reports whether a function composes its objects in the cluster:
// once it is Ready, and from then on whatever its Shoot's health or its
// access say (the cluster's layer composed is the mark), so that a node
// NotReady or a kubeconfig that cannot be refreshed for a while deletes
// nothing of what runs there.
func (s State) Placing(observed map[resource.Name]resource.ObservedComposed) bool {
	return s.Ready() || Placed(observed)
}

// Placed says whether anything of the cluster's layer was composed: the
// cluster was reached before.
func Placed(observed map[resource.Name]resource.ObservedComposed) bool {
	return Kept(observed, ResourceLayer, ResourceLayerAccess)
}

// Kept says whether any of names was composed before: a stage a function
// keeps composing once it exists, whatever the stage before it says now.
func Kept(observed map[resource.Name]resource.ObservedComposed, names ...resource.Name) bool {
	for _, n := range names {
		if _, ok := observed[n]; ok {
			return true
		}
	}
	return false
}

// Compose adds the Shoot to the desired resources and, once the observed
// Shoot is ready, the objects that give access to its cluster.
func Compose(observed map[resource.Name]resource.ObservedComposed, desired map[resource.Name]*resource.DesiredComposed, shoot *gardencorev1beta1.Shoot, a Access) (State, error) {
	cd, err := function.Composed(shoot)
	if err != nil {
		return State{}, err
	}
	desired[ResourceShoot] = &resource.DesiredComposed{Resource: cd}

	o, ok := observed[ResourceShoot]
	if !ok {
		return State{
			Shoot:         gardener.Readiness{Message: "the Shoot is being created"},
			AccessMessage: "waiting for the Shoot",
		}, nil
	}
	obs := &gardencorev1beta1.Shoot{}
	if err := function.FromObject(o.Resource.UnstructuredContent(), "Shoot "+o.Resource.GetName(), obs); err != nil {
		return State{}, err
	}
	st := State{Shoot: gardener.ReadinessOf(obs), ClusterName: obs.Status.TechnicalID}
	if !st.Shoot.Ready {
		st.AccessMessage = "waiting for the Shoot"
		// A cluster reached before keeps its access while its Shoot is
		// unhealthy (a node NotReady, a failed reconcile): what a function
		// stops composing, Crossplane deletes, and everything composed in
		// the cluster goes through this access.
		if _, reached := observed[ResourceKubeconfig]; !reached {
			return st, nil
		}
	} else {
		desired[ResourceShoot].Ready = resource.ReadyTrue
	}

	kc, err := function.Composed(kubeconfig(shoot, a))
	if err != nil {
		return State{}, err
	}
	desired[ResourceKubeconfig] = &resource.DesiredComposed{Resource: kc}
	spc, err := function.Composed(secretsProviderConfig(a))
	if err != nil {
		return State{}, err
	}
	desired[ResourceProviderConfig] = &resource.DesiredComposed{Resource: providerConfig(a)}
	desired[ResourceSecretsProviderConfig] = &resource.DesiredComposed{Resource: spc}
	// A ProviderConfig reports no readiness of its own: it is ready once it
	// exists, and usable once the Secret it reads is.
	for _, r := range []resource.Name{ResourceProviderConfig, ResourceSecretsProviderConfig} {
		if _, ok := observed[r]; ok {
			desired[r].Ready = resource.ReadyTrue
		}
	}

	okc, ok := observed[ResourceKubeconfig]
	if !ok {
		st.AccessMessage = "the ShootKubeconfig is being created"
		return st, nil
	}
	c := okc.Resource.GetCondition(xpv2.TypeReady)
	if c.Status != corev1.ConditionTrue {
		st.AccessMessage = fmt.Sprintf("waiting for ShootKubeconfig %s to write Secret %s/%s", a.ProviderConfigName(), a.SecretNamespace, a.SecretName())
		if c.Message != "" {
			st.AccessMessage += ": " + c.Message
		}
		return st, nil
	}
	desired[ResourceKubeconfig].Ready = resource.ReadyTrue
	st.AccessReady = true
	st.AccessMessage = fmt.Sprintf("ProviderConfig %s reaches the cluster", a.ProviderConfigName())
	return st, nil
}

// SetConditions reports the state on the composite and its claim. Call it
// after the desired composite is set: a pool whose Shoot is withheld is not
// ready, though everything it composed so far (its inventory) is.
func (s State) SetConditions(rsp *fnv1.RunFunctionResponse) {
	s.Inventory.SetCondition(rsp)
	if s.Withheld && rsp.GetDesired().GetComposite() != nil {
		rsp.Desired.Composite.Ready = fnv1.Ready_READY_FALSE
	}
	switch {
	case s.Shoot.Ready:
		response.ConditionTrue(rsp, ConditionShootReady, "Available").WithMessage(s.Shoot.Message).TargetCompositeAndClaim()
	case s.Refusal != nil, s.Refused:
		response.ConditionFalse(rsp, ConditionShootReady, ReasonRefused).WithMessage(s.Shoot.Message).TargetCompositeAndClaim()
	case s.Shoot.Failed:
		response.ConditionFalse(rsp, ConditionShootReady, "Failed").WithMessage(s.Shoot.Message).TargetCompositeAndClaim()
	default:
		response.ConditionFalse(rsp, ConditionShootReady, "Creating").WithMessage(s.Shoot.Message).TargetCompositeAndClaim()
	}
	if s.AccessReady {
		response.ConditionTrue(rsp, ConditionAccessReady, "Available").WithMessage(s.AccessMessage).TargetCompositeAndClaim()
		return
	}
	response.ConditionFalse(rsp, ConditionAccessReady, "Waiting").WithMessage(s.AccessMessage).TargetCompositeAndClaim()
}

func kubeconfig(shoot *gardencorev1beta1.Shoot, a Access) *gardenerv1alpha1.ShootKubeconfig {
	return &gardenerv1alpha1.ShootKubeconfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: gardenerv1alpha1.SchemeGroupVersion.String(), Kind: gardenerv1alpha1.ShootKubeconfigKind},
		ObjectMeta: metav1.ObjectMeta{Name: a.ProviderConfigName()},
		Spec: gardenerv1alpha1.ShootKubeconfigSpec{
			ClusterManagedResourceSpec: xpv2.ClusterManagedResourceSpec{
				WriteConnectionSecretToReference: &xpv2.SecretReference{Name: a.SecretName(), Namespace: a.SecretNamespace},
			},
			ForProvider: gardenerv1alpha1.ShootKubeconfigParameters{
				ShootRef: gardenerv1alpha1.ShootReference{Name: shoot.GetName(), Namespace: shoot.GetNamespace()},
			},
		},
	}
}

// providerConfig is a provider-kubernetes (v1.0, cluster scoped)
// ProviderConfig that reads the kubeconfig Secret. It is unstructured: the
// provider's module pins an older crossplane-runtime than this project.
func providerConfig(a Access) *composed.Unstructured {
	pc := composed.New()
	pc.SetAPIVersion("kubernetes.crossplane.io/v1alpha1")
	pc.SetKind("ProviderConfig")
	pc.SetName(a.ProviderConfigName())
	pc.Object["spec"] = map[string]any{
		"credentials": map[string]any{
			"source": "Secret",
			"secretRef": map[string]any{
				"namespace": a.SecretNamespace,
				"name":      a.SecretName(),
				"key":       gardenerv1alpha1.ConnectionSecretKeyKubeconfig,
			},
		},
	}
	return pc
}

// secretsProviderConfig is this project's provider's ProviderConfig that
// reads the same kubeconfig Secret, for the SecretCopies that write keys
// into the cluster (remote.SecretCopy).
func secretsProviderConfig(a Access) *kubernetesv1alpha1.ProviderConfig {
	return &kubernetesv1alpha1.ProviderConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: kubernetesv1alpha1.SchemeGroupVersion.String(), Kind: "ProviderConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: a.ProviderConfigName()},
		Spec: kubernetesv1alpha1.ProviderConfigSpec{Credentials: kubernetesv1alpha1.ClusterCredentials{
			Source: xpv2.CredentialsSourceSecret,
			CommonCredentialSelectors: xpv2.CommonCredentialSelectors{SecretRef: &xpv2.SecretKeySelector{
				SecretReference: xpv2.SecretReference{Namespace: a.SecretNamespace, Name: a.SecretName()},
				Key:             gardenerv1alpha1.ConnectionSecretKeyKubeconfig,
			}},
		}},
	}
}

// Status is the composite's status as far as this package knows it: the
// phase, the Shoot's name, Gardener's technical ID and, for a pool, its counted inventory.
// Functions add what is theirs.
func (s State) Status() map[string]any {
	status := map[string]any{"phase": s.Phase(), "clusterName": s.ClusterName}
	if s.ShootName != "" {
		status["shootName"] = s.ShootName
	}
	if len(s.Zones) > 0 {
		status["zones"] = s.Zones
	}
	if inv := s.Inventory.Status(); inv != nil {
		status["inventory"] = inv
	}
	if r := s.Refusal; r != nil {
		status["shootRefusal"] = map[string]any{"message": r.Message, "fingerprint": r.Fingerprint, "refusedAt": r.RefusedAt.UTC().Format(time.RFC3339)}
	}
	return status
}

// Phase of the cluster: Failed when Gardener gave up or refused the Shoot,
// Ready once it can be reached, Provisioning until then.
func (s State) Phase() string {
	switch {
	case s.Shoot.Failed, s.Refusal != nil, s.Refused:
		return "Failed"
	case s.Ready():
		return "Ready"
	default:
		return "Provisioning"
	}
}

// Settings decodes the function's ShootSettings input, defaulted and
// validated.
func Settings(req *fnv1.RunFunctionRequest) (*input.ShootSettings, error) {
	s := &input.ShootSettings{}
	if err := function.Input(req, s); err != nil {
		return nil, err
	}
	s.Default()
	return s, errors.Wrap(s.Validate(), "invalid ShootSettings in the Composition")
}

// Spec is what a function derives from its composite's spec: the cluster to
// ask Gardener for, whose name also names its access objects.
type Spec struct {
	Cluster gardener.Cluster
	Kind    Kind
	// Inventory: the cluster is a pool of bare-metal servers, whose
	// ServerInventory is composed and must be able to provide its (single)
	// worker pool before its Shoot is created.
	Inventory bool
	// MachineField is the claim's field that names the workers' machine
	// type (spec.ironcore.machineClass, spec.machineType), for the message
	// when the CloudProfile does not offer it.
	MachineField string
	// CapacityGiB is the raw capacity a storage pool is asked for (0:
	// none): its worker's minimum is sized from the inventory's drives for
	// it (see size).
	CapacityGiB int64
}

// Run is the part every cluster function shares: it decodes the observed
// composite into xr and the ShootSettings input, requires the landscape's
// CloudProfile, asks spec (which should default the cluster's zones from the
// Landscape and validate xr) for the cluster, and composes the Shoot and,
// once it is ready, access to it. Run returns a nil Result and no error
// while Crossplane has yet to supply what spec needs: the function then
// returns its response as it is, and Crossplane calls it again. Any error is
// meant for a Fatal result: it names the field at fault.
func Run(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, xr any, spec func(Landscape) (Spec, error)) (*Result, error) {
	if err := function.ObservedComposite(req, xr); err != nil {
		return nil, err
	}
	settings, err := Settings(req)
	if err != nil {
		return nil, err
	}
	requireCloudProfile(rsp, settings)
	self := NamesakeOf(req.GetObserved().GetComposite().GetResource())
	requireNamesakes(rsp, self)
	if err := refuseNamesake(req, rsp, self); err != nil {
		return nil, err
	}
	land, err := landscapeOf(req, settings)
	if err != nil {
		return nil, err
	}
	s, err := spec(land)
	if errors.Is(err, errCloudProfilePending) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return nil, errors.Wrap(err, "cannot get desired composed resources")
	}
	observed, err := request.GetObservedComposedResources(req)
	if err != nil {
		return nil, errors.Wrap(err, "cannot get observed composed resources")
	}
	// A Shoot cannot be renamed: one that exists keeps its name, whatever
	// gardener.ShootName would derive now.
	if o, ok := observed[ResourceShoot]; ok && o.Resource.GetName() != "" {
		s.Cluster.ShootName = o.Resource.GetName()
	}
	access := Access{Kind: s.Kind, Name: s.Cluster.Name, SecretNamespace: settings.AccessSecretNamespace}
	var inv *Inventory
	if s.Inventory && len(s.Cluster.Workers) > 0 {
		// Before the Shoot is built: sizing may raise its worker's minimum.
		if inv, err = composeInventory(observed, desired, &s.Cluster.Workers[0], s.CapacityGiB, settings.Inventory.ProviderConfigName, access); err != nil {
			return nil, err
		}
	}
	shoot, err := gardener.NewShoot(settings, s.Cluster)
	if err != nil {
		return nil, errors.Wrap(err, "cannot build the Shoot")
	}
	var st State
	_, exists := observed[ResourceShoot]
	var refused *v1alpha1.ShootRefusal
	if !exists {
		var isNew bool
		if refused, isNew, err = refusal(req, shoot, land.CloudProfile()); err != nil {
			return nil, err
		}
		if isNew {
			response.Warning(rsp, errors.New(refusedMessage(refused))).WithReason(ReasonRefused).TargetCompositeAndClaim()
		}
	}
	unoffered := ""
	if !exists {
		unoffered = land.Unoffered(s.Cluster.Workers, s.MachineField)
	}
	switch {
	case refused != nil:
		st = State{Shoot: gardener.Readiness{Message: refusedMessage(refused)}, Refusal: refused, AccessMessage: "waiting for the Shoot", Withheld: true}
	case unoffered != "":
		// Refused before a Shoot is made, naming the claim's field: Gardener
		// would refuse it naming the Shoot's. A Shoot that exists is left as
		// it is, whatever the CloudProfile says later.
		st = State{Shoot: gardener.Readiness{Message: "the Shoot is not created: " + unoffered}, AccessMessage: "waiting for the Shoot", Withheld: true, Refused: true}
	case inv != nil && inv.Blocks() && !exists:
		st = State{Shoot: gardener.Readiness{Message: "the Shoot is not created yet: " + inv.Message}, AccessMessage: "waiting for the Shoot", Withheld: true}
	default:
		if st, err = Compose(observed, desired, shoot, access); err != nil {
			return nil, err
		}
	}
	st.Inventory = inv
	st.ShootName = shoot.GetName()
	if len(s.Cluster.Workers) > 0 {
		st.Zones = s.Cluster.Workers[0].Zones
	}
	return &Result{Observed: observed, Desired: desired, State: st, Access: access, Settings: settings, Landscape: land}, nil
}

// Result of Run: what to set in the response, and how far the cluster is.
type Result struct {
	// Observed are the composed resources as Crossplane observed them, for
	// the objects a function adds after the pool's own.
	Observed  map[resource.Name]resource.ObservedComposed
	Desired   map[resource.Name]*resource.DesiredComposed
	State     State
	Access    Access
	Settings  *input.ShootSettings
	Landscape Landscape
}
