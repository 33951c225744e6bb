package pipelinegrpc

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/outcome"
)

var (
	ok        = outcome.Verdict{}
	transient = outcome.Verdict{Kind: outcome.Transient}
	throttled = outcome.Verdict{Kind: outcome.Throttled}
	permanent = outcome.Verdict{Kind: outcome.Permanent}
)

func newTestClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	require.NoError(t, err)
	return c
}

// TestEveryCodeHasItsKind is the classification table of docs/grpc.md.
func TestEveryCodeHasItsKind(t *testing.T) {
	c := newTestClient(t, Config{})
	want := map[codes.Code]outcome.Verdict{
		codes.OK: ok, codes.Canceled: permanent, codes.Unknown: transient,
		codes.InvalidArgument: permanent, codes.DeadlineExceeded: transient, codes.NotFound: permanent,
		codes.AlreadyExists: permanent, codes.PermissionDenied: permanent, codes.ResourceExhausted: throttled,
		codes.FailedPrecondition: permanent, codes.Aborted: permanent, codes.OutOfRange: permanent,
		codes.Unimplemented: permanent, codes.Internal: transient, codes.Unavailable: transient,
		codes.DataLoss: permanent, codes.Unauthenticated: permanent,
	}
	require.Len(t, want, int(maxCode)+1)
	for code, v := range want {
		assert.Equal(t, v, c.verdict(code, "", nil), "%v", code)
	}
	assert.Equal(t, transient, c.verdict(codes.Code(42), "", nil), "a code gRPC does not define")
}

// TestPushback reads the server's pushback onto retryable verdicts only.
func TestPushback(t *testing.T) {
	c := newTestClient(t, Config{})
	md := func(vs ...string) metadata.MD { return metadata.MD{PushbackKey: vs} }
	for _, tc := range []struct {
		name    string
		code    codes.Code
		trailer metadata.MD
		want    outcome.Verdict
	}{
		{"throttled, 250 ms", codes.ResourceExhausted, md("250"), throttled.WithRetryAfter(250 * time.Millisecond)},
		{"transient, 2 s", codes.Unavailable, md(" 2000 "), transient.WithRetryAfter(2 * time.Second)},
		{"at once", codes.Unavailable, md("0"), transient.WithRetryAfter(time.Millisecond)},
		{"no pushback", codes.ResourceExhausted, nil, throttled},
		{"negative: do not retry", codes.ResourceExhausted, md("-1"), permanent},
		{"unreadable: do not retry", codes.Unavailable, md("1.5"), permanent},
		{"two values: do not retry", codes.Unavailable, md("1", "2"), permanent},
		{"huge: the longest hint", codes.Unavailable, md("99999999999999"), transient.WithRetryAfter(outcome.MaxRetryAfter)},
		{"a permanent code keeps its kind", codes.NotFound, md("10"), permanent},
	} {
		assert.Equal(t, tc.want, c.verdict(tc.code, "", tc.trailer), tc.name)
	}
}

// TestOverridesAndHook checks Codes and Classify, and the rules they cannot
// change: the caller's deadline and gRPC's own retries.
func TestOverridesAndHook(t *testing.T) {
	var seen []string
	c := newTestClient(t, Config{
		Codes: map[codes.Code]outcome.Kind{codes.Aborted: outcome.Transient, codes.Unavailable: outcome.Throttled},
		Classify: func(method string, err error, trailer metadata.MD) (outcome.Verdict, bool) {
			seen = append(seen, method)
			return permanent, status.Code(err) == codes.Unknown && trailer.Get("why")[0] == "bug"
		},
	})
	assert.Equal(t, transient, c.verdict(codes.Aborted, "", nil))
	assert.Equal(t, throttled, c.verdict(codes.Unavailable, "", nil))

	bug := &attempt{method: "/s/M", trailer: metadata.Pairs("why", "bug")}
	v, _ := c.classify(bug, status.Error(codes.Unknown, "x"))
	assert.Equal(t, permanent, v, "the hook")
	assert.Equal(t, []string{"/s/M"}, seen)

	late := &attempt{method: "/s/M", trailer: metadata.Pairs("why", "late"), callers: true}
	v, _ = c.classify(late, status.Error(codes.DeadlineExceeded, "x"))
	assert.Equal(t, outcome.Verdict{Kind: outcome.Permanent, Canceled: true}, v, "the caller's deadline")

	retried := &attempt{method: "/s/M", deferred: true}
	v, _ = c.classify(retried, status.Error(codes.Unavailable, "x"))
	assert.Equal(t, permanent, v, "gRPC retried it already")

	_, judged := c.classify(&attempt{trailer: metadata.Pairs("why", "x")}, errors.New("not a status"))
	assert.False(t, judged, "an error that is not a status is left to the built-in shapes")
}

