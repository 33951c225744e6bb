package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/mod/semver"
)

// apidiff is the API comparison tool, at a fixed version so that its
// export format stays put between a baseline and a check.
const apidiff = "golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4"

// baselineName is the file below api/ that holds the exported API of the
// module in dir at the last release.
func baselineName(dir string) string {
	if dir == "." {
		return "root.api"
	}
	return strings.ReplaceAll(dir, "/", "-") + ".api"
}

// writeAPI writes the exported API of every module in dirs to api/ below
// root, as the baseline of the release version: run at each release.
func writeAPI(root string, dirs []string, version string) error {
	mods, err := load(root, dirs)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "api"), 0o755); err != nil {
		return err
	}
	for _, m := range mods {
		dst, err := filepath.Abs(filepath.Join(root, "api", baselineName(m.dir)))
		if err != nil {
			return err
		}
		if err := exportAPI(filepath.Join(root, m.dir), m.path(), dst); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(root, "api", "VERSION"), []byte(version+"\n"), 0o644)
}

// exportAPI writes the exported API of the module path in dir to dst.
func exportAPI(dir, path, dst string) error {
	cmd := exec.Command("go", "run", apidiff, "-m", "-w", dst, path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("api check: exporting the API of %s: %w\n%s", path, err, out)
	}
	return nil
}

// checkAPI compares the exported API of every module in dirs with the
// baseline in api/: an incompatible change passes only in a release whose
// version says so (a new minor version before v1, a new major after) and
// whose entry in CHANGELOG.md names it under "### Breaking".
func checkAPI(root string, dirs []string, version string, log func(string, ...any)) error {
	data, err := os.ReadFile(filepath.Join(root, "api", "VERSION"))
	if err != nil {
		return fmt.Errorf("api check: no baseline (api/VERSION): write one with releasecheck -write-api at a release: %w", err)
	}
	base := strings.TrimSpace(string(data))
	mods, err := load(root, dirs)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "apicheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	var changes []string
	for _, m := range mods {
		now := filepath.Join(work, baselineName(m.dir))
		if err := exportAPI(filepath.Join(root, m.dir), m.path(), now); err != nil {
			return err
		}
		baseline, err := filepath.Abs(filepath.Join(root, "api", baselineName(m.dir)))
		if err != nil {
			return err
		}
		cmd := exec.Command("go", "run", apidiff, "-m", "-incompatible", baseline, now)
		cmd.Dir = filepath.Join(root, m.dir)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("api check: comparing %s: %w\n%s", m.path(), err, stderr.String())
		}
		for line := range strings.Lines(out.String()) {
			if line = strings.TrimSpace(line); line != "" {
				changes = append(changes, m.path()+": "+line)
			}
		}
		log("compared the API of %s with %s's", m.path(), base)
	}
	if len(changes) == 0 {
		return nil
	}
	list := strings.Join(changes, "\n\t")
	if !breaks(base, version) {
		return fmt.Errorf("api check: incompatible changes since %s, which %s may not make (a new minor version before v1, a new major after):\n\t%s", base, version, list)
	}
	changelog, _ := os.ReadFile(filepath.Join(root, "CHANGELOG.md"))
	if !namesBreaks(string(changelog), version) {
		return fmt.Errorf("api check: incompatible changes since %s, and CHANGELOG.md's entry for %s has no \"### Breaking\" section naming them:\n\t%s", base, version, list)
	}
	log("incompatible changes since %s, named in %s's changelog:\n\t%s", base, version, list)
	return nil
}

// breaks reports whether a release at version after one at base may break
// the API: a later major version, or before v1 a later minor one.
func breaks(base, version string) bool {
	if semver.Compare(version, base) <= 0 {
		return false
	}
	if semver.Major(base) == "v0" {
		return semver.MajorMinor(version) != semver.MajorMinor(base)
	}
	return semver.Major(version) != semver.Major(base)
}

// namesBreaks reports whether changelog's entry for version ("## [0.2.0]"
// for v0.2.0) has a "### Breaking" section.
func namesBreaks(changelog, version string) bool {
	head := "## [" + strings.TrimPrefix(version, "v") + "]"
	_, entry, ok := strings.Cut(changelog, head)
	if !ok {
		return false
	}
	if next := strings.Index(entry, "\n## "); next >= 0 {
		entry = entry[:next]
	}
	return strings.Contains(entry, "\n### Breaking")
}
