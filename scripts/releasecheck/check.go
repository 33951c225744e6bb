package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// peers are the module paths of the libraries the benchmarks compare with,
// and of the benchmarks' own tools: they belong in bench/, never in a
// published module, whose users would fetch them.
var peers = []string{
	"github.com/failsafe-go/failsafe-go",
	"github.com/sony/gobreaker",
	"github.com/afex/hystrix-go",
	"github.com/eapache/go-resiliency",
	"github.com/slok/goresilience",
	"github.com/cep21/circuit",
	"github.com/mercari/go-circuitbreaker",
	"github.com/alibaba/sentinel-golang",
	"golang.org/x/perf",
}

// published is one module to release: its directory below the repository
// and its parsed go.mod.
type published struct {
	dir  string
	file *modfile.File
}

func (p published) path() string { return p.file.Module.Mod.Path }

// check runs the release check of the modules in dirs (relative to root;
// the first is the root module) at version, logging to log: it returns nil
// if a user could fetch and build every one of them once they are tagged.
func check(root string, dirs []string, version string, log func(format string, args ...any)) error {
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("release check: %q is not a canonical semantic version (v0.1.0, say)", version)
	}
	mods, err := load(root, dirs)
	if err != nil {
		return err
	}
	if err := rules(root, mods, version); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "releasecheck-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	proxy := filepath.Join(work, "proxy")
	for _, m := range mods {
		if err := publish(proxy, filepath.Join(root, m.dir), m.path(), version); err != nil {
			return fmt.Errorf("release check: zipping %s: %w", m.path(), err)
		}
		log("zipped %s@%s", m.path(), version)
	}
	return fetchAndBuild(filepath.Join(work, "user"), proxy, mods, version, log)
}

// load parses the go.mod of every module.
func load(root string, dirs []string) ([]published, error) {
	var mods []published
	for _, dir := range dirs {
		name := filepath.Join(root, dir, "go.mod")
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("release check: %w", err)
		}
		f, err := modfile.Parse(name, data, nil)
		if err != nil {
			return nil, fmt.Errorf("release check: %w", err)
		}
		mods = append(mods, published{dir: dir, file: f})
	}
	return mods, nil
}

// rules checks what the go command would not: every module carries the
// root's licence, none requires a benchmark peer, and every nested module
// requires the root at the version being released (its replace of the root
// serves local development; users' builds ignore it).
func rules(root string, mods []published, version string) error {
	var errs []error
	licence, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		return fmt.Errorf("release check: the root module has no LICENSE: %w", err)
	}
	rootPath := mods[0].path()
	for _, m := range mods {
		if got, err := os.ReadFile(filepath.Join(root, m.dir, "LICENSE")); err != nil || !bytes.Equal(got, licence) {
			errs = append(errs, fmt.Errorf("%s: its LICENSE is missing or differs from the root's (a module's zip holds its own directory only)", m.dir))
		}
		for _, r := range m.file.Require {
			for _, p := range peers {
				if r.Mod.Path == p || strings.HasPrefix(r.Mod.Path, p+"/") {
					errs = append(errs, fmt.Errorf("%s/go.mod requires %s, a benchmark peer: move what needs it to bench/", m.dir, r.Mod.Path))
				}
			}
			if m.dir != mods[0].dir && r.Mod.Path == rootPath && r.Mod.Version != version {
				errs = append(errs, fmt.Errorf("%s/go.mod requires %s %s, but the release is %s: its users would fetch a root that does not exist", m.dir, rootPath, r.Mod.Version, version))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("release check: %w", errors.Join(errs...))
	}
	return nil
}

// publish adds path@version, from the module in dir, to the file:// module
// proxy at proxy: its list, .info, .mod and .zip (the zip as the go command
// would make it: nested modules and ignored files left out).
func publish(proxy, dir, path, version string) error {
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	at := filepath.Join(proxy, escaped, "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(at, version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(f, module.Version{Path: path, Version: version}, dir); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	for name, data := range map[string][]byte{version + ".mod": gomod, version + ".info": info, "list": []byte(version + "\n")} {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fetchAndBuild is a user's side, once per module: in a new module of its
// own below dir, with the proxy first in GOPROXY, it fetches the module
// alone at version, as its docs say (go get path@version), and builds a
// program that imports its root package. Alone, because a nested module
// whose go.mod requires a root the proxy lacks builds fine beside a user
// who also requires the root at version, and fails for one who does not.
func fetchAndBuild(dir, proxy string, mods []published, version string, log func(string, ...any)) error {
	goenv, err := exec.Command("go", "env", "GOPROXY", "GOMODCACHE").Output()
	if err != nil {
		return err
	}
	upstream, cache, _ := strings.Cut(strings.TrimSpace(string(goenv)), "\n")
	// A module cache of its own, so that no zip of an earlier check (or of
	// another tree at the same version) stands in for this one's; the other
	// modules come from the machine's cache first, itself a file:// proxy.
	modcache := filepath.Join(dir, "modcache")
	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(cache, "cache", "download"))+","+upstream,
		"GOMODCACHE="+modcache,
		"GOFLAGS=-mod=mod",
		"GONOSUMDB="+mods[0].path(), // not in the checksum database until published
		"GOWORK=off",
	)
	defer func() { // the module cache is read-only: the go command removes it
		clean := exec.Command("go", "clean", "-modcache")
		clean.Env = env
		_ = clean.Run()
	}()
	for i, m := range mods {
		user := filepath.Join(dir, fmt.Sprint(i))
		if err := os.MkdirAll(user, 0o755); err != nil {
			return err
		}
		files := map[string]string{
			"go.mod":  "module releasecheck.user\n\ngo 1.26.0\n",
			"main.go": fmt.Sprintf("package main\n\nimport _ %q\n\nfunc main() {}\n", m.path()),
		}
		for name, text := range files {
			if err := os.WriteFile(filepath.Join(user, name), []byte(text), 0o644); err != nil {
				return err
			}
		}
		for _, args := range [][]string{{"get", m.path() + "@" + version}, {"build", "-o", os.DevNull, "."}} {
			cmd := exec.Command("go", args...)
			cmd.Dir, cmd.Env = user, env
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("release check: a user of %s: go %s: %w\n%s", m.path(), strings.Join(args, " "), err, out)
			}
		}
		log("a new module fetched %s@%s alone and built a program importing it", m.path(), version)
	}
	return nil
}
