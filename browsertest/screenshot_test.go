package browsertest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// TestTheDashboardScreenshot writes docs/img/dashboard.png, with
// PIPELINE_SCREENSHOTS=1: a dashboard with a few seconds of traffic, a
// dependency whose breaker opens during them, one isolated by hand, and a
// fleet view of 40 processes, two of them unreachable.
func TestTheDashboardScreenshot(t *testing.T) {
	if os.Getenv("PIPELINE_SCREENSHOTS") != "1" {
		t.Skip("set PIPELINE_SCREENSHOTS=1 to write docs/img/dashboard.png")
	}
	ctx := browser(t)
	messages := watchConsole(t, ctx)

	var peers []string
	for i := range 40 {
		ledger, err := breaker.New(breaker.Config{Name: "ledger"})
		require.NoError(t, err)
		search, err := breaker.New(breaker.Config{Name: "search"})
		require.NoError(t, err)
		switch {
		case i == 7:
			ledger.Isolate()
		case i%5 == 2:
			search.IsolateFor(time.Minute)
		}
		deps := registry(health.Of("ledger", ledger, nil), health.Of("payments", nil, nil), health.Of("search", search, nil))
		srv := httptest.NewServer(deps)
		t.Cleanup(srv.Close)
		peers = append(peers, srv.URL+"/debug/dependencies")
	}
	peers = append(peers[:20], append([]string{"http://127.0.0.1:1/debug/dependencies", "http://10.255.255.1:9/debug/dependencies"}, peers[20:]...)...)

	var deps health.Registry
	d, err := dashboard.New(dashboard.Config{
		Registry:    &deps,
		Interval:    100 * time.Millisecond,
		History:     80,
		Peers:       func() []string { return peers },
		PeerTimeout: 500 * time.Millisecond,
		Authorize:   func(*http.Request) error { return nil },
	})
	require.NoError(t, err)
	defer d.Close()
	payments, search, ledger := preset(t, "payments", d), preset(t, "search", d), preset(t, "ledger", d)
	quota, err := budget.New(budget.Config{Name: "export-quota", Capacity: 50})
	require.NoError(t, err)
	deps.Add(health.Preset(payments))
	deps.Add(health.Preset(search))
	deps.Add(health.Preset(ledger))
	deps.Add(health.Of("export-quota", nil, quota))
	mux := http.NewServeMux()
	mux.Handle("GET /debug/dashboard/", d)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// Eight seconds of traffic, pictured at 6 s: search fails from 3 s, and
	// opens; ledger is isolated at 4 s; payments slows down for a second.
	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range []struct {
		run  func(at time.Duration)
		step time.Duration
	}{
		{func(at time.Duration) {
			lat := 2 * time.Millisecond
			if at > 2*time.Second && at < 3*time.Second {
				lat = 8 * time.Millisecond
			}
			_ = call(payments, lat, nil)
		}, 5 * time.Millisecond},
		{func(at time.Duration) {
			var err error
			if at > 3*time.Second {
				err = errDown
			}
			_ = call(search, 3*time.Millisecond, err)
		}, 20 * time.Millisecond},
		{func(at time.Duration) {
			if at > 4*time.Second && ledger.Breaker.State() == breaker.Closed {
				ledger.Breaker.Isolate()
			}
			_ = call(ledger, time.Millisecond, nil)
		}, 40 * time.Millisecond},
		{func(time.Duration) { quota.Withdraw(criticality.Default) }, 150 * time.Millisecond},
	} {
		wg.Go(func() {
			tick := time.NewTicker(p.step)
			defer tick.Stop()
			for now := range tick.C {
				at := now.Sub(start)
				if at > 8*time.Second {
					return
				}
				p.run(at)
			}
		})
	}
	defer wg.Wait()
	time.Sleep(time.Until(start.Add(6 * time.Second))) // a picture on the wall clock, not a test of timing

	step, cancel := within(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(step,
		chromedp.EmulateViewport(1400, 900),
		chromedp.Navigate(srv.URL+"/debug/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS(`#fleet`)),
	))
	png, err := chromedp.Run(step, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	screenshot(t, "dashboard.png", png)
	require.Empty(t, messages.seen(), "no error in the console")
}

// registry returns a registry of the sources.
func registry(sources ...health.Source) *health.Registry {
	var r health.Registry
	for _, s := range sources {
		r.Add(s)
	}
	return &r
}
