package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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
	pid, err := child("kube-apiserver")
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
		if !gone(r.pid) {
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
	go func() { _ = cmd.Wait(); out.Close() }() // reaps it, so that gone sees it go
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
	for i := 0; i < 60 && !gone(cmd.Process.Pid); i++ {
		time.Sleep(500 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
}

// child is the PID of this process's child running the named binary.
func child(name string) (int, error) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after
		// its closing parenthesis.
		open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || closing < open {
			continue
		}
		f := strings.Fields(string(b[closing+1:]))
		if len(f) < 2 || string(b[open+1:closing]) != name || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		return strconv.Atoi(strings.TrimSpace(string(b[:open])))
	}
	return 0, fmt.Errorf("no %s runs as a child of this process", name)
}

// gone: the process no longer runs (or is a zombie nobody reaped yet).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	closing := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[closing+1:]))
	return len(f) == 0 || f[0] == "Z"
}
