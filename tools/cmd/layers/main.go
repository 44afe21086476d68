// Command layers writes each kind of pool cluster's layer as Flux applies it
// (examples/clusters/pools/<set>) from the agents' bundle (internal/agentbundle,
// which make generate copies from cluster/agents).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/c5c3/consumer-plane/internal/agentbundle"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: layers DIR (each set's layer is written to DIR/<set>, replacing what is there)")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func write(dir string) error {
	for _, set := range []agentbundle.Set{agentbundle.Hypervisor, agentbundle.Storage} {
		files, err := agentbundle.Layer(set)
		if err != nil {
			return err
		}
		d := filepath.Join(dir, string(set))
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil { //nolint:gosec // a Git tree's files
				return err
			}
		}
	}
	return nil
}
