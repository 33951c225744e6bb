package shed_test

// The criticality a caller sends, read into the request's context over real
// loopback connections: by the limits and the handler of a Handler, and by
// the standalone Criticality middleware.

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

// mark is what a request's context said of its criticality.
type mark struct {
	Level  criticality.Level
	Marked bool
	Tenant string
}

func markOf(ctx context.Context) mark {
	_, ok := criticality.Marked(ctx)
	return mark{criticality.From(ctx), ok, criticality.Tenant(ctx)}
}

// String is the mark as a response header carries it.
func (m mark) String() string { return fmt.Sprintf("%v %v %q", m.Level, m.Marked, m.Tenant) }

// markHeader is the response header in which a handler answers the mark of
// its request's context.
const markHeader = "Mark"

// answerMark is a handler that answers the mark of its request's context.
var answerMark = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(markHeader, markOf(r.Context()).String())
})

// seer is a limit of one's own that admits every request and remembers
// the mark of the last one it saw.
type seer struct {
	mu   sync.Mutex
	last mark
}

func (s *seer) Stage() pipeline.StageInfo { return pipeline.StageInfo{Kind: "seer"} }

func (s *seer) Execute(ctx context.Context, next pipeline.Next[shed.Served]) pipeline.Result[shed.Served] {
	s.mu.Lock()
	s.last = markOf(ctx)
	s.mu.Unlock()
	return next.Run(ctx)
}

func (s *seer) seen() mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// serveMarks runs a loopback server of h; the test closes it.
func serveMarks(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// send sends a GET with header to srv and returns the mark its handler
// answered, or an error.
func send(srv *httptest.Server, header http.Header) (string, error) {
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		return "", err
	}
	req.Header = header
	resp, err := srv.Client().Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("answered %s", resp.Status)
	}
	return resp.Header.Get(markHeader), nil
}

// claims is a request's criticality headers: a level and a tenant, each
// left out when "".
func claims(level, tenant string) http.Header {
	h := http.Header{}
	if level != "" {
		h.Set(pipelinehttp.CriticalityHeader, level)
	}
	if tenant != "" {
		h.Set(pipelinehttp.TenantHeader, tenant)
	}
	return h
}

func TestTheLimitsAndTheHandlerSeeTheCallersLevel(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 4})
	require.NoError(t, err)
	s := &seer{}
	h, err := shed.New(answerMark, shed.Config{Limits: []pipeline.Described{b, s}})
	require.NoError(t, err)
	srv := serveMarks(t, h)
	long := strings.Repeat("x", 1000)
	for _, tc := range []struct {
		name   string
		header http.Header
		want   mark
	}{
		{"critical", claims("critical", "acme"), mark{criticality.Critical, true, "acme"}},
		{"sheddable", claims("sheddable", ""), mark{criticality.Sheddable, true, ""}},
		{"a level's name in capitals", claims("DEFAULT", ""), mark{criticality.Default, true, ""}},
		{"unmarked, the server's default", claims("", ""), mark{criticality.Default, false, ""}},
		{"a tenant without a level", claims("", "acme"), mark{criticality.Default, false, "acme"}},
		{"a long tenant, cut", claims("", long), mark{criticality.Default, false, long[:criticality.MaxTenant]}},
		{"garbage", claims("urgent!!", ""), mark{criticality.Default, false, ""}},
		{"a level that does not exist", claims("level(9)", ""), mark{criticality.Default, false, ""}},
		{"a huge value", claims(strings.Repeat("critical", 8<<10), strings.Repeat("é", 8<<10)), mark{criticality.Default, false, ""}},
		{"a tenant that is not ASCII", claims("critical", "café"), mark{criticality.Critical, true, ""}},
		{"a list, the first", claims(" sheddable , critical", ""), mark{criticality.Sheddable, true, ""}},
		{"two lines, the first", http.Header{pipelinehttp.CriticalityHeader: {"critical", "sheddable"}, pipelinehttp.TenantHeader: {"a", "b"}}, mark{criticality.Critical, true, "a"}},
		{"an empty value", http.Header{pipelinehttp.CriticalityHeader: {""}, pipelinehttp.TenantHeader: {""}}, mark{criticality.Default, false, ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := send(srv, tc.header)
			require.NoError(t, err)
			assert.Equal(t, tc.want.String(), got, "the handler")
			assert.Equal(t, tc.want, s.seen(), "the limits")
		})
	}
	assert.Equal(t, 0, b.InFlight())
}

// meshOnly trusts the level a peer of the mesh claims and caps everyone
// else's at Default. A header stands in for the peer's verified identity.
func meshOnly(r *http.Request, claimed criticality.Level, ok bool) criticality.Level {
	if r.Header.Get("Mesh-Peer") != "" {
		return claimed
	}
	return min(claimed, criticality.Default)
}

