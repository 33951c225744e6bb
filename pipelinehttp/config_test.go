package pipelinehttp_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/outcome"
	"github.com/resilience-go/pipeline/pipelinehttp"
	"github.com/resilience-go/pipeline/policy/retry"
	"github.com/resilience-go/pipeline/standard"
)

// TestConfigValidate checks that every impossible setting is refused, each
// named with its field and value, all in one error.
func TestConfigValidate(t *testing.T) {
	require.NoError(t, pipelinehttp.Config{}.Validate())
	shared, err := budget.New(budget.Config{})
	require.NoError(t, err)
	cfg := pipelinehttp.Config{
		MaxHosts:  -1,
		IdleAfter: -time.Second,
		Standard: standard.Config{
			Name:    "api",
			Clock:   clockwork.NewFakeClock(),
			Timeout: -time.Second,
			Retry:   retry.Config{Budget: shared},
		},
	}
	err = cfg.Validate()
	require.Error(t, err)
	for _, want := range []string{
		"pipelinehttp: Config.MaxHosts must not be negative (0 means the default 1024), got -1",
		"pipelinehttp: Config.IdleAfter must not be negative (0 means the default 10m0s), got -1s",
		`pipelinehttp: Config.Standard.Name must be empty: each host's pipeline is named after its host, got "api"`,
		"pipelinehttp: Config.Standard.Clock must be nil",
		"pipelinehttp: Config.Standard: standard: Config.Timeout must not be negative",
		"pipelinehttp: Config.Standard: standard: Config.Retry.Budget must be nil",
	} {
		assert.Contains(t, err.Error(), want)
	}
	_, newErr := pipelinehttp.New(cfg)
	assert.Equal(t, err.Error(), newErr.Error(), "New refuses what Validate reports")
}

// TestPerHostRefused checks that a host whose own configuration cannot work
// fails its requests, naming PerHost and the host, without sending them.
func TestPerHostRefused(t *testing.T) {
	srv := newFaultServer(t, serverOpts{}, script1(replies(okReply)))
	h := newHarness(t, newBase(t, srv, 0), pipelinehttp.Config{
		PerHost: func(_ pipelinehttp.Host, c standard.Config) standard.Config {
			c.AttemptTimeout = time.Minute // longer than the 30 s call
			return c
		},
	})
	body := &onceBody{Reader: strings.NewReader("x")}
	req := newRequest(t, http.MethodPost, srv.URL, "1", "")
	req.Body = body
	_, _, err := h.do(t, req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "pipelinehttp: Config.PerHost("+srv.URL+"): standard: Config.AttemptTimeout must be shorter")
	assert.Zero(t, srv.total())
	assert.Zero(t, h.tr.Len())
	assert.True(t, body.closed.Load(), "the request's body was not closed")
}

// TestPerHost gives one host a configuration of its own: one attempt, where
// every other host keeps three. Each host has its own breaker, and its
// pipeline's events name it.
func TestPerHost(t *testing.T) {
	flaky := newFaultServer(t, serverOpts{}, script1(replies(unavailableReply, okReply)))
	strict := newFaultServer(t, serverOpts{}, script1(replies(unavailableReply, okReply)))
	strictHost := hostOf(t, strict)
	var hosts []string
	h := newHarness(t, http.DefaultTransport.(*http.Transport).Clone(), pipelinehttp.Config{
		Standard: quick(),
		PerHost: func(host pipelinehttp.Host, c standard.Config) standard.Config {
			hosts = append(hosts, c.Name) // the registry builds one host at a time here
			if host == strictHost {
				c.Retry.MaxAttempts = 1
			}
			return c
		},
	})

	resp, waits, err := h.do(t, newRequest(t, http.MethodGet, flaky.URL, "1", ""))
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	requireWhole(t, resp, errorSize)
	assert.Len(t, waits, 1)

	resp, waits, err = h.do(t, newRequest(t, http.MethodGet, strict.URL, "1", ""))
	require.NoError(t, err)
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	requireWhole(t, resp, errorSize)
	assert.Empty(t, waits)

	assert.Equal(t, []string{flaky.URL, strict.URL}, hosts, "each host's configuration is named after it")
	assert.Equal(t, 2, h.attemptsOf(flaky.URL))
	assert.Equal(t, 1, h.attemptsOf(strict.URL))
	failures := map[string]int{}
	for host, snap := range h.tr.Breakers {
		failures[host.String()] = snap.ConsecutiveFailures
	}
	assert.Equal(t, map[string]int{flaky.URL: 0, strict.URL: 1}, failures)
}

