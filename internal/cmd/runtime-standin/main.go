// Command runtime-standin runs one installed Crossplane package the way
// core's Deployment runtime and a kubelet would, for the local management
// plane (cluster/demo), where core runs with --package-runtime=External.
// It is a stand-in for the package's Deployment and pod:
//
//   - it waits for the package's active revision, as core installed it
//     (dependency resolution included), and reads the image core resolved
//     (status.resolvedImage: the reference after ImageConfig rewriting) and
//     the revision's DeploymentRuntimeConfig;
//   - it does what core's runtime does before a pod starts: the package's
//     ServiceAccount (the runtime config's serviceAccountTemplate name, else
//     the revision's), for a provider the binding of the RBAC manager's
//     system ClusterRole of the revision to it (the RBAC manager finds that
//     ServiceAccount through the Deployment, which does not exist here), and
//     the TLS server Secret <package>-tls-server signed by core's CA
//     (crossplane-root-ca), with the Service names core would use;
//   - it pulls the image from the registry (trusting -registry-ca, as core
//     trusts its --ca-bundle-path), unpacks its filesystem and starts its
//     entrypoint and command there under chroot, as the image's user, with
//     the image's environment, the runtime config's container args and env,
//     the ServiceAccount's token and the TLS Secret where a pod has them
//     (/var/run/secrets/kubernetes.io/serviceaccount, /tls/server), and
//     KUBERNETES_SERVICE_HOST/PORT naming the API server;
//   - once the process runs, it reports on the revision what core's runtime
//     would: RuntimeHealthy, the TLS Secret, and a function's endpoint.
//
// What it does not simulate: a pod's own network namespace (every package
// shares the machine's, so listen addresses are moved with -arg and a
// function's endpoint is named with -endpoint), cgroups and resource limits,
// capabilities beyond running as a non-root user, restarts (it exits when
// the process does), and replicas. The root filesystem is read-only to the
// process because every file of the image is root's (internal/cmd/imgbuild).
//
// Usage:
//
//	runtime-standin -kubeconfig FILE -package function/NAME|provider/NAME -dir DIR
//	  [-registry-ca FILE] [-endpoint HOST:PORT] [-arg ARG]... [-env K=V]...
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// stringsFlag collects a repeated flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, " ") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var o options
	// -kubeconfig (the management cluster) is controller-runtime's flag,
	// which its client package registers.
	if flag.Lookup("kubeconfig") == nil {
		flag.String("kubeconfig", "", "the management cluster")
	}
	flag.StringVar(&o.pkg, "package", "", "the installed package to run: function/NAME or provider/NAME")
	flag.StringVar(&o.dir, "dir", "", "where to unpack the image (DIR/rootfs) and keep what is mounted into it")
	flag.StringVar(&o.registryCA, "registry-ca", "", "a PEM CA bundle trusted, beside the system's, when pulling the image")
	flag.StringVar(&o.namespace, "namespace", "crossplane-system", "the namespace core runs packages in")
	flag.StringVar(&o.endpoint, "endpoint", "", "a function's gRPC address (HOST:PORT), published as its revision's endpoint")
	flag.StringVar(&o.portFree, "start-when-free", "", "start the process only once this address (for example :8080) can be bound: another process of the local plane holds a port the package binds")
	flag.Var(&o.args, "arg", "an argument appended after the runtime config's (repeatable)")
	flag.Var(&o.env, "env", "an environment variable K=V set after the runtime config's (repeatable)")
	wait := flag.Duration("wait", 5*time.Minute, "how long to wait for the package's active revision")
	flag.Parse()
	o.kubeconfig = flag.Lookup("kubeconfig").Value.String()
	if o.kubeconfig == "" || o.pkg == "" || o.dir == "" {
		fmt.Fprintln(os.Stderr, "runtime-standin: -kubeconfig, -package and -dir are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, o, *wait); err != nil {
		fmt.Fprintf(os.Stderr, "runtime-standin %s: %v\n", o.pkg, err)
		os.Exit(1)
	}
}

type options struct {
	kubeconfig, pkg, dir, registryCA, namespace, endpoint, portFree string
	args, env                                                       stringsFlag
}

func run(ctx context.Context, o options, wait time.Duration) error {
	kind, name, ok := strings.Cut(o.pkg, "/")
	if !ok || (kind != "function" && kind != "provider") || name == "" {
		return fmt.Errorf("-package %q: want function/NAME or provider/NAME", o.pkg)
	}
	c, err := newCluster(o.kubeconfig, o.namespace)
	if err != nil {
		return err
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	rev, err := c.activeRevision(waitCtx, kind, name)
	cancel()
	if err != nil {
		return err
	}
	logf("%s %s: revision %s, image %s", kind, name, rev.name, rev.image)

	pod, err := c.prepare(ctx, rev)
	if err != nil {
		return err
	}
	img, err := pull(rev.image, o.registryCA)
	if err != nil {
		return err
	}
	root, err := img.unpack(o.dir)
	if err != nil {
		return err
	}
	if err := pod.mount(root); err != nil {
		return err
	}
	if o.portFree != "" {
		if err := waitFree(ctx, o.portFree); err != nil {
			return err
		}
	}
	// Like a kubelet, restart the container when it exits, with a growing
	// back-off: a provider started before core has established its CRDs
	// exits and comes back once they are there.
	healthy := false
	backoff := 2 * time.Second
	for {
		p, err := start(root, img, pod, o.args, o.env)
		if err != nil {
			return err
		}
		logf("running %s of %s (%s) as %d:%d, pid %d", p.path, rev.image, img.digest, p.uid, p.gid, p.cmd.Process.Pid)
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		exited, err := supervise(ctx, p, done, !healthy, func() error { return c.reportHealthy(ctx, rev, o.endpoint) })
		if err != nil {
			return err
		}
		healthy = healthy || !exited.early
		if ctx.Err() != nil {
			return nil
		}
		logf("the package's process exited (%v); restarting it in %s", exited.err, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

type exit struct {
	err   error
	early bool // before it was reported healthy
}

// supervise waits for the process to exit or the stand-in to be stopped
// (then stops the process). With report, it reports the package healthy
// once the process has lived a moment: a binary that cannot start (a
// missing library, a bad flag) exits before.
func supervise(ctx context.Context, p *process, done <-chan error, report bool, healthy func() error) (exit, error) {
	stop := func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
		}
	}
	if report {
		select {
		case err := <-done:
			return exit{err: err, early: true}, nil
		case <-ctx.Done():
			stop()
			return exit{}, nil
		case <-time.After(2 * time.Second):
		}
		if err := healthy(); err != nil {
			stop()
			return exit{}, err
		}
	}
	select {
	case err := <-done:
		return exit{err: err}, nil
	case <-ctx.Done():
		stop()
		return exit{}, nil
	}
}

// waitFree waits until addr can be bound, saying once that it waits.
func waitFree(ctx context.Context, addr string) error {
	for said := false; ; said = true {
		l, err := net.Listen("tcp", addr)
		if err == nil {
			return l.Close()
		}
		if !said {
			logf("waiting for %s to be free (%v)", addr, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

func logf(format string, args ...any) {
	fmt.Printf("%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}
