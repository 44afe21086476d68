package main

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// mount writes the pod's files into the root filesystem, root's and
// readable by the package's user, as a kubelet mounts Secrets and the
// ServiceAccount's token.
func (p *pod) mount(root string) error {
	for f, data := range p.files {
		dst := filepath.Join(root, filepath.Clean("/"+f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o444); err != nil { //nolint:gosec // a pod's Secret volume is readable by its user
			return err
		}
	}
	return nil
}

type process struct {
	cmd      *exec.Cmd
	path     string
	uid, gid uint32
}

// start runs the image's entrypoint under chroot as a container runtime
// would: the runtime config's args replace the image's command, the
// environment is the image's, then the pod's, then extra.
func start(root string, img *image, p *pod, extraArgs, extraEnv []string) (*process, error) {
	argv := append([]string{}, img.config.Entrypoint...)
	if p.hasArgs {
		argv = append(argv, p.args...)
	} else {
		argv = append(argv, img.config.Cmd...)
	}
	argv = append(argv, extraArgs...)
	if len(argv) == 0 {
		return nil, fmt.Errorf("the image has no entrypoint or command")
	}
	env := append(append(append([]string{}, img.config.Env...), p.env...), extraEnv...)
	bin, err := lookPath(root, argv[0], env)
	if err != nil {
		return nil, err
	}
	dir := img.config.WorkingDir
	if dir == "" {
		dir = "/"
	}
	cmd := &exec.Cmd{
		Path: bin, Args: argv, Env: env, Dir: dir, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot:     root,
			Credential: &syscall.Credential{Uid: p.uid, Gid: p.gid, Groups: []uint32{}},
			// The package goes with the stand-in, however it is stopped.
			Pdeathsig: syscall.SIGKILL,
		},
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s in %s as %d:%d: %w", bin, root, p.uid, p.gid, err)
	}
	return &process{cmd: cmd, path: bin, uid: p.uid, gid: p.gid}, nil
}

// lookPath resolves the entrypoint inside the image as the container's
// PATH would.
func lookPath(root, name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return path.Clean("/" + name), nil
	}
	dirs := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			dirs = v
		}
	}
	for _, d := range filepath.SplitList(dirs) {
		p := path.Join("/", d, name)
		if fi, err := os.Stat(filepath.Join(root, p)); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("the image's entrypoint %s is not in its PATH (%s)", name, dirs)
}
