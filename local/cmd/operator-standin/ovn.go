package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"os/exec"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The cloud's OVN. The c5c3-operator runs OVN databases per cloud and
// publishes where they are in ConfigMap ovn-databases of the cloud's
// namespace (the contract the OpenStackCluster function reads); the stand-in
// publishes the local OVN of local/openstack instead (-ovn-nb,
// -ovn-sb), so every cloud shares it; with ssl: endpoints also a client
// certificate (ovntls.go).
//
// On every node of a hypervisor pool, ovn-controller registers the node as
// a Chassis in the cloud's Southbound database and the OVS agent announces
// the node's pool there as its availability zone. For its one node per
// hypervisor pool the stand-in registers that Chassis itself, with
// ovn-sbctl: encapsulation on a loopback address of its own, ovn-cms-options
// "enable-chassis-as-gw,availability-zones=<pool>". It is removed when the
// pool's cluster goes and when the stand-in stops. What it does not simulate:
// ovn-controller (no flows, no port bindings, no liveness), more than one
// node, a Southbound per cloud.

const ovnDatabasesConfigMap = "ovn-databases"

// ovnConfigMap is what the c5c3-operator would publish for the cloud.
func (s *standin) ovnConfigMap(namespace string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: ovnDatabasesConfigMap, Namespace: namespace},
		Data:       map[string]string{"northbound": s.ovnNB, "southbound": s.ovnSB},
	}
}

// registerChassis registers the chassis of node, a node of hypervisor pool
// pool, unless it is registered already.
func (s *standin) registerChassis(ctx context.Context, clusterName, pool, node string) error {
	key := clusterName + "/" + node
	if s.ovnSB == "" || s.chassis[key] != "" {
		return nil
	}
	args := []string{"--", "--may-exist", "chassis-add", node, "geneve", encapIP(node),
		"--", "set", "chassis", node, "hostname=" + node,
		`other_config:ovn-cms-options="enable-chassis-as-gw,availability-zones=` + pool + `"`}
	if err := s.sbctl(ctx, args...); err != nil {
		return fmt.Errorf("cannot register the OVN chassis of node %s: %w", node, err)
	}
	s.chassis[key] = node
	fmt.Printf("operator-standin: cluster %s: registered OVN chassis %s in availability zone %s\n", clusterName, node, pool)
	return nil
}

// unregisterChassis removes the chassis of the clusters that are gone.
func (s *standin) unregisterChassis(gone func(cluster string) bool) {
	for key, node := range s.chassis {
		cl, _, _ := strings.Cut(key, "/")
		if !gone(cl) {
			continue
		}
		// The stand-in's own context may be over (it is stopping).
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err := s.sbctl(ctx, "--if-exists", "chassis-del", node)
		cancel()
		if err != nil {
			fmt.Printf("operator-standin: cannot remove the OVN chassis of node %s: %v\n", node, err)
			continue
		}
		delete(s.chassis, key)
		fmt.Printf("operator-standin: cluster %s: removed OVN chassis %s\n", cl, node)
	}
}

func (s *standin) sbctl(ctx context.Context, args ...string) error {
	flags := append([]string{"--db=" + strings.ReplaceAll(s.ovnSB, " ", ","), "--timeout=10"}, s.sbctlTLS...)
	out, err := exec.CommandContext(ctx, "ovn-sbctl", append(flags, args...)...).CombinedOutput() //nolint:gosec // the stand-in's own flags.
	if err != nil {
		return fmt.Errorf("ovn-sbctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// encapIP is a loopback address of the node's own: the Southbound allows one
// chassis per encapsulation type and address.
func encapIP(node string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(node)) //nolint:errcheck // hashes never fail.
	v := h.Sum32()
	return fmt.Sprintf("127.%d.%d.%d", 1+v>>16&0xfe, v>>8&0xff, 1+v&0xfd)
}
