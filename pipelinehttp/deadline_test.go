package pipelinehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// everyHost sends the deadline to every host.
func everyHost(pipelinehttp.Host) bool { return true }

// sendTimes is a base transport that notes when it sent each request.
type sendTimes struct {
	base http.RoundTripper
	mu   sync.Mutex
	at   []time.Time
}

func (s *sendTimes) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.at = append(s.at, time.Now())
	s.mu.Unlock()
	return s.base.RoundTrip(r)
}

func (s *sendTimes) last() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.at[len(s.at)-1]
}

// hop is a server of the two-hop test: it notes when each request
// arrived, its deadline, and when its handler saw its context end.
type hop struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	arrived  time.Time
	deadline time.Time
	reached  chan struct{} // closed when the first request's handler began
	ended    chan struct{} // closed when a handler saw its context end
	first    sync.Once
	once     sync.Once
}

func newHop(t *testing.T, serve func(h *hop, w http.ResponseWriter, r *http.Request)) *hop {
	h := &hop{reached: make(chan struct{}), ended: make(chan struct{})}
	h.Server = httptest.NewServer(pipelinehttp.ServerDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.requests.Add(1)
		d, _ := r.Context().Deadline()
		h.mu.Lock()
		h.arrived, h.deadline = time.Now(), d
		h.mu.Unlock()
		h.first.Do(func() { close(h.reached) })
		context.AfterFunc(r.Context(), func() { h.once.Do(func() { close(h.ended) }) })
		serve(h, w, r)
	})))
	t.Cleanup(h.Close)
	return h
}

func (h *hop) seen() (arrived, deadline time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.arrived, h.deadline
}

// client is a transport that sends the deadline to every host, over a base
// that notes its sends.
func client(t *testing.T) (*http.Client, *sendTimes) {
	base := &sendTimes{base: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(base.base.(*http.Transport).CloseIdleConnections)
	tr, err := pipelinehttp.New(pipelinehttp.Config{Base: base, PropagateDeadline: everyHost})
	require.NoError(t, err)
	return &http.Client{Transport: tr}, base
}

// Client -> our transport -> server A (ServerDeadline) -> our transport ->
// server B: B's deadline is no later than the client's, give or take the
// time each request spent in transit (a relative time is counted from its
// arrival); when the client gives up, A's and B's handlers see their
// contexts end.
func TestTheDeadlineCrossesTwoHops(t *testing.T) {
	b := newHop(t, func(_ *hop, w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // works until its caller gives up
	})
	toB, sentToB := client(t)
	a := newHop(t, func(_ *hop, w http.ResponseWriter, r *http.Request) {
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, b.URL, nil)
		resp, err := toB.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_, _ = io.Copy(w, resp.Body)
		_ = resp.Body.Close()
	})
	toA, sentToA := client(t)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second) // sooner than the attempt timeouts (10 s)
	defer cancel()
	clientDeadline, _ := ctx.Deadline()
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
		resp, err := toA.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		done <- err
	}()
	select {
	case <-b.reached:
	case err := <-done:
		t.Fatalf("the call ended before B was reached: %v", err)
	}
	arrivedA, deadlineA := a.seen()
	arrivedB, deadlineB := b.seen()
	transit := arrivedA.Sub(sentToA.last()) + arrivedB.Sub(sentToB.last())
	assert.False(t, deadlineA.IsZero(), "A has a deadline")
	assert.False(t, deadlineB.After(clientDeadline.Add(transit)), "B's deadline %v, the client's %v, %v in transit", deadlineB, clientDeadline, transit)
	assert.True(t, deadlineB.After(clientDeadline.Add(-time.Second)), "B's deadline %v is the client's %v, not a default", deadlineB, clientDeadline)

	cancel() // the client gives up
	for _, h := range []*hop{a, b} {
		select {
		case <-h.ended:
		case <-time.After(10 * time.Second):
			t.Fatal("a handler's context did not end when the client gave up")
		}
	}
	assert.ErrorIs(t, <-done, context.Canceled)
}

