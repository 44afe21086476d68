package scale

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/c5c3/consumer-plane/provider/internal/shardlease"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// providerBinary builds provider/cmd/provider once, with the caller's
// GOFLAGS (make passes the project's), and with librados when the clouds
// have Ceph (COBALTCORE_SCALE_CEPH_TAGS), as make xpkg builds the one that
// ships; COBALTCORE_SCALE_PROVIDER names another binary instead (an older
// build, to measure a change side by side).
func providerBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		if binary = os.Getenv("COBALTCORE_SCALE_PROVIDER"); binary != "" {
			return
		}
		dir, err := os.MkdirTemp("", "scale-provider-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "provider")
		args := []string{"build", "-o", binary}
		if cephShare > 0 {
			// With librados, as the package ships the provider: the
			// Makefile's CEPH_TAGS (GO_TAGS and ceph).
			args = append(args, "-tags", os.Getenv("COBALTCORE_SCALE_CEPH_TAGS"))
		}
		out, err := exec.Command("go", append(args, "github.com/c5c3/consumer-plane/provider/cmd/provider")...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build provider/cmd/provider: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binary
}

// A process is the provider binary running against the test's API server,
// its metrics served on a local port.
type process struct {
	cmd     *exec.Cmd
	metrics string
	pprof   string // the address of its Go profiles, or "" (an older build, without --pprof-bind-address)
	log     string
	exited  chan struct{}
	killed  bool
}

// startProcess runs the provider with the flags, as its Deployment does
// (every other flag at its default).
func startProcess(tb testing.TB, kubeconfig string, flags []string) *process {
	tb.Helper()
	port, err := freePort()
	mustTB(tb, err)
	log, err := os.CreateTemp("", "scale-provider-*.log")
	mustTB(tb, err)
	p := &process{metrics: fmt.Sprintf("http://127.0.0.1:%d/metrics", port), log: log.Name(), exited: make(chan struct{})}
	args := []string{"--metrics-insecure", fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port), "--health-probe-bind-address=127.0.0.1:0"}
	if os.Getenv("COBALTCORE_SCALE_PROVIDER") == "" {
		pport, err := freePort()
		mustTB(tb, err)
		p.pprof = fmt.Sprintf("127.0.0.1:%d", pport)
		args = append(args, "--pprof-bind-address="+p.pprof)
	}
	args = append(args, flags...)
	p.cmd = exec.Command(providerBinary(tb), args...)
	// POD_NAMESPACE as Crossplane's Deployment runtime sets it: the
	// namespace of the Leases of --shards.
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "POD_NAMESPACE=crossplane-system")
	// COBALTCORE_SCALE_ENV (make bench-scale PROVIDER_ENV=…): variables of
	// the provider's process alone, as a DeploymentRuntimeConfig's env sets
	// them (GOMEMLIMIT=1GiB), not of the API server the harness runs.
	p.cmd.Env = append(p.cmd.Env, strings.Fields(os.Getenv("COBALTCORE_SCALE_ENV"))...)
	p.cmd.Stdout, p.cmd.Stderr = log, log
	mustTB(tb, p.cmd.Start())
	go func() { _ = p.cmd.Wait(); close(p.exited); _ = log.Close() }()
	tb.Cleanup(p.kill)
	wait := 60 * time.Second
	if slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "--shards=") && f != "--shards=1" }) {
		// A replica serves its metrics once it holds a shard's Lease,
		// which a killed replica's holds for up to TakeOver more.
		wait += shardlease.TakeOver + 5*time.Second
	}
	deadline := time.Now().Add(wait)
	for {
		if _, err := p.scrape(); err == nil {
			return p
		}
		select {
		case <-p.exited:
			tb.Fatalf("the provider exited at start; its log %s:\n%s", p.log, tail(p.log))
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the provider serves no metrics %s after its start; its log %s", wait, p.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill stops the process at once (SIGKILL), as a node's loss does.
func (p *process) kill() {
	p.killed = true
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// A crasher reports a provider process that exited unbidden.
type crasher interface{ crashed() error }

// replicas are processes run side by side, as a Deployment's replicas.
type replicas []*process

func (r replicas) crashed() error {
	for _, p := range r {
		if err := p.crashed(); err != nil {
			return err
		}
	}
	return nil
}

// crashed says, once the process has exited without being killed, how,
// with the end of its log: a crash is a finding, never a slow figure.
func (p *process) crashed() error {
	select {
	case <-p.exited:
		if !p.killed {
			return fmt.Errorf("the provider exited (%v); the end of its log %s:\n%s", p.cmd.ProcessState, p.log, tail(p.log))
		}
	default:
	}
	return nil
}

// rss returns the process's resident and peak resident memory, in bytes.
func (p *process) rss() (now, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			now = kb << 10
		case "VmHWM:":
			peak = kb << 10
		}
	}
	return now, peak
}

// cpu is the CPU time the process has used (user and system).
func (p *process) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// scrape reads the process's metrics.
func (p *process) scrape() (map[string]*dto.MetricFamily, error) {
	rsp, err := http.Get(p.metrics) //nolint:noctx // a local scrape
	if err != nil {
		return nil, err
	}
	defer rsp.Body.Close() //nolint:errcheck // read to the end below
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rsp.Body)
	if err != nil {
		return nil, err
	}
	return families, nil
}