func TestAServerCapsWhatItsCallersClaim(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 4})
	require.NoError(t, err)
	s := &seer{}
	h, err := shed.New(answerMark, shed.Config{Limits: []pipeline.Described{b, s}, Criticality: meshOnly})
	require.NoError(t, err)
	srv := serveMarks(t, h)

	got, err := send(srv, claims("critical", ""))
	require.NoError(t, err)
	assert.Equal(t, mark{criticality.Default, true, ""}.String(), got, "an outsider's critical is served as default")
	assert.Equal(t, mark{criticality.Default, true, ""}, s.seen())

	got, err = send(srv, claims("sheddable", ""))
	require.NoError(t, err)
	assert.Equal(t, mark{criticality.Sheddable, true, ""}.String(), got, "the cap only lowers")

	peer := claims("critical", "acme")
	peer.Set("Mesh-Peer", "orders")
	got, err = send(srv, peer)
	require.NoError(t, err)
	assert.Equal(t, mark{criticality.Critical, true, "acme"}.String(), got, "a peer's critical is trusted")

	got, err = send(srv, claims("", ""))
	require.NoError(t, err)
	assert.Equal(t, mark{criticality.Default, false, ""}.String(), got, "an unmarked request stays unmarked")
}

// The decision is the server's for every request, marked or not: here a
// path of its own is served as Sheddable whatever the caller says, and
// what decide returns that is no level is none.
func TestTheServerDecidesForEveryRequest(t *testing.T) {
	var asked atomic.Int32
	decide := func(r *http.Request, claimed criticality.Level, ok bool) criticality.Level {
		asked.Add(1)
		switch r.URL.Path {
		case "/batch":
			return criticality.Sheddable
		case "/odd":
			return criticality.Level(42)
		}
		return claimed
	}
	srv := serveMarks(t, shed.Criticality(answerMark, decide))
	for path, want := range map[string]mark{
		"/batch": {criticality.Sheddable, true, ""},
		"/odd":   {criticality.Default, false, ""},
		"/":      {criticality.Critical, true, ""},
	} {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header = claims("critical", "")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		assert.Equal(t, want.String(), resp.Header.Get(markHeader), path)
	}
	assert.EqualValues(t, 3, asked.Load())
}

// A level or a tenant the server's own middleware put in the request's
// context, outside this one, wins over what the caller claims, and decide
// is not asked.
func TestTheServersOwnMarksWin(t *testing.T) {
	var asked atomic.Int32
	decide := func(r *http.Request, claimed criticality.Level, ok bool) criticality.Level {
		asked.Add(1)
		return claimed
	}
	inner := shed.Criticality(answerMark, decide)
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := criticality.WithTenant(r.Context(), "from-the-certificate")
		if r.URL.Path == "/pinned" {
			ctx = criticality.With(ctx, criticality.Sheddable)
		}
		inner.ServeHTTP(w, r.WithContext(ctx))
	})
	srv := serveMarks(t, auth)
	got, err := send(srv, claims("critical", "acme"))
	require.NoError(t, err)
	assert.Equal(t, mark{criticality.Critical, true, "from-the-certificate"}.String(), got)
	assert.EqualValues(t, 1, asked.Load())

	req, err := http.NewRequest(http.MethodGet, srv.URL+"/pinned", nil)
	require.NoError(t, err)
	req.Header = claims("critical", "acme")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, mark{criticality.Sheddable, true, "from-the-certificate"}.String(), resp.Header.Get(markHeader))
	assert.EqualValues(t, 1, asked.Load(), "a level set already is not decided again")
}

// Config.Refused sees the level the request was refused at.
func TestARefusalKnowsTheLevel(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 1})
	require.NoError(t, err)
	var h http.Handler
	inner := httptest.NewRecorder()
	h, err = shed.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header = claims("sheddable", "acme")
		h.ServeHTTP(inner, req) // while this one holds the only slot
	}), shed.Config{
		Limits: []pipeline.Described{b},
		Refused: func(w http.ResponseWriter, r *http.Request, status int, err *pipeline.StopError) {
			w.Header().Set(markHeader, markOf(r.Context()).String())
			w.WriteHeader(status)
		},
	})
	require.NoError(t, err)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusServiceUnavailable, inner.Code)
	assert.Equal(t, mark{criticality.Sheddable, true, "acme"}.String(), inner.Header().Get(markHeader))
}

func TestCriticalityWantsAHandler(t *testing.T) {
	assert.PanicsWithValue(t, "shed: Criticality: the next handler is nil", func() { shed.Criticality(nil, nil) })
}

// Many requests at once, each claiming a level and tenant of its own, some
// capped: each is served at its own.
func TestManyRequestsAtOnceKeepTheirLevels(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 64})
	require.NoError(t, err)
	h, err := shed.New(answerMark, shed.Config{Limits: []pipeline.Described{b}, Criticality: meshOnly})
	require.NoError(t, err)
	srv := serveMarks(t, h)
	levels := []criticality.Level{criticality.Sheddable, criticality.Default, criticality.Critical}
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 8 {
				l := levels[(g+i)%len(levels)]
				tenant := fmt.Sprintf("t%d.%d", g, i)
				header := claims(l.String(), tenant)
				want := mark{min(l, criticality.Default), true, tenant}
				if g%2 == 0 {
					header.Set("Mesh-Peer", "orders")
					want.Level = l
				}
				got, err := send(srv, header)
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, want.String(), got)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 0, b.InFlight())
}

// A request that claims no level costs nothing more to serve, behind a cap
// or not.
func TestAnUnmarkedRequestAllocatesNothingMore(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{MaxConcurrent: 1})
	require.NoError(t, err)
	h, err := shed.New(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), shed.Config{Limits: []pipeline.Described{b}, Criticality: meshOnly})
	require.NoError(t, err)
	w, r := httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Accept", "*/*")
	h.ServeHTTP(w, r)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }))
}
