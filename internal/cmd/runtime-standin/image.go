package main

import (
	"archive/tar"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// image is a pulled runtime image.
type image struct {
	img    v1.Image
	config v1.Config
	digest v1.Hash
}

// pull fetches ref from its registry, trusting caFile beside the system's
// CAs (as core does with --ca-bundle-path).
func pull(ref, caFile string) (*image, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w", ref, err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile) //nolint:gosec // a CA bundle the operator names
		if err != nil {
			return nil, err
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-registry-ca %s holds no PEM certificate", caFile)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	img, err := remote.Image(r, remote.WithTransport(tr))
	if err != nil {
		return nil, fmt.Errorf("pulling %s: %w", ref, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config of %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return nil, err
	}
	if dr, ok := r.(name.Digest); ok && dr.DigestStr() != d.String() {
		return nil, fmt.Errorf("%s: the registry served %s", ref, d)
	}
	return &image{img: img, config: cfg.Config, digest: d}, nil
}

// unpack writes the image's flattened filesystem to dir/rootfs, replacing
// an earlier one, and returns its path.
func (i *image) unpack(dir string) (string, error) {
	root, err := filepath.Abs(filepath.Join(dir, "rootfs"))
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(root); err != nil {
		return "", err
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	rc := mutate.Extract(i.img)
	defer rc.Close() //nolint:errcheck // read-only stream
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return root, nil
		}
		if err != nil {
			return "", fmt.Errorf("unpacking the image: %w", err)
		}
		if err := unpackEntry(root, h, tr); err != nil {
			return "", err
		}
	}
}

func unpackEntry(root string, h *tar.Header, r io.Reader) error {
	rel := filepath.Clean("/" + h.Name)
	if rel == "/" {
		return nil
	}
	p := filepath.Join(root, rel)
	if !strings.HasPrefix(p, root+string(filepath.Separator)) {
		return fmt.Errorf("the image has a path outside its root: %s", h.Name)
	}
	// A symlink unpacked earlier must not lead a later entry out of root.
	if parent, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil && parent != root && !strings.HasPrefix(parent, root+string(filepath.Separator)) {
		return fmt.Errorf("the image's %s lies behind a symlink out of its root (%s)", h.Name, parent)
	}
	mode := os.FileMode(h.Mode) & os.ModePerm //nolint:gosec // tar modes are permission bits here
	switch h.Typeflag {
	case tar.TypeDir:
		if err := os.MkdirAll(p, mode); err != nil {
			return err
		}
		return os.Chmod(p, mode)
	case tar.TypeReg:
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode) //nolint:gosec // inside root, checked above
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, r); err != nil { //nolint:gosec // images are this project's and provider-kubernetes'
			_ = f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Chmod(p, mode); err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.Symlink(h.Linkname, p)
	default:
		return fmt.Errorf("the image has %s of type %c, which this stand-in does not unpack", h.Name, h.Typeflag)
	}
	// The image's owner (root for every file of this project's images).
	return os.Lchown(p, h.Uid, h.Gid)
}
