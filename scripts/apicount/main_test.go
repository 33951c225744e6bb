package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCountsWhatAUserCanName writes a package with every kind of name, an
// internal package, a command, a test file and a nested module, and counts
// only the package's exported names.
func TestCountsWhatAUserCanName(t *testing.T) {
	root := t.TempDir()
	write := func(path, src string) {
		full := filepath.Join(root, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(src), 0o644))
	}
	write("lib/lib.go", `package lib
const A, b = 1, 2
var C int
type D struct{}
type e struct{}
func (D) M() {}
func (*D) m() {}
func (e) N() {}
func F() {}
func g() {}
type G[T any] struct{}
func (G[T]) M() {}
`)
	write("lib/lib_test.go", "package lib\nfunc TestX() {}\n")
	write("lib/internal/x/x.go", "package x\nfunc X() {}\n")
	write("cmd/tool/main.go", "package main\nfunc Main() {}\n")
	write("nested/go.mod", "module nested\n")
	write("nested/n.go", "package nested\nfunc N() {}\n")
	counts, err := count(root)
	require.NoError(t, err)
	// A, C, D, D.M, F, G, G.M
	assert.Equal(t, map[string]int{filepath.Join(root, "lib"): 7}, counts)
}
