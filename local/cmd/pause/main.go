// Command pause is the local node's pod sandbox image (registry.k8s.io/pause
// in a cluster): it holds a pod's namespaces and waits to be stopped. There
// is no registry.k8s.io to pull it from here, so local/node builds
// it with imgbuild and imports it into containerd.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
