// Command imgbuild writes the runtime image of one of this project's
// binaries as an OCI image tarball, without Docker or a registry: one layer
// holding the static binary on an empty base, run as a non-root user. The
// tarball is what `crossplane xpkg build --embed-runtime-image-tarball`
// embeds into a package. The image is reproducible: every timestamp is the
// Unix epoch, so the same binary gives the same digest.
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

func main() {
	bin := flag.String("bin", "", "the static binary to run")
	entrypoint := flag.String("entrypoint", "", "its path in the image, for example /function")
	tag := flag.String("tag", "", "the image reference recorded in the tarball")
	out := flag.String("out", "", "the image tarball to write")
	ports := flag.String("ports", "", "comma-separated ports the image exposes, for example 9443/tcp")
	flag.Parse()
	if *bin == "" || *entrypoint == "" || *tag == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "imgbuild: -bin, -entrypoint, -tag and -out are required")
		os.Exit(2)
	}
	digest, err := build(*bin, *entrypoint, *tag, *out, *ports)
	if err != nil {
		fmt.Fprintln(os.Stderr, "imgbuild:", err)
		os.Exit(1)
	}
	fmt.Printf("%s %s %s\n", *out, *tag, digest)
}

func build(bin, entrypoint, tag, out, ports string) (v1.Hash, error) {
	data, err := os.ReadFile(bin) //nolint:gosec // the binary named on the command line
	if err != nil {
		return v1.Hash{}, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	hdr := &tar.Header{Name: strings.TrimPrefix(entrypoint, "/"), Mode: 0o755, Size: int64(len(data)), Uid: nonRoot, Gid: nonRoot, ModTime: epoch, Typeflag: tar.TypeReg}
	if err := tw.WriteHeader(hdr); err != nil {
		return v1.Hash{}, err
	}
	if _, err := tw.Write(data); err != nil {
		return v1.Hash{}, err
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
