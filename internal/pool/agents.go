package pool

import (
	"github.com/crossplane/function-sdk-go/resource"

	input "github.com/c5c3/consumer-plane/apis/input/v1alpha1"
	"github.com/c5c3/consumer-plane/internal/agentbundle"
	"github.com/c5c3/consumer-plane/internal/remote"
)

// AgentImages is where the Composition's input says the agents' images are
// pulled from (input.agentImages; the defaults: agentbundle's registry and
// the function's own version).
func AgentImages(s *input.ShootSettings) agentbundle.Images {
	return agentbundle.Images{Registry: s.AgentImages.Registry, Tag: s.AgentImages.Tag}
}

// PlaceAgents composes a pool's node agents into its cluster, once it can be
// reached: one provider-kubernetes Object per object of the agents' bundle
// (agentbundle, cluster/agents), their images pulled as images says. They
// do not gate the pool's readiness (the function marks them ready): a
// DaemonSet's rollout follows the nodes, not the pool's phase, and waiting on
// 17 Objects per pool kept pools from becoming Ready on Crossplane core
// v2.4.0 — their watch events opened core's circuit breaker and the composite
// was not reconciled again.
func PlaceAgents(desired map[resource.Name]*resource.DesiredComposed, a Access, set agentbundle.Set, images agentbundle.Images) error {
	objs, err := agentbundle.Objects(set, images)
	if err != nil {
		return err
	}
	pc := a.ProviderConfigName()
	for _, m := range objs {
		desired[resource.Name("agent-"+m.Name)] = &resource.DesiredComposed{Resource: remote.Created(pc+"-agent-"+m.Name, pc, m.Object), Ready: resource.ReadyTrue}
	}
	return nil
}