// TestLocalErrors holds the messages gRPC uses for errors no retry can fix,
// on either side, to their codes.
func TestLocalErrors(t *testing.T) {
	c := newTestClient(t, Config{})
	for _, tc := range []struct {
		code codes.Code
		msg  string
		want outcome.Verdict
	}{
		{codes.ResourceExhausted, "grpc: received message larger than max (4096 vs. 1024)", permanent},
		{codes.ResourceExhausted, "trying to send message larger than max (4096 vs. 1024)", permanent},
		{codes.ResourceExhausted, "quota exceeded", throttled},
		{codes.Internal, "grpc: error while marshaling: proto: bad", permanent},
		{codes.Internal, "grpc: failed to unmarshal the received message: bad", permanent},
		{codes.Internal, "server closed the stream without sending trailers", transient},
		{codes.Unavailable, "grpc: received message larger than max", transient},
	} {
		assert.Equal(t, tc.want, c.verdict(tc.code, tc.msg, nil), "%v %q", tc.code, tc.msg)
	}
}

// TestLocalErrorsOfTheGRPCInUse finds every message prefix that local
// relies on in the source of the gRPC module this module builds with, so
// that a gRPC that rewords one fails here rather than retry in production.
func TestLocalErrorsOfTheGRPCInUse(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "google.golang.org/grpc").Output()
	if err != nil {
		t.Skipf("cannot locate the gRPC module: %v", err)
	}
	dir := strings.TrimSpace(string(out))
	var source strings.Builder
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "examples" || d.Name() == "interop" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			source.Write(b)
		}
		return nil
	}))
	for _, prefix := range append(tooLarge[:], codec[:]...) {
		assert.Contains(t, source.String(), `"`+prefix, "gRPC no longer says %q", prefix)
	}
}

// TestStatusOfAStop is the status an RPC the pipeline stopped returns.
func TestStatusOfAStop(t *testing.T) {
	unavailable := status.Error(codes.Unavailable, "down")
	for _, tc := range []struct {
		name string
		stop *pipeline.StopError
		want codes.Code
		msg  string
	}{
		{"the breaker refused", &pipeline.StopError{Stage: "breaker", Reason: pipeline.DependencyUnavailable}, codes.Unavailable, ""},
		{"attempts exhausted", &pipeline.StopError{Reason: pipeline.AttemptsExhausted, Attempts: 3, Err: unavailable}, codes.Unavailable, "down"},
		{"a deadline passed", &pipeline.StopError{Reason: pipeline.Deadline, Err: unavailable, Cause: context.DeadlineExceeded}, codes.DeadlineExceeded, ""},
		{"the caller canceled", &pipeline.StopError{Reason: pipeline.Canceled, Cause: context.Canceled}, codes.Canceled, ""},
		{"judged the caller's before its context ended", &pipeline.StopError{Reason: pipeline.Deadline, Err: status.Error(codes.DeadlineExceeded, "late"), Cause: context.DeadlineExceeded}, codes.DeadlineExceeded, ""},
		{"an error that is not a status", &pipeline.StopError{Reason: pipeline.Permanent, Err: errors.New("odd")}, codes.Unknown, ""},
	} {
		err := callError(tc.stop)
		st := status.Convert(err)
		assert.Equal(t, tc.want, st.Code(), tc.name)
		if tc.msg != "" {
			assert.Equal(t, tc.msg, st.Message(), tc.name)
		}
		assert.Equal(t, tc.stop.Error(), err.Error(), tc.name)
		stop, found := errors.AsType[*pipeline.StopError](err)
		assert.True(t, found && stop == tc.stop, tc.name)
	}
	plain := status.Error(codes.NotFound, "x")
	assert.Same(t, plain, callError(plain), "an attempt's own error is returned as it is")
	assert.Nil(t, callError(nil))
}

// TestMethodLookup finds a method's own entry first, then its service's.
func TestMethodLookup(t *testing.T) {
	c := newTestClient(t, Config{Methods: map[string]Method{
		"/pkg.S/":    {Idempotent: true},
		"/pkg.S/Pay": {OwnScope: true},
	}})
	assert.Equal(t, Method{Idempotent: true}, c.method("/pkg.S/Get"))
	assert.Equal(t, Method{OwnScope: true}, c.method("/pkg.S/Pay"))
	assert.Equal(t, Method{}, c.method("/pkg.T/Get"))
	assert.Equal(t, Method{}, newTestClient(t, Config{}).method("/pkg.S/Get"))
}