// sums reads the process's metrics once and adds up each named metric's
// series (counters and gauges).
func (p *process) sums(tb testing.TB, names ...string) []float64 {
	tb.Helper()
	families, err := p.scrape()
	mustTB(tb, err)
	out := make([]float64, len(names))
	for i, name := range names {
		for _, m := range families[name].GetMetric() {
			out[i] += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}

// cacheWaits says how the process's reads waited for the cache to hold
// its own writes (cobaltcore_provider_cache_own_write_wait_seconds): per
// outcome, how many and their mean wait.
func (p *process) cacheWaits() string {
	families, err := p.scrape()
	if err != nil {
		return err.Error()
	}
	f := families["cobaltcore_provider_cache_own_write_wait_seconds"]
	if f == nil {
		return "not counted by this build"
	}
	var out []string
	for _, m := range f.GetMetric() {
		h, outcome := m.GetHistogram(), ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" {
				outcome = l.GetValue()
			}
		}
		mean := 0.0
		if h.GetSampleCount() > 0 {
			mean = h.GetSampleSum() / float64(h.GetSampleCount())
		}
		out = append(out, fmt.Sprintf("%s %d (mean %.2fs)", outcome, h.GetSampleCount(), mean))
	}
	if len(out) == 0 {
		return "none waited"
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// heapTop saves p's heap profile (after a garbage collection) and returns
// where it is and the top of what holds memory (go tool pprof -top), or
// why not.
func (p *process) heapTop(nodes int) (path, top string) {
	if p.pprof == "" {
		return "", "no profile: the binary was not built by the harness"
	}
	rsp, err := http.Get("http://" + p.pprof + "/debug/pprof/heap?gc=1") //nolint:noctx // a local scrape
	if err != nil {
		return "", err.Error()
	}
	defer rsp.Body.Close() //nolint:errcheck // read to the end below
	f, err := os.CreateTemp("", "scale-heap-*.pb.gz")
	if err != nil {
		return "", err.Error()
	}
	_, err = io.Copy(f, rsp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return f.Name(), err.Error()
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", nodes), "-sample_index=inuse_space", p.cmd.Path, f.Name()).CombinedOutput()
	if err != nil {
		return f.Name(), fmt.Sprintf("go tool pprof: %v\n%s", err, out)
	}
	return f.Name(), string(out)
}

// raiseFileLimit lets the test (and the provider it starts) hold a
// connection per cloud, and the stub's listeners.
func raiseFileLimit(tb testing.TB, want uint64) {
	tb.Helper()
	var l syscall.Rlimit
	mustTB(tb, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l))
	if l.Cur >= want {
		return
	}
	// Past the hard limit only with the privilege to raise it (root): at
	// 5,000 clouds the stubs' listeners and connections alone pass a
	// hard limit of 20,000.
	if l.Max < want && syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: want, Max: want}) == nil {
		return
	}
	l.Cur = min(want, l.Max)
	mustTB(tb, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l))
	if l.Cur < want {
		tb.Logf("open files limited to %d (wanted %d)", l.Cur, want)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close() //nolint:errcheck // only its port is wanted
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail is the end of a log, for a failure's message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
