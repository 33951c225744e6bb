package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeRepo writes a repository of two modules: example.com/lib, and
// example.com/lib/sub, which imports it and requires it at requires (with a
// replace of it for local work), each with a licence; extra is added to
// sub's go.mod.
func fakeRepo(t *testing.T, requires, extra string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.com/lib\n\ngo 1.26.0\n",
		"lib.go":      "package lib\n\nfunc F() {}\n",
		"LICENSE":     "the licence\n",
		"sub/go.mod":  "module example.com/lib/sub\n\ngo 1.26.0\n\nrequire example.com/lib " + requires + "\n\nreplace example.com/lib => ../\n" + extra,
		"sub/sub.go":  "package sub\n\nimport \"example.com/lib\"\n\nfunc G() { lib.F() }\n",
		"sub/LICENSE": "the licence\n",
	}
	for name, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	return root
}

// offline makes the user's side fetch from the file:// proxy alone.
func offline(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "")
}

func TestAReleaseThatResolvesPasses(t *testing.T) {
	offline(t)
	root := fakeRepo(t, "v0.1.0", "")
	require.NoError(t, check(root, []string{".", "sub"}, "v0.1.0", t.Logf))
}

// A nested module that requires a root version the release does not make is
// refused by name. Without that rule, a user's fetch fails when the version
// is one the proxy lacks and MVS needs (a later one: an earlier one is
// outvoted by the root's latest, which the go command fetches anyway to see
// whether the nested module's path is a package of the root's).
func TestANestedModuleRequiringAnotherRootFails(t *testing.T) {
	offline(t)
	for _, v := range []string{"v0.0.9", "v0.2.0"} {
		err := check(fakeRepo(t, v, ""), []string{".", "sub"}, "v0.1.0", t.Logf)
		assert.ErrorContains(t, err, "sub/go.mod requires example.com/lib "+v+", but the release is v0.1.0")
	}

	root := fakeRepo(t, "v0.2.0", "")
	mods, err := load(root, []string{".", "sub"})
	require.NoError(t, err)
	proxy := filepath.Join(t.TempDir(), "proxy")
	for _, m := range mods {
		require.NoError(t, publish(proxy, filepath.Join(root, m.dir), m.path(), "v0.1.0"))
	}
	err = fetchAndBuild(t.TempDir(), proxy, mods, "v0.1.0", t.Logf)
	assert.ErrorContains(t, err, "a user of example.com/lib/sub: go get", "the proxy holds no such root")
	assert.ErrorContains(t, err, "downloading example.com/lib v0.2.0")
}

func TestAModuleRequiringABenchmarkPeerFails(t *testing.T) {
	offline(t)
	root := fakeRepo(t, "v0.1.0", "\nrequire github.com/failsafe-go/failsafe-go v0.9.8\n")
	err := check(root, []string{".", "sub"}, "v0.1.0", t.Logf)
	assert.ErrorContains(t, err, "sub/go.mod requires github.com/failsafe-go/failsafe-go, a benchmark peer")
}

func TestAModuleWithoutTheLicenceFails(t *testing.T) {
	offline(t)
	root := fakeRepo(t, "v0.1.0", "")
	require.NoError(t, os.Remove(filepath.Join(root, "sub", "LICENSE")))
	err := check(root, []string{".", "sub"}, "v0.1.0", t.Logf)
	assert.ErrorContains(t, err, "sub: its LICENSE is missing")
}

func TestAVersionThatIsNotSemverFails(t *testing.T) {
	assert.ErrorContains(t, check(".", []string{"."}, "1.0", t.Logf), `"1.0" is not a canonical semantic version`)
}

// The API check: the fake repository's API is the baseline at v0.1.0; a
// compatible change passes, removing an exported function fails at the
// same version and at a patch version, and passes at v0.2.0 only once the
// changelog's entry names it under "### Breaking".
func TestTheAPICheckCatchesAnIncompatibleChange(t *testing.T) {
	root := fakeRepo(t, "v0.1.0", "")
	dirs := []string{".", "sub"}
	require.NoError(t, writeAPI(root, dirs, "v0.1.0"))
	require.NoError(t, checkAPI(root, dirs, "v0.1.0", t.Logf), "today's tree against its own baseline")

	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	write("more.go", "package lib\n\nfunc H() {}\n") // an addition is compatible
	require.NoError(t, checkAPI(root, dirs, "v0.1.0", t.Logf))

	write("lib.go", "package lib\n\nfunc F() {}\n\nfunc Removed() {}\n")
	require.NoError(t, writeAPI(root, dirs, "v0.1.0"))
	write("lib.go", "package lib\n\nfunc F() {}\n") // Removed is gone
	for _, v := range []string{"v0.1.0", "v0.1.1"} {
		err := checkAPI(root, dirs, v, t.Logf)
		assert.ErrorContains(t, err, "example.com/lib: - Removed: removed", v)
		assert.ErrorContains(t, err, "which "+v+" may not make", v)
	}
	err := checkAPI(root, dirs, "v0.2.0", t.Logf)
	assert.ErrorContains(t, err, "CHANGELOG.md's entry for v0.2.0 has no \"### Breaking\" section")
	write("CHANGELOG.md", "# Changelog\n\n## [0.2.0] - 2027-01-01\n\n### Breaking\n\n- `Removed` is gone.\n\n## [0.1.0] - 2026-12-02\n")
	require.NoError(t, checkAPI(root, dirs, "v0.2.0", t.Logf))
}

func TestWhichVersionsMayBreak(t *testing.T) {
	for _, c := range []struct {
		base, version string
		may           bool
	}{
		{"v0.1.0", "v0.1.0", false}, {"v0.1.0", "v0.1.5", false}, {"v0.1.0", "v0.2.0", true},
		{"v0.1.0", "v1.0.0", true}, {"v1.2.0", "v1.3.0", false}, {"v1.2.0", "v2.0.0", true}, {"v0.2.0", "v0.1.0", false},
	} {
		assert.Equal(t, c.may, breaks(c.base, c.version), "%s after %s", c.version, c.base)
	}
}
