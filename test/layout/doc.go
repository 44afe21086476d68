// Package layout holds the tests that keep the repository's rooms apart: what
// ships (functions, provider, agents and the internal/ code they link) never
// imports the local landscape (local/), the build tooling (tools/) or the test
// harness (test/), and every link in the documentation resolves.
package layout
