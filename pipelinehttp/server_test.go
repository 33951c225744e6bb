package pipelinehttp_test

// A fault-injecting loopback server, scripted per call, that records the
// requests and the connections it sees.

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// callHeader names the logical call a request belongs to, so that the server
// can script its replies to each call's successive requests.
const callHeader = "X-Call"

// reset is where a reply breaks its connection.
type reset int

const (
	noReset   reset = iota
	midHeader       // the status line and part of the headers, then the connection is reset
	midBody         // the headers and half the body, then the connection is reset
)

// fault is the server's reply to one request.
type fault struct {
	status     int    // 0 means 200
	retryAfter string // the Retry-After header, if not empty
	size       int    // body bytes; 0 means errorSize
	stall      bool   // reply nothing until the client gives up
	reset      reset
}

// errorSize is the size of a reply's body when the script does not say.
const errorSize = 64

// Replies used throughout the tests.
var (
	okReply          = fault{}
	largeReply       = fault{size: 16 << 20}
	unavailableReply = fault{status: http.StatusServiceUnavailable}
	throttledReply   = fault{status: http.StatusTooManyRequests}
	notFoundReply    = fault{status: http.StatusNotFound}
	stallReply       = fault{stall: true}
)

// replies scripts a call as a list: its n-th request gets the n-th reply, and
// every request beyond the list gets the last one.
func replies(fs ...fault) func(n int) fault {
	return func(n int) fault { return fs[min(n, len(fs))-1] }
}

// content is the deterministic body every reply takes its bytes from: reply
// bodies are its prefixes.
var content = sync.OnceValue(func() []byte {
	data := make([]byte, 16<<20)
	var x uint64 = 88172645463325252 // xorshift64: a misplaced chunk shows
	for i := 0; i < len(data); i += 8 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		binary.LittleEndian.PutUint64(data[i:], x)
	}
	return data
})

// sum is the SHA-256 of the first n bytes of content.
func sum(n int) [sha256.Size]byte { return sha256.Sum256(content()[:n]) }

// faultServer is an httptest.Server that answers each call as its script says.
type faultServer struct {
	*httptest.Server
	script func(call string, n int) fault

	mu       sync.Mutex
	requests map[string][]string // the bodies of the requests of each call, in order
	open     map[net.Conn]bool   // connections not closed yet
	accepted int                 // connections ever accepted
	changed  chan struct{}       // closed, and replaced, whenever the fields above change
}

// serverOpts chooses the protocol of a fault server.
type serverOpts struct {
	http2 bool // TLS with HTTP/2; otherwise plain HTTP/1.1
}

// newFaultServer starts a server that answers each call as script says. It is
// closed when the test ends.
func newFaultServer(t testing.TB, o serverOpts, script func(call string, n int) fault) *faultServer {
	t.Helper()
	s := &faultServer{
		script:   script,
		requests: make(map[string][]string),
		open:     make(map[net.Conn]bool),
		changed:  make(chan struct{}),
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.Config.ConnState = s.track
	if o.http2 {
		s.EnableHTTP2 = true
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s
}

// script1 scripts every call the same way.
func script1(f func(n int) fault) func(string, int) fault {
	return func(_ string, n int) fault { return f(n) }
}

func (s *faultServer) serve(w http.ResponseWriter, r *http.Request) {
	call := r.Header.Get(callHeader)
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests[call] = append(s.requests[call], string(body))
	n := len(s.requests[call])
	s.notifyLocked()
	s.mu.Unlock()

	f := s.script(call, n)
	if f.stall {
		<-r.Context().Done()
		return
	}
	if f.reset == midHeader {
		s.abort(w, r, "HTTP/1.1 200 OK\r\nContent-Type: appl")
	}
	size := f.size
	if size == 0 {
		size = errorSize
	}
	data := content()[:size]
	if f.retryAfter != "" {
		w.Header().Set("Retry-After", f.retryAfter)
	}
	w.Header().Set("Content-Length", strconv.Itoa(size))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(max(f.status, http.StatusOK))
	if f.reset == midBody {
		_, _ = w.Write(data[:size/2])
		w.(http.Flusher).Flush()
		s.abort(w, r, "")
	}
	_, _ = w.Write(data)
}

// abort breaks the reply: on HTTP/1.1 it takes the connection over, writes
// partial (any bytes not yet sent) and resets it; on HTTP/2, which cannot be
// hijacked, the server resets the stream. It does not return.
func (s *faultServer) abort(w http.ResponseWriter, r *http.Request, partial string) {
	if r.ProtoMajor == 1 {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_, _ = buf.WriteString(partial)
			_ = buf.Flush()
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetLinger(0) // close with a reset, not an orderly shutdown
			}
			_ = conn.Close()
		}
	}
	panic(http.ErrAbortHandler)
}

func (s *faultServer) track(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch state {
	case http.StateNew:
		s.accepted++
		s.open[c] = true
	case http.StateClosed, http.StateHijacked:
		delete(s.open, c)
	default:
		return
	}
	s.notifyLocked()
}

// notifyLocked wakes every waitFor. s.mu must be held.
func (s *faultServer) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor waits until cond, called with s.mu held, is true, and fails the test
// if it is not within eventually.
func (s *faultServer) waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	give := time.After(eventually)
	for {
		s.mu.Lock()
		ok, changed := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-give:
			t.Fatalf("waited %v for %s", eventually, what)
		}
	}
}

// eventually bounds every wait for the server to notice something.
const eventually = 10 * time.Second

// seen returns the bodies of the requests the server saw for call.
func (s *faultServer) seen(call string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests[call]...)
}

// total is the number of requests the server saw.
func (s *faultServer) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests {
		n += len(r)
	}
	return n
}

// connections returns the connections accepted and those still open.
func (s *faultServer) connections() (accepted, open int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted, len(s.open)
}

// waitClosed has the client close its idle connections until the server has
// none open. It asks again every few milliseconds, not once: a client's
// connection is idle only once the transport's own goroutines have dropped
// the streams it abandoned (an attempt that timed out), which they do after
// the call returns, and which tells the server nothing. (Asked once, on a busy
// machine, an HTTP/2 connection still held the stream of the stalled attempt
// and stayed in the pool, open.)
func (s *faultServer) waitClosed(t testing.TB, closeIdle func()) {
	t.Helper()
	give := time.After(eventually)
	again := time.NewTicker(5 * time.Millisecond)
	defer again.Stop()
	for {
		closeIdle()
		s.mu.Lock()
		ok, changed := len(s.open) == 0, s.changed
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-again.C:
		case <-give:
			t.Fatalf("waited %v for every connection to close", eventually)
		}
	}
}
