package pipelinehttp_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/internal/hedgerule"
	"github.com/resilience-go/pipeline/pipelinehttp"
)

// TestSlowGETIsHedged warms a host's latency estimator up with quick GETs,
// then sends a GET whose first copy the server never answers. Once the hedge
// delay has passed on the fake clock, a second copy goes out and wins with a
// 16 MiB body, read whole; the first copy is canceled. Over HTTP/1.1 its
// connection is closed; over HTTP/2 only its stream is, and the one
// connection carries everything. A POST to the same slow server is never
// hedged.
func TestSlowGETIsHedged(t *testing.T) {
	for i, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			srv := newFaultServer(t, serverOpts{http2: i == 1}, func(call string, n int) fault {
				switch {
				case call == "slow" && n == 1:
					return stallReply
				case call == "slow":
					return largeReply
				case call == "slow-post":
					return stallReply
				}
				return okReply
			})
			h := newHarness(t, newBase(t, srv, 0), pipelinehttp.Config{Standard: quick()})

			for call := range hedgerule.DefaultMinSamples {
				resp, _, err := h.do(t, newRequest(t, http.MethodGet, srv.URL, strconv.Itoa(call), ""))
				require.NoError(t, err)
				requireWhole(t, resp, errorSize)
			}
			require.Zero(t, h.hedges())
			before, _ := srv.connections()

			done := make(chan struct{})
			var resp *http.Response
			var err error
			go func() {
				defer close(done)
				resp, err = h.client.Do(newRequest(t, http.MethodGet, srv.URL, "slow", ""))
			}()
			srv.waitFor(t, "the first copy", func() bool { return len(srv.requests["slow"]) == 1 })
			ctx, cancel := context.WithTimeout(context.Background(), eventually)
			defer cancel()
			require.NoError(t, h.clock.BlockUntilContext(ctx, 1), "no hedge was armed")
			h.clock.Advance(hedgerule.DefaultMinDelay) // the delay: every sample took no time on the fake clock
			<-done

			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			requireWhole(t, resp, 16<<20)
			assert.Equal(t, 1, h.hedges())
			assert.Len(t, srv.seen("slow"), 2)
			accepted, _ := srv.connections()
			if i == 0 {
				// The hedge needed a connection of its own, and the loser's
				// is closed when it is canceled: the winner's is left, idle.
				assert.Equal(t, before+1, accepted)
				srv.waitFor(t, "the loser's connection to close", func() bool { return len(srv.open) == 1 })
				srv.waitClosed(t, h.tr.CloseIdleConnections)
			} else {
				assert.Equal(t, 1, accepted)
			}

			// A POST is not replayable: no hedge is armed for it, however
			// long it takes.
			ctx, cancelPost := context.WithCancel(context.Background())
			postDone := make(chan error)
			go func() {
				_, err := h.client.Do(newRequest(t, http.MethodPost, srv.URL, "slow-post", "x").WithContext(ctx))
				postDone <- err
			}()
			srv.waitFor(t, "the POST", func() bool { return len(srv.requests["slow-post"]) == 1 })
			none, cancelNone := context.WithTimeout(context.Background(), eventually)
			defer cancelNone()
			assert.NoError(t, h.clock.BlockUntilContext(none, 0), "a timer is armed for the POST")
			cancelPost()
			assert.ErrorIs(t, <-postDone, context.Canceled)
			assert.Equal(t, 1, h.hedges())
			assert.Len(t, srv.seen("slow-post"), 1)
		})
	}
}
