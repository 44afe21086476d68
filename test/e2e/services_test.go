//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/blockstorage/v3/volumetypes"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/aggregates"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/projects"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// The real services the clouds live in: the local OpenStack (Keystone,
// Nova, Cinder), Ceph and OVN, started by make openstack-up, ceph-up and
// the demo. The suite reads them as an operator would: OpenStack through
// gophercloud, as the provider does; Ceph and OVN with their own CLIs, one
// process per listing.

// stateDir is a local service's state directory: the environment
// variable, else the directory its make target uses.
func stateDir(env, fallback string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	return fallback
}

// openStack is a session with the local OpenStack: the admin's or a
// tenant's, logged in from a clouds.yaml as openstack --os-cloud does.
type openStack struct {
	provider *gophercloud.ProviderClient
	endpoint gophercloud.EndpointOpts
}

// logIn authenticates as cloud of the clouds.yaml; caCert, when set, is the
// CA file its relative cacert names.
func logIn(ctx context.Context, cloudsYAML []byte, cloud, caCert string) (*openStack, error) {
	opts := []clouds.ParseOption{clouds.WithCloudsYAML(bytes.NewReader(cloudsYAML)), clouds.WithCloudName(cloud)}
	if caCert != "" {
		opts = append(opts, clouds.WithCACertPath(caCert))
	}
	ao, eo, tlsConfig, err := clouds.Parse(opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot read cloud %s of the clouds.yaml: %w", cloud, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	transport.DialContext = (&net.Dialer{Timeout: 10 * time.Second, Resolver: clusterDNS}).DialContext
	pc, err := config.NewProviderClient(ctx, ao, config.WithHTTPClient(http.Client{Transport: transport}))
	if err != nil {
		return nil, fmt.Errorf("cannot log in as cloud %s: %w", cloud, err)
	}
	return &openStack{provider: pc, endpoint: eo}, nil
}

// clusterDNS resolves names as the landscape's pods do: through the
// kubelet's clusterDNS (local/node/kubelet.yaml), the DNS stand-in, where
// the clouds' public endpoints (keystone.<cloud>.<endpoint domain>, which a
// tenant's clouds.yaml names) resolve as a landscape's DNS resolves them.
// This machine's own resolver does not know them.
var clusterDNS = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
	return (&net.Dialer{}).DialContext(ctx, "udp", "10.96.0.10:53")
}}

var (
	adminOnce sync.Once
	admin     *openStack
	adminErr  error
)

// openStackAdmin is the local OpenStack's admin (make openstack-up's
// clouds.yaml, cloud admin), logged in once for the suite.
func openStackAdmin(t *testing.T) *openStack {
	t.Helper()
	adminOnce.Do(func() {
		f := filepath.Join(stateDir("COBALTCORE_OPENSTACK_RUN", "/tmp/cobaltcore-openstack"), "clouds.yaml")
		b, err := os.ReadFile(f)
		if err != nil {
			adminErr = fmt.Errorf("no local OpenStack (make openstack-up): %w", err)
			return
		}
		admin, adminErr = logIn(context.Background(), b, "admin", "")
	})
	if adminErr != nil {
		t.Fatal(adminErr)
	}
	return admin
}

func (o *openStack) identity(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	c, err := openstack.NewIdentityV3(o.provider, o.endpoint)
	if err != nil {
		t.Fatalf("no identity endpoint in the catalog: %v", err)
	}
	return c
}

func (o *openStack) compute(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	c, err := openstack.NewComputeV2(o.provider, o.endpoint)
	if err != nil {
		t.Fatalf("no compute endpoint in the catalog: %v", err)
	}
	return c
}

func (o *openStack) blockStorage(t *testing.T) *gophercloud.ServiceClient {
	t.Helper()
	c, err := openstack.NewBlockStorageV3(o.provider, o.endpoint)
	if err != nil {
		t.Fatalf("no block-storage endpoint in the catalog: %v", err)
	}
	return c
}

// tokenProject is the project the session's token is scoped to
// (openstack token issue -c project_id).
func (o *openStack) tokenProject() (string, error) {
	r, ok := o.provider.GetAuthResult().(tokens.CreateResult)
	if !ok {
		return "", fmt.Errorf("not a Keystone v3 token: %T", o.provider.GetAuthResult())
	}
	p, err := r.ExtractProject()
	if err != nil || p == nil {
		return "", fmt.Errorf("the token names no project (%v)", err)
	}
	return p.ID, nil
}

