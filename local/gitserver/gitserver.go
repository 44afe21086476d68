// Package gitserver serves bare Git repositories over Git's smart HTTP
// protocol, read and write, with Git's own git-http-backend behind Go's CGI
// handler: what the local demo's GitOps repository (local/cmd/git-server)
// and the GitOps integration test give Flux, whose GitRepository accepts
// only http(s) and ssh URLs.
package gitserver

import (
	"net/http"
	"net/http/cgi"
)

// Backend is where Debian's git package installs git-http-backend.
const Backend = "/usr/lib/git-core/git-http-backend"

// Handler serves every bare repository under root (<root>/<name>.git at
// /<name>.git) through the CGI program backend. GIT_HTTP_EXPORT_ALL exports
// them without a git-daemon-export-ok file, and REMOTE_USER lets a client
// push (git-http-backend enables receive-pack for authenticated users only):
// the demo's and e2e's commits need it. No authentication: serve on
// loopback only.
func Handler(root, backend string) http.Handler {
	return &cgi.Handler{
		Path: backend,
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=local"},
	}
}