// An attempt whose time left is below the median of the host's recent
// attempts is not sent: refused at once with reason TooLittleTime, and B
// never sees it.
func TestTooLittleTimeIsNotSent(t *testing.T) {
	b := newHop(t, func(_ *hop, w http.ResponseWriter, r *http.Request) {
		working(r.Context(), 100*time.Millisecond)
	})
	toB, _ := client(t)
	var wg sync.WaitGroup
	for range 2 * pipelinehttp.MinMedianSamples { // B's median: about 100 ms
		wg.Go(func() {
			resp, err := toB.Get(b.URL)
			if assert.NoError(t, err) {
				_ = resp.Body.Close()
			}
		})
	}
	wg.Wait()
	before := b.requests.Load()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.URL, nil)
	_, err := toB.Do(req)
	assert.ErrorIs(t, err, pipeline.TooLittleTime)
	se, ok := errors.AsType[*pipeline.StopError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, "http", se.Stage)
	assert.Equal(t, before, b.requests.Load(), "B never saw it")
}

// ServerDeadline only ever shortens a request's deadline: a header asking
// for more time than the server gives leaves the server's deadline, a
// header that is not a number is ignored, and a caller with no time left
// is answered 504 without the handler running.
func TestServerDeadlineOnlyShortens(t *testing.T) {
	var got time.Duration
	var ran atomic.Bool
	h := pipelinehttp.ServerDeadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran.Store(true)
		got = -1
		if d, ok := r.Context().Deadline(); ok {
			got = time.Until(d).Round(time.Second)
		}
	}))
	serve := func(header string, serverTimeout time.Duration) int {
		ran.Store(false)
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		if header != "" {
			req.Header.Set(pipelinehttp.TimeoutHeader, header)
		}
		if serverTimeout > 0 {
			ctx, cancel := context.WithTimeout(req.Context(), serverTimeout)
			defer cancel()
			req = req.WithContext(ctx)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code
	}
	serve("5000", 0)
	assert.Equal(t, 5*time.Second, got, "the caller's time, where the server had none")
	serve("5000", 2*time.Second)
	assert.Equal(t, 2*time.Second, got, "never later than the server's own")
	serve("1000", 2*time.Second)
	assert.Equal(t, time.Second, got, "earlier than the server's")
	for _, bad := range []string{"soon", "-5", "1.5", "99999999999999999999"} {
		serve(bad, 0)
		assert.Equal(t, time.Duration(-1), got, "%q is ignored", bad)
	}
	serve(strconv.FormatInt(1<<62, 10), 0)
	assert.Positive(t, got, "a huge header is a long deadline, not an overflow")
	assert.Equal(t, http.StatusGatewayTimeout, serve("0", 0))
	assert.False(t, ran.Load(), "no work for a caller with no time left")
}

// Without PropagateDeadline, or for a host it leaves out, no header is sent.
func TestTheDeadlineGoesOnlyWhereItIsSent(t *testing.T) {
	var header atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header.Store(r.Header.Get(pipelinehttp.TimeoutHeader))
	}))
	defer srv.Close()
	for _, c := range []struct {
		name string
		cfg  pipelinehttp.Config
		sent bool
	}{
		{name: "by default", cfg: pipelinehttp.Config{}},
		{name: "another host", cfg: pipelinehttp.Config{PropagateDeadline: func(h pipelinehttp.Host) bool { return h.Name == "internal.example" }}},
		{name: "every host", cfg: pipelinehttp.Config{PropagateDeadline: everyHost}, sent: true},
	} {
		tr, err := pipelinehttp.New(c.cfg)
		require.NoError(t, err)
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		v := header.Load().(string)
		if c.sent {
			ms, err := strconv.Atoi(v)
			require.NoError(t, err, "%s: %q", c.name, v)
			assert.InDelta(t, 10_000, ms, 1_000, "%s: the attempt timeout's time left", c.name)
		} else {
			assert.Empty(t, v, c.name)
		}
		assert.Empty(t, req.Header.Get(pipelinehttp.TimeoutHeader), "the caller's header map is not touched")
		tr.CloseIdleConnections()
	}
}
