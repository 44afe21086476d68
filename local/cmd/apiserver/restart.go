package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/c5c3/consumer-plane/local/procs"
)

// restarter starts kube-apiserver again, with the same arguments, whenever
// it dies while the landscape runs: what kubelet does for the static pod a
// cluster's kube-apiserver is. envtest starts it once and only notices
// that it is gone; the fault checks (#54) kill it mid-reconcile and expect
// the plane to come back as a cluster's does.
type restarter struct {
	argv []string
	log  string

	mu       sync.Mutex
	pid      int
	current  *exec.Cmd // nil while envtest's first process runs
	stopping bool
	done     chan struct{}
}

// superviseAPIServer finds the kube-apiserver envtest started (a child of
// this process) and restarts it whenever it exits, until stop. Its
// restarts log to log.
func superviseAPIServer(log string) (*restarter, error) {
	pid, err := procs.Child(os.Getpid(), "kube-apiserver")
	if err != nil {
		return nil, err
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, fmt.Errorf("cannot read kube-apiserver's arguments: %w", err)
	}
	argv := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	r := &restarter{argv: argv, log: log, pid: pid, done: make(chan struct{})}
	go r.loop()
	return r, nil
}

func (r *restarter) loop() {
	defer close(r.done)
	for {
		time.Sleep(500 * time.Millisecond)
		r.mu.Lock()
		if r.stopping {
			r.mu.Unlock()
			return
		}
		if procs.Running(r.pid) {
			r.mu.Unlock()
			continue
		}
		fmt.Printf("%s kube-apiserver (pid %d) exited: starting it again\n", time.Now().Format(time.RFC3339), r.pid)
		if err := r.start(); err != nil {
			fmt.Fprintln(os.Stderr, "apiserver: cannot start kube-apiserver again:", err)
		}
		r.mu.Unlock()
	}
}

// start runs kube-apiserver as envtest ran it: the same arguments,
// certificates and ports. Called with mu held.
func (r *restarter) start() error {
	out, err := os.OpenFile(r.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(r.argv[0], r.argv[1:]...) //nolint:gosec // envtest's own command line, read back
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, as envtest starts it; and it goes with this
	// process, which owns its etcd.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		out.Close()
		return err
	}
	go func() { _ = cmd.Wait(); out.Close() }() // reaps it, so that it is seen to go
	r.pid, r.current = cmd.Process.Pid, cmd
	return nil
}

// stop ends the supervision and stops a kube-apiserver it started
// (envtest stops its own).
func (r *restarter) stop() {
	r.mu.Lock()
	r.stopping = true
	cmd := r.current
	r.mu.Unlock()
	<-r.done
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for i := 0; i < 60 && procs.Running(cmd.Process.Pid); i++ {
		time.Sleep(500 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
}
