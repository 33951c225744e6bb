package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The flags' defaults, and every value that cannot work refused with the
// flag's name.
func TestFlags(t *testing.T) {
	cfg, err := parseFlags(nil)
	require.NoError(t, err)
	assert.Equal(t, ":8080", cfg.Addr)
	assert.Empty(t, cfg.Upstream, "the fake upstreams")
	assert.Empty(t, cfg.GRPC, "the fake upstreams")
	assert.Zero(t, cfg.Duration, "until a signal")
	assert.Equal(t, float64(defaultLoad), cfg.Load)
	require.NotNil(t, cfg.Faults)
	assert.Equal(t, defaultOutage, cfg.Faults.outage)

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-duration", "-1s"}, "-duration must not be negative"},
		{[]string{"-load", "-1"}, "-load must not be negative"},
		{[]string{"-fail", "1.5"}, "-fail must lie in [0, 1], got 1.5"},
		{[]string{"-slow", "-0.1"}, "-slow must lie in [0, 1], got -0.1"},
		{[]string{"-outage", "1m"}, "-outage must lie in [0, 1m0s), got 1m0s"},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
	} {
		_, err := parseFlags(tt.args)
		assert.ErrorContains(t, err, tt.want, tt.args)
	}
}

// The command itself: built, run for a second with its fake upstreams, it
// stops by itself and exits 0; run until a SIGTERM, it stops on it and
// exits 0.
func TestTheCommandRunsAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a bound, should the command hang
	defer cancel()
	bin := filepath.Join(t.TempDir(), "service")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin)
	if raceEnabled() {
		build.Args = append(build.Args, "-race") // the test's own build cache, and the race detector in the command too
	}
	build.Args = append(build.Args, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	t.Run("for a duration", func(t *testing.T) {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, "-duration", "1s", "-addr", "127.0.0.1:0")
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Run(), "stderr:\n%s", &stderr)
		assert.Contains(t, stderr.String(), "msg=listening")
		assert.Contains(t, stderr.String(), `msg=stopping cause="context deadline exceeded"`)
	})

	t.Run("until SIGTERM", func(t *testing.T) {
		stderr := newWatch("msg=listening")
		cmd := exec.CommandContext(ctx, bin, "-addr", "127.0.0.1:0")
		cmd.Stderr = stderr
		require.NoError(t, cmd.Start())
		select {
		case <-stderr.seen:
		case <-ctx.Done():
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		require.NoError(t, cmd.Wait(), "stderr:\n%s", stderr)
		assert.Contains(t, stderr.String(), `msg=stopping cause="terminated signal received"`)
	})
}

// raceEnabled reports whether the test binary was built with -race.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// watch is a command's output, kept whole, whose seen is closed once the
// output holds the text it watches for. It is safe for concurrent use.
type watch struct {
	mu    sync.Mutex // guards buf and found
	buf   bytes.Buffer
	text  string
	found bool
	seen  chan struct{}
}

func newWatch(text string) *watch { return &watch{text: text, seen: make(chan struct{})} }

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.found && strings.Contains(w.buf.String(), w.text) {
		w.found = true
		close(w.seen)
	}
	return len(p), nil
}

func (w *watch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
