package pipelinehttp_test

// A call's criticality level and tenant, carried by the transport to real
// loopback servers, and on through a second hop.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/criticality"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/bulkhead"
	"github.com/resilience-go/pipeline/shed"
)

// What a server heard, as it answers it in its response's headers: the
// values of the two headers, joined by "|", and whether each was there.
const (
	heardLevel     = "Heard-Level"
	heardTenant    = "Heard-Tenant"
	heardHasLevel  = "Heard-Has-Level"
	heardHasTenant = "Heard-Has-Tenant"
)

// newListener returns a loopback server that answers every request with
// what it heard of the request's criticality headers; the test closes it.
func newListener(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tell(w, r.Header)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// tell writes what h holds of the criticality headers into w's headers.
func tell(w http.ResponseWriter, h http.Header) {
	l, hasL := h[pipelinehttp.CriticalityHeader]
	tn, hasT := h[pipelinehttp.TenantHeader]
	w.Header().Set(heardLevel, strings.Join(l, "|"))
	w.Header().Set(heardTenant, strings.Join(tn, "|"))
	w.Header().Set(heardHasLevel, fmt.Sprint(hasL))
	w.Header().Set(heardHasTenant, fmt.Sprint(hasT))
}

// newClient returns an http.Client over a transport of cfg; the test
// closes its idle connections.
func newClient(t *testing.T, cfg pipelinehttp.Config) *http.Client {
	t.Helper()
	tr, err := pipelinehttp.New(cfg)
	require.NoError(t, err)
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// call sends a GET to url with ctx and header through c, and returns the
// response's headers, its body read and closed, failing the test if the
// call fails.
func call(t *testing.T, c *http.Client, ctx context.Context, url string, header http.Header) http.Header {
	t.Helper()
	h, err := fetch(c, ctx, url, header)
	require.NoError(t, err)
	return h
}

// fetch is call's work, for goroutines other than the test's: it returns an
// error for a call that fails or is not answered 200.
func fetch(c *http.Client, ctx context.Context, url string, header http.Header) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if header != nil {
		req.Header = header
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %s", resp.Status)
	}
	return resp.Header, nil
}

var levels = []criticality.Level{criticality.Sheddable, criticality.Default, criticality.Critical}

func TestTheLevelAndTenantCrossTheHop(t *testing.T) {
	srv := newListener(t)
	c := newClient(t, pipelinehttp.Config{})
	for _, l := range levels {
		ctx := criticality.WithTenant(criticality.With(t.Context(), l), "acme")
		mine := http.Header{"Accept": {"text/plain"}}
		got := call(t, c, ctx, srv.URL, mine)
		assert.Equal(t, l.String(), got.Get(heardLevel))
		assert.Equal(t, "acme", got.Get(heardTenant))
		assert.Equal(t, http.Header{"Accept": {"text/plain"}}, mine, "the caller's header map is not modified")
	}
}

// An unmarked call sends no level, so that the server's default applies; a
// tenant goes on its own.
func TestAnUnmarkedCallSendsNoLevel(t *testing.T) {
	srv := newListener(t)
	c := newClient(t, pipelinehttp.Config{})
	got := call(t, c, t.Context(), srv.URL, nil)
	assert.Equal(t, "false", got.Get(heardHasLevel))
	assert.Equal(t, "false", got.Get(heardHasTenant))

	got = call(t, c, criticality.WithTenant(t.Context(), "acme"), srv.URL, nil)
	assert.Equal(t, "false", got.Get(heardHasLevel), "a tenant is no level")
	assert.Equal(t, "acme", got.Get(heardTenant))

	undone := criticality.With(criticality.With(t.Context(), criticality.Critical), 0)
	got = call(t, c, undone, srv.URL, nil)
	assert.Equal(t, "false", got.Get(heardHasLevel), "a level taken off again is none")
}

// A header the caller set itself is sent as it is, even with no value
// (which sends none).
func TestTheCallersOwnHeaderWins(t *testing.T) {
	srv := newListener(t)
	c := newClient(t, pipelinehttp.Config{})
	ctx := criticality.WithTenant(criticality.With(t.Context(), criticality.Critical), "acme")
	mine := http.Header{pipelinehttp.CriticalityHeader: {"sheddable"}, pipelinehttp.TenantHeader: nil}
	got := call(t, c, ctx, srv.URL, mine)
	assert.Equal(t, "sheddable", got.Get(heardLevel))
	assert.Equal(t, "false", got.Get(heardHasTenant), "the caller's empty tenant header sends none")
	assert.Equal(t, []string{"sheddable"}, mine[pipelinehttp.CriticalityHeader])
	assert.Nil(t, mine[pipelinehttp.TenantHeader])
}

func TestATenantGoesAsPrintableASCIIWithinItsBound(t *testing.T) {
	srv := newListener(t)
	c := newClient(t, pipelinehttp.Config{})
	long := strings.Repeat("t", 3*criticality.MaxTenant)
	got := call(t, c, criticality.WithTenant(t.Context(), long), srv.URL, nil)
	assert.Equal(t, long[:criticality.MaxTenant], got.Get(heardTenant))
	for _, bad := range []string{"café", "a\nb", "tab\there", "\x7f"} {
		ctx := criticality.WithTenant(criticality.With(t.Context(), criticality.Sheddable), bad)
		got := call(t, c, ctx, srv.URL, nil)
		assert.Equal(t, "false", got.Get(heardHasTenant), "%q is not sent", bad)
		assert.Equal(t, "sheddable", got.Get(heardLevel), "the level goes all the same")
	}
}

// Every attempt of a retried call carries the level: the first, answered
// 503, and the retry.
func TestEveryAttemptCarriesTheLevel(t *testing.T) {
	var n atomic.Int32
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get(pipelinehttp.CriticalityHeader))
		mu.Unlock()
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	c := newClient(t, pipelinehttp.Config{})
	call(t, c, criticality.With(t.Context(), criticality.Critical), srv.URL, nil)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"critical", "critical"}, seen)
}