// TestMaxHosts checks that the transport keeps state for MaxHosts hosts at
// most, evicting the one seen longest ago.
func TestMaxHosts(t *testing.T) {
	var urls []string
	for range 3 {
		urls = append(urls, newFaultServer(t, serverOpts{}, script1(replies(okReply))).URL)
	}
	h := newHarness(t, http.DefaultTransport.(*http.Transport).Clone(), pipelinehttp.Config{MaxHosts: 2})
	for _, u := range urls {
		resp, _, err := h.do(t, newRequest(t, http.MethodGet, u, "1", ""))
		require.NoError(t, err)
		requireWhole(t, resp, errorSize)
	}
	assert.Equal(t, 2, h.tr.Len())
	var held []string
	for host := range h.tr.Breakers {
		held = append(held, host.String())
	}
	assert.Equal(t, []string{urls[2], urls[1]}, held, "the newest first")
}

// TestHostOf checks the key of a URL: scheme and host in lower case, the
// scheme's default port made explicit.
func TestHostOf(t *testing.T) {
	for raw, want := range map[string]string{
		"https://API.Example.com/v1":      "https://api.example.com:443",
		"https://api.example.com:443/v2":  "https://api.example.com:443",
		"HTTP://api.example.com":          "http://api.example.com:80",
		"http://api.example.com:8080/x?y": "http://api.example.com:8080",
		"http://[::1]/":                   "http://[::1]:80",
		"http://[::1]:9000/":              "http://[::1]:9000",
		"ftp://files.example.com/a":       "ftp://files.example.com",
	} {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		assert.Equal(t, want, pipelinehttp.HostOf(u).String(), raw)
	}
	a, _ := url.Parse("https://API.example.com/v1")
	b, _ := url.Parse("https://api.example.com:443/v2")
	assert.Equal(t, pipelinehttp.HostOf(a), pipelinehttp.HostOf(b))
	assert.Equal(t, pipelinehttp.Host{Scheme: "https", Name: "api.example.com", Port: "443"}, pipelinehttp.HostOf(a))
}

// attemptsOf returns the attempts the pipelines named name made.
func (h *harness) attemptsOf(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.attempts[name]
}

// observer is an Observer of no use but its type.
type observer struct{ health.Observer }

// TestBadTransportsFailAtOnceNamingTheFix: a nil *http.Transport as the base,
// and a zero Transport, used to panic with a raw nil dereference at the first
// request; they now fail at once, saying what to pass instead (issue #27
// item 11).
func TestBadTransportsFailAtOnceNamingTheFix(t *testing.T) {
	_, err := pipelinehttp.New(pipelinehttp.Config{Base: (*http.Transport)(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Config.Base is a nil *http.Transport: pass nil for http.DefaultTransport")
	assert.PanicsWithError(t, err.Error(), func() { pipelinehttp.NewTransport((*http.Transport)(nil)) })
	assert.NotPanics(t, func() { pipelinehttp.NewTransport(nil) })
	_, err = pipelinehttp.New(pipelinehttp.Config{Observer: (*observer)(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Config.Observer is a nil *pipelinehttp_test.observer: pass nil for none")

	var zero pipelinehttp.Transport
	const want = "pipelinehttp: Transport used without pipelinehttp.New or NewTransport (its zero value is not usable)"
	req := httptest.NewRequest(http.MethodGet, "http://example.test/", nil)
	assert.PanicsWithValue(t, want, func() { _, _ = zero.RoundTrip(req) })
	assert.PanicsWithValue(t, want, func() { zero.Len() })
	assert.PanicsWithValue(t, want, func() { _, _ = zero.Pipeline(pipelinehttp.Host{}) })
	assert.PanicsWithValue(t, want, func() { zero.CloseIdleConnections() })
}

// TestAClassifyOfAnUnknownKindIsRefused: Config.Classify returning a kind
// that does not exist used to be accepted, and the 200 came back a success
// (issue #27 item 5); the call now fails with an error saying where the kind
// came from, and the response is closed.
func TestAClassifyOfAnUnknownKindIsRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	t.Cleanup(srv.Close)
	tr, err := pipelinehttp.New(pipelinehttp.Config{Classify: func(*http.Response, error) (outcome.Verdict, bool) {
		return outcome.Verdict{Kind: 42}, true
	}})
	require.NoError(t, err)
	t.Cleanup(tr.CloseIdleConnections)
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if resp != nil {
		resp.Body.Close()
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Config.Classify")
	assert.Contains(t, err.Error(), "gave outcome.Kind(42): outcome: not a kind of outcome")
	assert.ErrorIs(t, err, outcome.ErrUnknownKind)
}
