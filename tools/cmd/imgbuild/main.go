// Command imgbuild writes the runtime image of one of this project's
// binaries as an OCI image tarball, without Docker or a registry: one layer
// holding the static binary on an empty base, run as a non-root user. The
// tarball is what `crossplane xpkg build --embed-runtime-image-tarball`
// embeds into a package. The image is reproducible: every timestamp is the
// Unix epoch, so the same binary gives the same digest.
//
// Every file is root's and read-only (the binary and libraries 0555, the
// rest 0444): the process, which runs as the non-root user 65532, cannot
// change its own image. With -ca-bundle the layer holds a CA bundle where Go
// and OpenSSL look for one (etc/ssl/certs/ca-certificates.crt), so the
// binary can reach services whose certificates a public CA signed.
//
// With -libs, the layer also holds the shared libraries a cgo binary links
// (the node agents': libvirt, librados), as ldd resolves them on the build
// machine (Debian 12), with the dynamic loader — a distroless-style image
// built from the build machine's own packages.
//
// Usage: imgbuild -bin _output/bin/provider -entrypoint /provider -tag xpkg.c5c3.io/cobaltcore/provider:v0.1.0 -out provider.tar
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// nonRoot is the distroless nonroot user.
const nonRoot = 65532

// caBundlePath is where Go's crypto/x509 (and OpenSSL on Debian) read the
// system's CA certificates.
const caBundlePath = "etc/ssl/certs/ca-certificates.crt"

func main() {
	bin := flag.String("bin", "", "the static binary to run")
	entrypoint := flag.String("entrypoint", "", "its path in the image, for example /function")
	tag := flag.String("tag", "", "the image reference recorded in the tarball")
	out := flag.String("out", "", "the image tarball to write")
	ports := flag.String("ports", "", "comma-separated ports the image exposes, for example 9443/tcp")
	libs := flag.Bool("libs", false, "also add the shared libraries the binary links (cgo binaries), as ldd resolves them here")
	var tools list
	flag.Var(&tools, "tool", "another program the binary runs, placed at its path here (repeatable; with -libs, its shared libraries too)")
	caBundle := flag.String("ca-bundle", "", "a PEM bundle of CA certificates to place at /"+caBundlePath+" (Debian's ca-certificates: /etc/ssl/certs/ca-certificates.crt)")
	flag.Parse()
	if *bin == "" || *entrypoint == "" || *tag == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "imgbuild: -bin, -entrypoint, -tag and -out are required")
		os.Exit(2)
	}
	digest, err := build(*bin, *entrypoint, *tag, *out, *ports, *libs, *caBundle, tools)
	if err != nil {
		fmt.Fprintln(os.Stderr, "imgbuild:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s %s\n", *out, *tag, digest)
}

func build(bin, entrypoint, tag, out, ports string, libs bool, caBundle string, tools []string) (v1.Hash, error) {
	files := map[string]string{strings.TrimPrefix(entrypoint, "/"): bin}
	if caBundle != "" {
		files[caBundlePath] = caBundle
	}
	for _, t := range tools {
		if !filepath.IsAbs(t) {
			return v1.Hash{}, fmt.Errorf("-tool %q: give its absolute path, where the image places it", t)
		}
		files[strings.TrimPrefix(t, "/")] = t
	}
	if libs {
		for _, b := range append([]string{bin}, tools...) {
			linked, err := sharedLibraries(b)
			if err != nil {
				return v1.Hash{}, err
			}
			for _, l := range linked {
				files[strings.TrimPrefix(l, "/")] = l
			}
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dirs := map[string]bool{}
	for _, n := range names {
		// Parent directories first, so the layer unpacks anywhere.
		for d := path.Dir(n); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	dirList := make([]string, 0, len(dirs))
	for d := range dirs {
		dirList = append(dirList, d)
	}
	sort.Strings(dirList)
	for _, d := range dirList {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Mode: 0o755, ModTime: epoch, Typeflag: tar.TypeDir}); err != nil {
			return v1.Hash{}, err
		}
	}
	for _, n := range names {
		data, err := os.ReadFile(files[n]) //nolint:gosec // the binary and its libraries
		if err != nil {
			return v1.Hash{}, err
		}
		hdr := &tar.Header{Name: n, Mode: 0o555, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}
		if n == caBundlePath {
			hdr.Mode = 0o444
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return v1.Hash{}, err
		}
		if _, err := tw.Write(data); err != nil {
			return v1.Hash{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return v1.Hash{}, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		return v1.Hash{}, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return v1.Hash{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "amd64"
	cf.Created = v1.Time{Time: epoch}
	cf.Config.Entrypoint = []string{entrypoint}
	cf.Config.User = fmt.Sprintf("%d:%d", nonRoot, nonRoot)
	if ports != "" {
		cf.Config.ExposedPorts = map[string]struct{}{}
		for p := range strings.SplitSeq(ports, ",") {
			cf.Config.ExposedPorts[p] = struct{}{}
		}
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return v1.Hash{}, err
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("-tag %q is not an image reference: %w", tag, err)
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return v1.Hash{}, err
	}
	return img.Digest()
}

// sharedLibraries lists the files the dynamic loader maps for bin (ldd's
// "name => /path" lines and the loader itself), with symlinks resolved: the
// image holds each under the path the loader asks for.
func sharedLibraries(bin string) ([]string, error) {
	out, err := exec.Command("ldd", bin).Output() //nolint:gosec // the binary named on the command line
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w (is it a static binary? then leave out -libs)", bin, err)
	}
	var libs []string
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		var p string
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			p = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			p = f[0]
		default:
			continue
		}
		libs = append(libs, p)
	}
	if len(libs) == 0 {
		return nil, fmt.Errorf("ldd found no shared libraries in %s", bin)
	}
	return libs, nil
}

// list is a repeatable flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }
