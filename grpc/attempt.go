package pipelinegrpc

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"
)

// attempt is one attempt of an RPC: the value every scope's pipelines carry
// (their T), holding what the attempt received, for the classifier and for
// the caller. A unary call's attempt decodes its reply into reply; a
// stream's holds the stream it opened.
type attempt struct {
	method string
	// callers is set for an attempt that failed with DeadlineExceeded while
	// the deadline that bound it was the caller's own: not the server's fault.
	callers bool
	// deferred is set for an attempt that failed on a channel whose service
	// config, which it may not have known when the RPC started, has gRPC
	// retry the method: gRPC has retried it already, so we do not.
	deferred bool
	header   metadata.MD
	trailer  metadata.MD

	// A unary call's:
	reply any               // the message the reply is decoded into
	peer  peer.Peer         // the server, if the caller asked for it
	opts  []grpc.CallOption // the call's options and this attempt's captures
	busy  *atomic.Bool      // the call's own attempt: its flag, cleared on release

	// A stream's:
	stream grpc.ClientStream
	cancel context.CancelFunc // ends the stream's context
	eof    bool               // the stream ended, successfully, without a header
}

// release frees an attempt the pipeline discards (a retried one, a hedge's
// loser): a stream's context is canceled, and a unary call's own attempt
// may be used again.
func (a *attempt) release() {
	if a.cancel != nil {
		a.cancel()
	}
	if a.busy != nil {
		a.busy.Store(false)
	}
}

// describe says what an attempt's value is, for the error of an attempt
// that succeeded but was judged a failure (by Config.Classify).
func (a *attempt) describe() string { return "the response to " + a.method }

// errNoCopy is the error of a hedged copy of a unary call whose reply is not
// a pointer: nothing can be decoded into but the caller's own, which the
// first copy is using.
var errNoCopy = errors.New("pipelinegrpc: the reply is not a pointer, so no second copy can run beside the first")

// newMessage returns an empty message of the same type as m, to decode a
// hedged copy's reply into, or false if m is not a pointer. It reads only
// m's type, never the message, which the first copy may be decoding into.
func newMessage(m any) (any, bool) {
	t := reflect.TypeOf(m)
	if t == nil || t.Kind() != reflect.Pointer {
		return nil, false
	}
	return reflect.New(t.Elem()).Interface(), true
}

// copyMessage makes dst, the caller's reply, a copy of src, a hedged copy's
// reply of the same type.
func copyMessage(dst, src any) {
	if pd, ok := dst.(proto.Message); ok {
		proto.Reset(pd)
		proto.Merge(pd, src.(proto.Message))
		return
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
}

// callersDeadline reports whether the deadline of the attempt's context is
// the caller's own: the caller has one, and none of ours is shorter.
func callersDeadline(caller, attempt context.Context) bool {
	want, ok := caller.Deadline()
	if !ok {
		return false
	}
	got, _ := attempt.Deadline()
	return !got.Before(want)
}
