package main

import (
	"strings"
	"testing"
)

func TestRunRefusesNoRoot(t *testing.T) {
	if err := run("", "127.0.0.1:0", "/bin/true"); err == nil || !strings.Contains(err.Error(), "-root") {
		t.Fatalf("run without -root: %v, want an error naming -root", err)
	}
}

func TestRunRefusesAMissingBackend(t *testing.T) {
	if err := run(t.TempDir(), "127.0.0.1:0", "/nonexistent/git-http-backend"); err == nil || !strings.Contains(err.Error(), "-backend") {
		t.Fatalf("run without the backend: %v, want an error naming -backend", err)
	}
}
