package browsertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// errDown is a failing dependency's error.
var errDown = errors.New("down")

// preset returns a standard pipeline named name, whose breaker opens for a
// minute on two failures in a row, its events going to the dashboard.
func preset(t *testing.T, name string, d *dashboard.Dashboard) *standard.Pipeline[string] {
	t.Helper()
	p, err := standard.New[string](standard.Config{
		Name:       name,
		Retry:      retry.Config{MaxAttempts: 1},
		NoRecovery: true,
		Breaker:    breaker.Config{ConsecutiveFailures: 2, BreakDuration: time.Minute, OnEvent: d.Observe},
	})
	require.NoError(t, err)
	return p.With(pipeline.Options[string]{OnEvent: d.Observe})
}

// call runs one call of p that takes about d and fails with err.
func call(p *standard.Pipeline[string], d time.Duration, err error) error {
	_, got := p.Execute(context.Background(), func(ctx context.Context) (string, error) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return "ok", err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	return got
}

// stateOf is the script that reads a dependency's state on the page.
func stateOf(name string) string {
	return fmt.Sprintf(`(document.querySelector('#dependencies tr[data-dependency=%q]') || {dataset: {}}).dataset.state`, name)
}

// TestTheDashboardInABrowser loads the dashboard from a loopback server,
// opens a breaker, and checks that the page, refreshing itself, shows it
// open within 2 s, with no error in the console; then loads it again with
// JavaScript off, which shows the same table.
func TestTheDashboardInABrowser(t *testing.T) {
	ctx := browser(t)
	messages := watchConsole(t, ctx)

	var deps health.Registry
	d, err := dashboard.New(dashboard.Config{
		Registry:  &deps,
		Interval:  200 * time.Millisecond,
		Authorize: func(*http.Request) error { return nil }, // the buttons, for the screenshot
	})
	require.NoError(t, err)
	defer d.Close()
	payments, search := preset(t, "payments", d), preset(t, "search", d)
	deps.Add(health.Preset(payments))
	deps.Add(health.Preset(search))
	mux := http.NewServeMux()
	mux.Handle("GET /debug/dashboard/", d)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	require.NoError(t, call(payments, time.Millisecond, nil))
	step, cancel := within(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(step,
		chromedp.Navigate(srv.URL+"/debug/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#dependencies tr[data-dependency="payments"]`)),
	))
	state, err := chromedp.Run(step, chromedp.Evaluate[string](stateOf("payments")))
	require.NoError(t, err)
	assert.Equal(t, "closed", state)

	for range 2 {
		require.Error(t, call(payments, time.Millisecond, errDown)) // two failures in a row: open
	}
	require.Equal(t, breaker.Open, payments.Breaker.State())
	opened := time.Now()
	wait, cancel := within(ctx, 2*time.Second)
	defer cancel()
	_, err = chromedp.Run(wait, chromedp.Poll[bool](stateOf("payments")+` === "open"`,
		chromedp.WithPollingInterval(20*time.Millisecond)))
	require.NoError(t, err, "the page did not show the breaker open within 2 s")
	t.Logf("the page showed the breaker open %v after it opened", time.Since(opened).Round(time.Millisecond))
	status, err := chromedp.Run(step, chromedp.Evaluate[string](`document.getElementById("status").textContent`))
	require.NoError(t, err)
	assert.Contains(t, status, "live", "the script ran")
	assert.Empty(t, messages.seen(), "no error in the console")

	// JavaScript off: the server's table says the same.
	noJS, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	require.NoError(t, chromedp.Do(noJS, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	})))
	stepNoJS, cancel := within(noJS, 10*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(stepNoJS,
		chromedp.Navigate(srv.URL+"/debug/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#dependencies tr[data-dependency="search"]`)),
	))
	badge, err := chromedp.Run(stepNoJS, chromedp.Text(chromedp.CSS(`#dependencies tr[data-dependency="payments"] .state`)))
	require.NoError(t, err)
	assert.Equal(t, "open", badge)
	status, err = chromedp.Run(stepNoJS, chromedp.Text(chromedp.CSS(`#status`)))
	require.NoError(t, err)
	assert.Equal(t, "Reload the page to refresh it.", status, "no script ran")
	assert.Empty(t, messages.seen(), "no error in the console")
}