func TestPropagateCriticalityNamesTheHosts(t *testing.T) {
	srv := newListener(t)
	var asked atomic.Int32
	c := newClient(t, pipelinehttp.Config{PropagateCriticality: func(h pipelinehttp.Host) bool {
		asked.Add(1)
		return h.Name == "elsewhere.example"
	}})
	ctx := criticality.WithTenant(criticality.With(t.Context(), criticality.Critical), "acme")
	got := call(t, c, ctx, srv.URL, nil)
	assert.Equal(t, "false", got.Get(heardHasLevel))
	assert.Equal(t, "false", got.Get(heardHasTenant))
	assert.EqualValues(t, 1, asked.Load())
}

// recordingBase is a base transport that keeps the last request it was
// given and answers 200.
type recordingBase struct {
	mu   sync.Mutex
	last *http.Request
}

func (b *recordingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	b.last = r
	b.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// A protocol upgrade goes straight to the base transport, and carries the
// level all the same, on a copy of the caller's request.
func TestAnUpgradeCarriesTheLevel(t *testing.T) {
	base := &recordingBase{}
	tr, err := pipelinehttp.New(pipelinehttp.Config{Base: base})
	require.NoError(t, err)
	ctx := criticality.With(t.Context(), criticality.Sheddable)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://ws.example/", nil)
	require.NoError(t, err)
	req.Header.Set("Upgrade", "websocket")
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, "sheddable", base.last.Header.Get(pipelinehttp.CriticalityHeader))
	assert.Equal(t, "websocket", base.last.Header.Get("Upgrade"))
	assert.NotSame(t, req, base.last)
	assert.Empty(t, req.Header.Get(pipelinehttp.CriticalityHeader), "the caller's request is not modified")
}

// Client -> transport -> server A (shed, capping what callers outside the
// mesh claim at Default) -> transport -> server B (shed.Criticality): the
// level A serves a request at is the one B sees, with the tenant, and an
// unmarked call stays unmarked all the way.
func TestTheLevelCrossesTwoHops(t *testing.T) {
	type seen struct {
		level  criticality.Level
		marked bool
		tenant string
	}
	atB := make(chan seen, 1)
	b := httptest.NewServer(shed.Criticality(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, marked := criticality.Marked(r.Context())
		atB <- seen{criticality.From(r.Context()), marked, criticality.Tenant(r.Context())}
	}), nil))
	defer b.Close()

	toB := newClient(t, pipelinehttp.Config{})
	limit, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 8})
	require.NoError(t, err)
	a, err := shed.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, b.URL, nil)
		resp, err := toB.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_ = resp.Body.Close()
	}), shed.Config{
		Limits: []pipeline.Described{limit},
		Criticality: func(r *http.Request, claimed criticality.Level, ok bool) criticality.Level {
			if r.Header.Get("Mesh-Peer") != "" { // a stand-in for a peer's verified identity
				return claimed
			}
			return min(claimed, criticality.Default)
		},
	})
	require.NoError(t, err)
	srvA := httptest.NewServer(a)
	defer srvA.Close()
	toA := newClient(t, pipelinehttp.Config{})

	for _, tc := range []struct {
		name string
		ctx  context.Context
		peer bool
		want seen
	}{
		{"a peer's critical call", criticality.WithTenant(criticality.With(t.Context(), criticality.Critical), "acme"), true, seen{criticality.Critical, true, "acme"}},
		{"an outsider's critical call", criticality.WithTenant(criticality.With(t.Context(), criticality.Critical), "acme"), false, seen{criticality.Default, true, "acme"}},
		{"an outsider's sheddable call", criticality.With(t.Context(), criticality.Sheddable), false, seen{criticality.Sheddable, true, ""}},
		{"an unmarked call", t.Context(), true, seen{criticality.Default, false, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.peer {
				h.Set("Mesh-Peer", "orders")
			}
			call(t, toA, tc.ctx, srvA.URL, h)
			assert.Equal(t, tc.want, <-atB)
		})
	}
}

// Many calls at once, each with a level and tenant of its own, through one
// transport to a loopback server: each arrives with its own.
func TestManyCallsAtOnceKeepTheirLevels(t *testing.T) {
	srv := newListener(t)
	c := newClient(t, pipelinehttp.Config{})
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 8 {
				l := levels[(g+i)%len(levels)]
				tenant := fmt.Sprintf("tenant-%d-%d", g, i)
				ctx := criticality.WithTenant(criticality.With(context.Background(), l), tenant)
				got, err := fetch(c, ctx, srv.URL, nil)
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, l.String(), got.Get(heardLevel))
				assert.Equal(t, tenant, got.Get(heardTenant))
			}
		})
	}
	wg.Wait()
}
