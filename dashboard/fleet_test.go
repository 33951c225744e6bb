package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// fleet is what the tests read of fleet.json.
type fleet struct {
	Peers []struct {
		URL          string `json:"url"`
		Err          string `json:"error"`
		Dependencies []struct {
			Name, State string
		} `json:"dependencies"`
	} `json:"peers"`
	Unreachable int `json:"unreachable"`
	Omitted     int `json:"omitted"`
}

// TestAFleetOf200 polls 200 processes' health views over loopback, at
// most 8 at once, beside three that give none (one refuses connections,
// one answers 500, one answers HTML), and checks fleet.json and the grid.
func TestAFleetOf200(t *testing.T) {
	const n, most = 200, 8
	var inFlight, peak atomic.Int64
	var urls []string
	for i := range n {
		ledger, err := breaker.New(breaker.Config{Name: "ledger"})
		require.NoError(t, err)
		if i%10 == 0 {
			ledger.Isolate()
		}
		deps := registry(health.Of("ledger", ledger, nil), health.Of("search", nil, nil))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			now := inFlight.Add(1)
			defer inFlight.Add(-1)
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			deps.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		urls = append(urls, srv.URL+"/debug/dependencies")
	}
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	require.NoError(t, refused.Close()) // nothing listens there now
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusInternalServerError)
	}))
	defer failing.Close()
	html := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "<html>not json</html>")
	}))
	defer html.Close()
	urls = append(urls, "http://"+refused.Addr().String()+"/", failing.URL, html.URL)

	var calls atomic.Int64
	d := newDashboard(t, dashboard.Config{
		Registry:        registry(),
		Peers:           func() []string { calls.Add(1); return urls },
		PeerConcurrency: most,
		PeerTimeout:     30 * time.Second, // loopback answers long before; a slow machine may be slow
		Interval:        time.Hour,        // the view is polled once, and kept
	})
	w := get(d, "/fleet.json")
	require.Equal(t, http.StatusOK, w.Code)
	var f fleet
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &f))
	require.Len(t, f.Peers, n+3)
	assert.Equal(t, 3, f.Unreachable)
	isolated := 0
	for i, p := range f.Peers[:n] {
		require.Empty(t, p.Err, p.URL)
		require.Len(t, p.Dependencies, 2, p.URL)
		assert.Equal(t, "ledger", p.Dependencies[0].Name)
		if p.Dependencies[0].State == "isolated" {
			isolated++
			assert.Zero(t, i%10)
		}
		assert.Equal(t, "none", p.Dependencies[1].State, "search has no breaker")
	}
	assert.Equal(t, n/10, isolated)
	assert.Contains(t, f.Peers[n].Err, "connect")
	assert.Contains(t, f.Peers[n+1].Err, "HTTP 500")
	assert.Contains(t, f.Peers[n+2].Err, "not a health view")
	assert.LessOrEqual(t, peak.Load(), int64(most), "at most PeerConcurrency peers at once")

	page := get(d, "/").Body.String()
	assert.Equal(t, int64(1), calls.Load(), "the page used the view fleet.json polled")
	_, grid, ok := strings.Cut(page, `<table id="fleet">`)
	require.True(t, ok, "the page has the fleet view")
	grid, _, _ = strings.Cut(grid, "</table>")
	assert.Equal(t, 2*(n+3), strings.Count(grid, "<rect "), "a cell per process and dependency")
	assert.Equal(t, n/10, strings.Count(grid, `class="s-isolated"`))
	assert.Equal(t, 2*3, strings.Count(grid, `class="s-unreachable"`))
	assert.Contains(t, grid, `<span class="badge s-closed">closed 180</span>`)
	assert.Contains(t, grid, `<span class="badge s-isolated">isolated 20</span>`)
	assert.Contains(t, grid, `<span class="badge s-unreachable">unreachable 3</span>`)
	assert.Contains(t, page, "203 processes polled")
	assert.Contains(t, page, "3 unreachable")
}

// TestAPeerThatDoesNotAnswer is cut at PeerTimeout, on virtual time, and a
// view younger than Interval is served again without polling.
func TestAPeerThatDoesNotAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := roundTrip(func(r *http.Request) (*http.Response, error) {
			if strings.Contains(r.URL.Host, "silent") {
				<-r.Context().Done()
				return nil, r.Context().Err()
			}
			return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{},
				Body: jsonBody(`{"dependencies":[{"name":"ledger","breaker":{"state":"open"}}]}`)}, nil
		})
		var calls atomic.Int64
		d := newDashboard(t, dashboard.Config{
			Registry: registry(),
			Peers: func() []string {
				calls.Add(1)
				return []string{"http://silent-1", "http://up", "http://silent-2", "ftp://up"}
			},
			PeerTimeout: 2 * time.Second,
			Interval:    5 * time.Second,
			Client:      &http.Client{Transport: hang},
		})
		start := time.Now()
		var f fleet
		require.NoError(t, json.Unmarshal(get(d, "/fleet.json").Body.Bytes(), &f))
		assert.Equal(t, 2*time.Second, time.Since(start), "the poll waited PeerTimeout for the silent peers")
		require.Len(t, f.Peers, 4)
		assert.Equal(t, 3, f.Unreachable)
		assert.Equal(t, "no answer: the poll's PeerTimeout elapsed", f.Peers[0].Err)
		assert.Empty(t, f.Peers[1].Err)
		assert.Equal(t, "open", f.Peers[1].Dependencies[0].State)
		assert.Equal(t, "not an http or https URL", f.Peers[3].Err)

		time.Sleep(2 * time.Second)
		get(d, "/fleet.json")
		assert.Equal(t, int64(1), calls.Load(), "a view younger than Interval is served again")
		time.Sleep(time.Second)
		get(d, "/fleet.json")
		assert.Equal(t, int64(2), calls.Load(), "an older one is polled again")
	})
}

// TestManyViewersPollOnce: requests that arrive while the first poll runs
// wait for it, and the fleet is polled once.
func TestManyViewersPollOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		slow := roundTrip(func(r *http.Request) (*http.Response, error) {
			<-release
			return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}, Body: jsonBody(`{"dependencies":[]}`)}, nil
		})
		var calls atomic.Int64
		d := newDashboard(t, dashboard.Config{
			Registry: registry(),
			Peers:    func() []string { calls.Add(1); return []string{"http://a", "http://b"} },
			Client:   &http.Client{Transport: slow},
		})
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() { assert.Equal(t, http.StatusOK, get(d, "/fleet.json").Code) })
		}
		synctest.Wait() // every viewer is waiting: one for the peers, the others for it
		close(release)
		wg.Wait()
		assert.Equal(t, int64(1), calls.Load())
	})
}

// roundTrip adapts a function to an http.RoundTripper.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// jsonBody is a response body holding s.
func jsonBody(s string) *readCloser { return &readCloser{strings.NewReader(s)} }

type readCloser struct{ *strings.Reader }

func (*readCloser) Close() error { return nil }
