// Command git-server serves the local demo's GitOps repository to Flux: the
// bare Git repositories under -root over Git's smart HTTP protocol, read and
// write, at http://<listen>/<name>.git. Flux's GitRepository accepts only
// http(s) and ssh URLs, so a repository on disk needs a server; this one is
// Git's own git-http-backend behind Go's CGI handler, as a landscape's Git
// server runs it behind a web server.
//
// What it does not simulate: authentication and TLS (it listens on loopback
// only; a landscape's GitRepository names a Secret with credentials), and
// webhooks (Flux polls, and `reconcile.fluxcd.io/requestedAt` asks it now).
//
// Usage: git-server -root DIR [-listen 127.0.0.1:18480] [-backend /usr/lib/git-core/git-http-backend]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/c5c3/consumer-plane/local/gitserver"
)

func main() {
	root := flag.String("root", "", "directory holding the bare repositories (<name>.git)")
	listen := flag.String("listen", "127.0.0.1:18480", "address to serve on; keep it on loopback")
	backend := flag.String("backend", gitserver.Backend, "Git's smart HTTP CGI program")
	flag.Parse()
	if err := run(*root, *listen, *backend); err != nil {
		fmt.Fprintln(os.Stderr, "git-server:", err)
		os.Exit(1)
	}
}

func run(root, listen, backend string) error {
	if root == "" {
		return errors.New("-root is required: the directory holding the bare repositories")
	}
	if _, err := os.Stat(backend); err != nil {
		return fmt.Errorf("-backend %s: %w (Debian's git package ships it)", backend, err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: gitserver.Handler(root, backend), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Printf("serving the repositories of %s on http://%s", root, ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