// projectsByName are the admin's view of every Keystone project: name to ID.
func (o *openStack) projectsByName(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	pages, err := projects.List(o.identity(t), projects.ListOpts{}).AllPages(ctx)
	if err != nil {
		t.Fatalf("cannot list the Keystone projects: %v", err)
	}
	all, err := projects.ExtractProjects(pages)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]string{}
	for _, p := range all {
		byName[p.Name] = p.ID
	}
	return byName
}

// aggregates are the Nova aggregates by name.
func (o *openStack) aggregates(ctx context.Context, t *testing.T) (map[string]aggregates.Aggregate, error) {
	t.Helper()
	pages, err := aggregates.List(o.compute(t)).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	all, err := aggregates.ExtractAggregates(pages)
	if err != nil {
		return nil, err
	}
	byName := map[string]aggregates.Aggregate{}
	for _, a := range all {
		byName[a.Name] = a
	}
	return byName, nil
}

// sortedHosts are an aggregate's hosts, sorted.
func sortedHosts(a aggregates.Aggregate) []string { return slices.Sorted(slices.Values(a.Hosts)) }

// volumeTypes are the names of the Cinder volume types.
func (o *openStack) volumeTypes(ctx context.Context, t *testing.T) []string {
	t.Helper()
	pages, err := volumetypes.List(o.blockStorage(t), volumetypes.ListOpts{IsPublic: volumetypes.VisibilityDefault}).AllPages(ctx)
	if err != nil {
		t.Fatalf("cannot list the Cinder volume types: %v", err)
	}
	all, err := volumetypes.ExtractVolumeTypes(pages)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(all))
	for _, v := range all {
		names = append(names, v.Name)
	}
	return names
}

// refused holds when err is OpenStack's answer that the caller may not:
// 403, or 404 where the service hides what the caller may not see.
func refused(err error) bool {
	return gophercloud.ResponseCodeIs(err, http.StatusForbidden) || gophercloud.ResponseCodeIs(err, http.StatusNotFound)
}

// listing is one look at what the real services hold, as their admin
// reads it.
type listing struct {
	projects    map[string]string // Keystone projects, name to ID
	aggregates  map[string]aggregates.Aggregate
	volumeTypes []string
	cephPools   []string // ceph osd pool ls
	cephAuth    []string // ceph auth ls, its lines
	haGroups    map[string][]string
}

// listServices lists the local OpenStack (gophercloud, as the admin), Ceph
// and OVN once.
func listServices(ctx context.Context, t *testing.T) listing {
	t.Helper()
	admin := openStackAdmin(t)
	var (
		l   = listing{projects: admin.projectsByName(ctx, t), volumeTypes: admin.volumeTypes(ctx, t)}
		err error
	)
	if l.aggregates, err = admin.aggregates(ctx, t); err != nil {
		t.Fatalf("cannot list the Nova aggregates: %v", err)
	}
	if l.cephPools, err = cephCLI(ctx, "osd", "pool", "ls"); err != nil {
		t.Fatal(err)
	}
	if l.cephAuth, err = cephCLI(ctx, "auth", "ls"); err != nil {
		t.Fatal(err)
	}
	if l.haGroups, err = haChassisGroups(ctx); err != nil {
		t.Fatal(err)
	}
	return l
}

// cephCLI runs the ceph CLI against the local Ceph (make ceph-up) and
// returns its output's lines.
func cephCLI(ctx context.Context, args ...string) ([]string, error) {
	conf := filepath.Join(stateDir("COBALTCORE_CEPH_RUN", "/tmp/cobaltcore-ceph"), "ceph.conf")
	return lines(ctx, 60*time.Second, "ceph", append([]string{"-c", conf, "--connect-timeout", "10"}, args...)...)
}

// haChassisGroups are the local OVN Northbound's HA chassis groups, each
// with its members' names sorted.
func haChassisGroups(ctx context.Context) (map[string][]string, error) {
	out, err := lines(ctx, 20*time.Second, "ovn-nbctl", "--db=tcp:127.0.0.1:6641", "--timeout=10", "ha-chassis-group-list")
	if err != nil {
		return nil, err
	}
	// A group's line is "UUID (NAME)", each member's below it, indented,
	// "UUID (CHASSIS)", its priority on a line of its own.
	groups := map[string][]string{}
	group := ""
	for _, l := range out {
		f := strings.Fields(l)
		if len(f) < 2 || !strings.HasPrefix(f[1], "(") {
			continue
		}
		name := strings.Trim(f[1], "()")
		if !strings.HasPrefix(l, " ") {
			group = name
			groups[group] = nil
			continue
		}
		groups[group] = append(groups[group], name)
	}
	for g := range groups {
		slices.Sort(groups[g])
	}
	return groups, nil
}

// lines runs a command, bounded, and returns its output's lines.
func lines(ctx context.Context, within time.Duration, name string, args ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n"), nil
}
