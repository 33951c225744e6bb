package dashboard_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// logBuffer is a logger's output, safe for the server's goroutines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestNoActionsWithoutAnAuthorizer: the endpoints do not exist, and the
// page shows no buttons.
func TestNoActionsWithoutAnAuthorizer(t *testing.T) {
	brk, err := breaker.New(breaker.Config{Name: "payments"})
	require.NoError(t, err)
	d := newDashboard(t, dashboard.Config{Registry: registry(health.Of("payments", brk, nil))})
	for _, action := range []string{"isolate", "reset"} {
		assert.Equal(t, http.StatusNotFound, post(d, "/"+action, "dependency=payments").Code, action)
		assert.Equal(t, http.StatusNotFound, get(d, "/"+action).Code, action)
	}
	assert.Equal(t, breaker.Closed, brk.State())
	assert.NotContains(t, get(d, "/").Body.String(), "<form")
	assert.False(t, readState(t, d).Actions)
}

// TestActionsWithAnAuthorizer isolates and resets a breaker over loopback,
// with the page's own form, and checks each action is logged; then a
// refusal by the authorizer, a cross-site request, a GET and an unknown
// dependency, none of which changes the breaker.
func TestActionsWithAnAuthorizer(t *testing.T) {
	brk, err := breaker.New(breaker.Config{Name: "payments"})
	require.NoError(t, err)
	var logs logBuffer
	var refuse bool
	var mu sync.Mutex
	authorize := func(r *http.Request) error {
		mu.Lock()
		defer mu.Unlock()
		if refuse || r.Header.Get("X-Operator") != "alice" {
			return errors.New("not an operator")
		}
		return nil
	}
	d := newDashboard(t, dashboard.Config{
		Registry:  registry(health.Of("payments", brk, nil)),
		Authorize: authorize,
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
	})
	srv := httptest.NewServer(http.StripPrefix("/debug/dashboard", d))
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(action string, form url.Values, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/debug/dashboard/"+action, strings.NewReader(form.Encode()))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Operator", "alice")
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		return resp
	}
	payments := url.Values{"dependency": {"payments"}, "n": {"0"}}

	page := get(d, "/").Body.String()
	assert.Contains(t, page, `<form class="act" method="post" action="isolate">`)
	assert.Contains(t, page, `<input type="hidden" name="dependency" value="payments"/>`)

	resp := do("isolate", payments, "Sec-Fetch-Site", "same-origin")
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, "./", resp.Header.Get("Location"), "back to the page")
	assert.Equal(t, breaker.Isolated, brk.State())
	assert.Contains(t, logs.String(), `level=INFO msg="dashboard: action done" action=isolate`)
	assert.Contains(t, logs.String(), `dependency=payments n=0 from=closed to=isolated`)

	resp = do("reset", payments)
	assert.Equal(t, http.StatusSeeOther, resp.StatusCode)
	assert.Equal(t, breaker.Closed, brk.State())
	assert.Contains(t, logs.String(), `from=isolated to=closed`)

	mu.Lock()
	refuse = true
	mu.Unlock()
	assert.Equal(t, http.StatusForbidden, do("isolate", payments).StatusCode)
	assert.Contains(t, logs.String(), `level=WARN msg="dashboard: action refused: not authorized" action=isolate`)
	assert.Contains(t, logs.String(), `error="not an operator"`)
	mu.Lock()
	refuse = false
	mu.Unlock()

	assert.Equal(t, http.StatusForbidden, do("isolate", payments, "Sec-Fetch-Site", "cross-site").StatusCode)
	assert.Equal(t, http.StatusForbidden, do("isolate", payments, "Origin", "https://evil.example").StatusCode)
	assert.Contains(t, logs.String(), `msg="dashboard: action refused: cross-origin request"`)

	assert.Equal(t, http.StatusNotFound, do("isolate", url.Values{"dependency": {"ledger"}}).StatusCode)
	assert.Equal(t, http.StatusNotFound, do("isolate", url.Values{"dependency": {"payments"}, "n": {"1"}}).StatusCode)
	assert.Equal(t, http.StatusBadRequest, do("isolate", url.Values{"dependency": {"payments"}, "n": {"-1"}}).StatusCode)
	assert.Contains(t, logs.String(), `msg="dashboard: action refused: no such breaker" action=isolate`)

	r, err := http.Get(srv.URL + "/debug/dashboard/isolate")
	require.NoError(t, err)
	require.NoError(t, r.Body.Close())
	assert.Equal(t, http.StatusMethodNotAllowed, r.StatusCode)
	assert.Equal(t, "POST", r.Header.Get("Allow"))

	assert.Equal(t, breaker.Closed, brk.State(), "no refused action changed the breaker")
	assert.True(t, readState(t, d).Actions)
}

// TestAnActionOnADependencyWithoutABreaker, or one whose Source is the
// user's own, finds no breaker to act on.
func TestAnActionOnADependencyWithoutABreaker(t *testing.T) {
	var own ownSource
	d := newDashboard(t, dashboard.Config{
		Registry:  registry(own),
		Authorize: func(*http.Request) error { return nil },
		Logger:    slog.New(slog.DiscardHandler),
	})
	assert.Equal(t, http.StatusNotFound, post(d, "/isolate", "dependency=own").Code)
	assert.NotContains(t, get(d, "/").Body.String(), "<form", "no buttons for a dependency without a breaker")
}
