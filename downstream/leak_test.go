package downstream_test

import (
	"context"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/hedge"
	"github.com/resilience-go/pipeline/policy/retry"
)

// eventually is the cap on every wait for something asynchronous (a server
// noticing a closed connection, a goroutine ending); the waits poll every tick.
const (
	eventually = 5 * time.Second
	tick       = 5 * time.Millisecond
)

// TestEveryDiscardedResponseIsClosed runs calls that are retried after a 503
// and calls that are hedged, and checks that every response the transport
// produced was closed exactly once: by Release if the pipeline discarded it, by
// the test if Execute returned it. Without Release, the retried 503s are never
// closed and pin their connections for as long as the call's response lives.
func TestEveryDiscardedResponseIsClosed(t *testing.T) {
	const calls = 20
	body := large()

	t.Run("with Release", func(t *testing.T) {
		goroutines := runtime.NumGoroutine()
		srv := newServer(t, body, mixed)
		client, tr := newClient(t)
		var events eventLog
		p := newPipeline(t, &events, nil)

		seen := map[fate]int{}
		for call := range calls {
			resp, rec, f := execute(t, p, &events, client, srv, call)
			seen[f]++
			switch f {
			case retried:
				// The retry releases the 503 before its backoff, so the
				// retry can reuse the 503's connection; if it did not, the
				// connection sits idle.
				assert.EqualValues(t, 1, rec.closes.Load(), "call %d: the retried 503 was not released", call)
				rs := tr.produced(call)
				reused := rs[len(rs)-1].conn.Load() == rec.conn.Load()
				tr.CloseIdleConnections()
				assert.True(t, reused || rec.conn.Load().closed.Load(),
					"call %d: the retried 503's connection was neither reused nor idle after Execute returned", call)
			case lostRace:
				assert.EqualValues(t, 1, rec.closes.Load(), "call %d: the 503 that lost the race was not released", call)
			}
			requireComplete(t, resp, body, call)
		}
		require.Positive(t, seen[retried], "no call had a 503 that a retry replaced")
		require.Positive(t, seen[lostRace], "no call had a 503 that lost a hedge race")

		assertAllClosed(t, tr, srv, &events, goroutines)
	})

	t.Run("without Release", func(t *testing.T) {
		srv := newServer(t, body, mixed)
		client, tr := newClient(t)
		var events eventLog
		p := newPipeline(t, &events, func(o *pipeline.Options[*http.Response]) { o.Release = nil })

		seen := map[fate]int{}
		for call := range calls {
			resp, rec, f := execute(t, p, &events, client, srv, call)
			seen[f]++
			switch f {
			case retried:
				assert.Zero(t, rec.closes.Load(), "call %d: the retried 503 was closed", call)
				tr.CloseIdleConnections()
				assert.False(t, rec.conn.Load().closed.Load(),
					"call %d: the retried 503's connection was idle, though its body was never read or closed", call)
			case lostRace:
				assert.Zero(t, rec.closes.Load(), "call %d: the 503 that lost the race was closed", call)
			}
			requireComplete(t, resp, body, call)
		}
		require.Positive(t, seen[retried], "no call had a 503 that a retry replaced")
		require.Positive(t, seen[lostRace], "no call had a 503 that lost a hedge race")

		unclosed := 0
		for _, rec := range tr.produced(-1) {
			assert.LessOrEqual(t, rec.closes.Load(), int32(1))
			if rec.closes.Load() == 0 {
				unclosed++
			}
		}
		// The test closed each of the calls' responses; the pipeline closed none.
		assert.Equal(t, len(tr.produced(-1))-calls, unclosed)
		assert.GreaterOrEqual(t, unclosed, seen[retried]+seen[lostRace])

		// Closing a call's response ends the timeout stage's context, which the
		// pinned 503s' requests derive from, so the transport tears their
		// connections down: the leak lasts as long as the response, no longer.
		tr.CloseIdleConnections()
		assert.Eventually(t, func() bool { return srv.openConns() == 0 }, eventually, tick,
			"the server still has connections open")
	})
}

// assertAllClosed ends a test: every response the transport produced was
// closed exactly once, the server is left with no open connection once the
// idle ones are closed, and no goroutine outlives the calls.
func assertAllClosed(t *testing.T, tr *countingTransport, srv *server, events *eventLog, goroutines int) {
	t.Helper()
	for _, rec := range tr.produced(-1) {
		assert.EqualValues(t, 1, rec.closes.Load(), "call %d: a %d response's body was closed %d times", rec.call, rec.status, rec.closes.Load())
	}
	t.Logf("%d responses on %d connections; %d hedges, %d retries",
		len(tr.produced(-1)), srv.accepted(), events.count(hedge.Hedged{}.Name()), events.count(retry.Scheduled{}.Name()))
	tr.CloseIdleConnections()
	assert.Eventually(t, func() bool { return srv.openConns() == 0 }, eventually, tick,
		"the server still has connections open")
	srv.Close()
	assertNoLeakedGoroutines(t, goroutines)
}

// assertNoLeakedGoroutines waits until no more goroutines run than the
// baseline taken at the start of the test, and otherwise logs their stacks.
func assertNoLeakedGoroutines(t *testing.T, baseline int) {
	t.Helper()
	// Eventually runs the condition on a goroutine of its own: that one is
	// allowed.
	if !assert.Eventually(t, func() bool { return runtime.NumGoroutine() <= baseline+1 }, eventually, tick,
		"goroutines leaked: %d at the start", baseline) {
		var stacks strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
		t.Log(stacks.String())
	}
}

// fate is what became of the 503 a call's first request got, if it got one.
// Which fate a scripted call meets depends on timing (a 503 slower than the
// hedge delay is raced by a hedge; a hedge delay above raceFirst lets the
// retry replace a raced call's 503), so the tests read it from the events.
type fate int

const (
	other    fate = iota // no 503
	retried              // the retry stage replaced the 503
	lostRace             // the hedge's other copy succeeded; the 503 lost the race
)

// execute runs call through p and returns its response, unread, and its 503
// with the 503's fate. Only a call's first request can get a 503, and every
// other request succeeds, so a call with a 503 and a retry had only the 503 in
// its first attempt (the retry replaced it), and a call with a 503 and no
// retry succeeded in its first attempt with a hedge (the 503 lost the race).
func execute(t *testing.T, p *pipeline.Pipeline[*http.Response], events *eventLog,
	client *http.Client, srv *server, call int) (*http.Response, *response, fate) {
	t.Helper()
	retries := events.count(retry.Scheduled{}.Name())
	resp, err := p.Execute(context.Background(), get(client, srv.URL, call))
	if err != nil && resp != nil {
		_ = resp.Body.Close() // a stop error comes with the last response: close it too
	}
	require.NoError(t, err, "call %d", call)
	retries = events.count(retry.Scheduled{}.Name()) - retries

	rs := client.Transport.(*countingTransport).produced(call)
	switch {
	case len(rs) == 0 || rs[0].status != http.StatusServiceUnavailable:
		return resp, nil, other
	case retries == 1:
		return resp, rs[0], retried
	case retries == 0:
		return resp, rs[0], lostRace
	}
	t.Fatalf("call %d: %d retries after a single 503", call, retries)
	return nil, nil, other
}
