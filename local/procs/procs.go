// Package procs reads what Linux's /proc says of the local landscape's
// processes, and freezes one: the demo restarts its kube-apiserver by it,
// and the fault checks find, kill and freeze the plane's API servers.
package procs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Stat is what /proc/PID/stat says of a process: its name, its state (R,
// S, Z …) and its parent's PID. An error when it is gone.
func Stat(pid int) (comm, state string, ppid int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", 0, err
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses, so
	// the fields start after the last ')'.
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return "", "", 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 2 {
		return "", "", 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	ppid, err = strconv.Atoi(f[1])
	return string(b[open+1 : closing]), f[0], ppid, err
}

// Running says whether the process exists and is no zombie.
func Running(pid int) bool {
	_, state, _, err := Stat(pid)
	return err == nil && state != "Z"
}

// Child is the PID of parent's running child named comm.
func Child(parent int, comm string) (int, error) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(s)))
		if err != nil {
			continue
		}
		c, state, ppid, err := Stat(pid)
		if err == nil && c == comm && ppid == parent && state != "Z" {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no %s runs as a child of pid %d", comm, parent)
}

// Freeze stops a process (SIGSTOP): its sockets stay open and nothing
// answers, as with a hung server or a partition. thaw lets it run again;
// calling it more than once is harmless.
func Freeze(pid int) (thaw func(), err error) {
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		return nil, fmt.Errorf("kill -STOP %d: %w", pid, err)
	}
	var once sync.Once
	return func() { once.Do(func() { _ = syscall.Kill(pid, syscall.SIGCONT) }) }, nil
}
