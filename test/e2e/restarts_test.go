//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// planeProcess is one of the management plane's own processes, as the
// fault checks kill it: where it runs now, and when it serves again.
type planeProcess struct {
	name string
	// pid is the process running now.
	pid func(context.Context) (int, error)
	// serves holds once it answers again.
	serves func(context.Context) error
}

// The processes a cloud's creation and deletion go through, in the order
// they are killed: the provider (its pod's container, which kubelet
// restarts), the function that composes clouds (the same), Crossplane core
// (in the demo a supervised process, as its Deployment's pod in a cluster)
// and kube-apiserver (restarted as kubelet restarts the static pod; etcd
// keeps running).
var killedInTurn = []planeProcess{
	{name: "the provider", pid: podPID("provider=cobaltcore-provider-cobaltcore"), serves: podReady("provider=cobaltcore-provider-cobaltcore")},
	{name: "function-openstack-cluster", pid: podPID("function=cobaltcore-function-openstack-cluster"), serves: podReady("function=cobaltcore-function-openstack-cluster")},
	{name: "Crossplane core", pid: corePID, serves: httpOK("http://127.0.0.1:18081/healthz")},
	{name: "kube-apiserver", pid: apiServerPID, serves: apiServerReady},
}

// killedMidReconcile (#54): each of the plane's processes is killed
// (SIGKILL: no shutdown of its own) while inFlight says work is under way,
// and comes back. What must hold after (no duplicate, no orphan, no data
// lost, convergence) the caller's checks assert.
func killedMidReconcile(t *testing.T, inFlight func(context.Context) (string, error)) {
	t.Helper()
	for _, p := range killedInTurn {
		t.Run(p.name+", killed mid-reconcile, serves again", func(t *testing.T) {
			ctx := t.Context()
			busy, err := inFlight(ctx)
			if err != nil {
				t.Fatalf("what is under way: %v", err)
			}
			if busy == "" {
				t.Fatalf("nothing is under way to interrupt")
			}
			pid, err := p.pid(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill -9 %d: %v", pid, err)
			}
			killed := time.Now()
			// Back: another process runs, and it serves.
			deadline := killed.Add(150 * time.Second)
			for {
				now, err := p.pid(ctx)
				if err == nil && now != pid {
					err = p.serves(ctx)
				} else if err == nil {
					err = fmt.Errorf("pid %d still runs", pid)
				}
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("not back within 150s of kill -9 %d: %v", pid, err)
				}
				time.Sleep(500 * time.Millisecond)
			}
			t.Logf("killed (pid %d) while %s; serving again after %s", pid, busy, time.Since(killed).Round(100*time.Millisecond))
		})
	}
}

// podPID is the PID of the running container of the package's pod
// (selector: pkg.crossplane.io/<selector>), as the node's containerd runs it.
func podPID(selector string) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		pods, err := plane.kube.CoreV1().Pods("crossplane-system").List(ctx, metav1.ListOptions{LabelSelector: "pkg.crossplane.io/" + selector})
		if err != nil {
			return 0, err
		}
		for _, pod := range pods.Items {
			for _, cs := range pod.Status.ContainerStatuses {
				if cs.State.Running == nil {
					continue
				}
				id := strings.TrimPrefix(cs.ContainerID, "containerd://")
				tasks, err := lines(ctx, 20*time.Second, "ctr", "--address", plane.path("node/containerd.sock"), "-n", "k8s.io", "tasks", "ls")
				if err != nil {
					return 0, err
				}
				for _, l := range tasks { // TASK PID STATUS
					if f := strings.Fields(l); len(f) == 3 && f[0] == id && f[2] == "RUNNING" {
						return strconv.Atoi(f[1])
					}
				}
			}
		}
		return 0, fmt.Errorf("no container of pkg.crossplane.io/%s runs", selector)
	}
}

// podReady holds when the package's pod is Ready.
func podReady(selector string) func(context.Context) error {
	return func(ctx context.Context) error {
		pods, err := plane.kube.CoreV1().Pods("crossplane-system").List(ctx, metav1.ListOptions{LabelSelector: "pkg.crossplane.io/" + selector})
		if err != nil {
			return err
		}
		for _, pod := range pods.Items {
			for _, c := range pod.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					return nil
				}
			}
		}
		return fmt.Errorf("no pod of pkg.crossplane.io/%s is Ready", selector)
	}
}

// corePID is Crossplane core's process, as its supervisor (up.sh) wrote it.
func corePID(context.Context) (int, error) {
	b, err := os.ReadFile(plane.path("crossplane.pid"))
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err == nil && !running(pid) {
		err = fmt.Errorf("core (pid %d) does not run", pid)
	}
	return pid, err
}

// apiServerPID is the management cluster's kube-apiserver: the child of
// local/cmd/apiserver (the Shoots' are the Gardener stand-in's).
func apiServerPID(context.Context) (int, error) {
	b, err := os.ReadFile(plane.path("apiserver.pid"))
	if err != nil {
		return 0, err
	}
	parent := strings.TrimSpace(string(b))
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		comm, state, ppid := procStat(s)
		if comm == "kube-apiserver" && ppid == parent && state != "Z" {
			return strconv.Atoi(filepath.Base(filepath.Dir(s)))
		}
	}
	return 0, fmt.Errorf("no kube-apiserver runs under the demo's apiserver (pid %s)", parent)
}

// apiServerReady: kube-apiserver says it is ready (/readyz: etcd, its
// informers, the aggregated Gardener API's availability controller).
func apiServerReady(ctx context.Context) error {
	return plane.kube.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx).Error()
}

func httpOK(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		rsp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		rsp.Body.Close()
		if rsp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s answers %s", url, rsp.Status)
		}
		return nil
	}
}

// running: the process exists and is no zombie.
func running(pid int) bool {
	_, state, _ := procStat(fmt.Sprintf("/proc/%d/stat", pid))
	return state != "" && state != "Z"
}

// procStat reads a process's name, state and parent's PID from its
// /proc/PID/stat; all empty if it is gone.
func procStat(name string) (comm, state, ppid string) {
	b, err := os.ReadFile(name)
	if err != nil {
		return "", "", ""
	}
	// pid (comm) state ppid ...: comm may hold spaces.
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return "", "", ""
	}
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 2 {
		return "", "", ""
	}
	return string(b[open+1 : closing]), f[0], f[1]
}
