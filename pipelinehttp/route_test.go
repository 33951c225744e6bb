package pipelinehttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// TestARouteHasAScopeOfItsOwn sends, to one healthy host, 60 GETs of an
// endpoint that answers at once and then GETs of a report that takes 100 ms (on
// the transport's clock). Through the host's one breaker, the report's
// answers read as slow against the normal the quick ones set, and the
// breaker opens; with the report's requests given a route, each endpoint has
// a breaker of its own, with its own normal, and neither opens.
func TestARouteHasAScopeOfItsOwn(t *testing.T) {
	clock := clockwork.NewFakeClockAt(epoch)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/report" {
			clock.Advance(100 * time.Millisecond)
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	host := pipelinehttp.HostOf(u)
	reports := host
	reports.Route = "reports"

	run := func(route bool) (*pipelinehttp.Transport, []pipelinehttp.Host) {
		var built []pipelinehttp.Host
		cfg := standard.Config{Retry: retry.Config{RefusalPause: -1}} // no pause on the fake clock, which no one advances
		tr, err := pipelinehttp.New(pipelinehttp.Config{Clock: clock, Standard: cfg, PerHost: func(h pipelinehttp.Host, shared standard.Config) standard.Config {
			built = append(built, h) // one at a time: the requests are sequential
			return shared
		}})
		require.NoError(t, err)
		t.Cleanup(tr.CloseIdleConnections)
		client := &http.Client{Transport: tr}
		get := func(ctx context.Context, path string) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
			require.NoError(t, err)
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		}
		for range 60 {
			require.NoError(t, get(context.Background(), "/quick"))
		}
		ctx := context.Background()
		if route {
			ctx = pipelinehttp.Route(ctx, "reports")
		}
		for range 200 {
			if get(ctx, "/report") != nil {
				break // refused
			}
		}
		return tr, built
	}
	state := func(tr *pipelinehttp.Transport, h pipelinehttp.Host) breaker.State {
		p, err := tr.Pipeline(h)
		require.NoError(t, err)
		return p.Breaker.State()
	}

	shared, _ := run(false)
	assert.Equal(t, breaker.Open, state(shared, host), "one breaker for both: the report reads as slow")

	routed, built := run(true)
	assert.Equal(t, []pipelinehttp.Host{host, reports}, built, "PerHost is called for the route too")
	assert.Equal(t, breaker.Closed, state(routed, host))
	assert.Equal(t, breaker.Closed, state(routed, reports))
	p, err := routed.Pipeline(reports)
	require.NoError(t, err)
	normal, ok := p.Breaker.NormalLatency()
	require.True(t, ok)
	assert.InEpsilon(t, float64(100*time.Millisecond), float64(normal), 0.01, "the route's normal is the report's")
	assert.Equal(t, srv.URL[len("http://"):]+"#reports", reports.String()[len("http://"):], "a route shows as a fragment")
	assert.Equal(t, 2, routed.Len())
}

// TestARouteKeepsTheReplayMarks marks one context with SendOnce and Route, in
// both orders: each mark keeps the other.
func TestARouteKeepsTheReplayMarks(t *testing.T) {
	for name, ctx := range map[string]context.Context{
		"route, then send once": pipelinehttp.SendOnce(pipelinehttp.Route(context.Background(), "r")),
		"send once, then route": pipelinehttp.Route(pipelinehttp.SendOnce(context.Background()), "r"),
	} {
		t.Run(name, func(t *testing.T) {
			var sent atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				sent.Add(1)
				w.WriteHeader(http.StatusServiceUnavailable)
			}))
			t.Cleanup(srv.Close)
			tr := pipelinehttp.NewTransport(nil)
			t.Cleanup(tr.CloseIdleConnections)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			require.NoError(t, err)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, int32(1), sent.Load(), "sent once, for all its 503")
			assert.Equal(t, 1, tr.Len())
			for h := range tr.Breakers {
				assert.Equal(t, "r", h.Route)
			}
		})
	}
}
