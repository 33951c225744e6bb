package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// browsers are the names a Chromium binary goes by, in the order they are
// looked for on the PATH.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell", "chrome"}

// chromium returns the path of a Chromium binary: PIPELINE_CHROMIUM, or
// the first of browsers on the PATH. It skips the test, loudly, if there is
// none.
func chromium(t *testing.T) string {
	t.Helper()
	if path := os.Getenv("PIPELINE_CHROMIUM"); path != "" {
		return path
	}
	for _, name := range browsers {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skipf("SKIPPED: NO CHROMIUM FOUND (looked for %s on the PATH, and PIPELINE_CHROMIUM is not set): "+
		"the real-browser tests did not run; install it with `apt-get install -y chromium`",
		strings.Join(browsers, ", "))
	return ""
}

// browser starts a headless Chromium for the test, and returns the context
// of its first tab, which the test's end closes, browser and all.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests may run as root, in a container
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	require.NoError(t, chromedp.Do(ctx), "start Chromium") // the first Run starts it, with no deadline
	return ctx
}

// console collects the console's errors and uncaught exceptions of a tab,
// from when it is made until the test ends.
type console struct {
	mu     sync.Mutex
	errors []string
}

// watchConsole starts collecting ctx's console errors.
func watchConsole(t *testing.T, ctx context.Context) *console {
	t.Helper()
	c := &console{}
	ctx, cancel := context.WithCancel(ctx)
	messages := chromedp.Console(ctx) // subscribed now, before anything is loaded
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return // the tab closed
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				c.mu.Lock()
				c.errors = append(c.errors, m.String()+" at "+m.URL)
				c.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// seen returns the errors collected so far.
func (c *console) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errors...)
}

// within bounds one step of a test to d of wall time.
func within(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// screenshot writes png to docs/img/name when PIPELINE_SCREENSHOTS=1.
func screenshot(t *testing.T, name string, png []byte) {
	t.Helper()
	if os.Getenv("PIPELINE_SCREENSHOTS") != "1" {
		return
	}
	path := filepath.Join("..", "docs", "img", name)
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("wrote %s", path)
}
