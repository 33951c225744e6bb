package pipeline_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// published are the modules users import, by directory: each is published
// with its own licence and must not pull a peer library into its users'
// module graphs.
var published = []string{".", "otel", "grpc", "fleet"}

// peers are the module paths of the libraries the benchmarks compare with,
// and of the benchmarks' own tools: they belong in bench/ alone.
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

// peersRequired returns the peers a go.mod requires.
func peersRequired(gomod []byte) []string {
	var found []string
	inRequire := false
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "require ("):
			inRequire = true
			continue
		case inRequire && line == ")":
			inRequire = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !inRequire:
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		for _, p := range peers {
			if fields[0] == p || strings.HasPrefix(fields[0], p+"/") {
				found = append(found, fields[0])
			}
		}
	}
	return found
}

// TestPublishedModulesRequireNoPeer: no module a user imports requires a
// library the benchmarks compare with (grpc/ required failsafe-go for one
// benchmark, which every user of the gRPC module then fetched).
func TestPublishedModulesRequireNoPeer(t *testing.T) {
	for _, dir := range published {
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		require.NoError(t, err)
		assert.Empty(t, peersRequired(gomod), "%s/go.mod requires a benchmark peer: move what needs it to bench/", dir)
	}
}

// TestThePeerCheckFindsAPeer is the check of the check: a go.mod that
// requires a peer, in a block or on its own line, is caught.
func TestThePeerCheckFindsAPeer(t *testing.T) {
	gomod := []byte("module x\n\nrequire github.com/sony/gobreaker/v2 v2.4.0\n\nrequire (\n\tgithub.com/failsafe-go/failsafe-go v0.9.8\n\tgithub.com/stretchr/testify v1.12.1\n)\n")
	assert.Equal(t, []string{"github.com/sony/gobreaker/v2", "github.com/failsafe-go/failsafe-go"}, peersRequired(gomod))
	bench, err := os.ReadFile(filepath.Join("bench", "go.mod"))
	require.NoError(t, err)
	assert.NotEmpty(t, peersRequired(bench), "bench/ is where the peers are")
}

// TestEveryPublishedModuleHasTheLicence: each published module carries the
// root's LICENSE, since a module's zip holds only its own directory.
func TestEveryPublishedModuleHasTheLicence(t *testing.T) {
	root, err := os.ReadFile("LICENSE")
	require.NoError(t, err)
	require.Contains(t, string(root), "Apache License")
	for _, dir := range published[1:] {
		got, err := os.ReadFile(filepath.Join(dir, "LICENSE"))
		require.NoError(t, err, "%s has no LICENSE", dir)
		assert.Equal(t, root, got, "%s/LICENSE differs from the root's", dir)
	}
}
