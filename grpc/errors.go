package pipelinegrpc

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
)

// statusError is an error the client returns in place of the pipeline's or
// its own: its text is err's, gRPC reads its status (status.FromError,
// status.Code), and errors.Is and errors.As see through it to err (a
// *pipeline.StopError, say).
type statusError struct {
	err    error
	status *status.Status
}

func (e *statusError) Error() string              { return e.err.Error() }
func (e *statusError) Unwrap() error              { return e.err }
func (e *statusError) GRPCStatus() *status.Status { return e.status }

// callError is the error an RPC returns for err, what its pipeline returned:
// nil, an attempt's own error as gRPC gave it, or a *pipeline.StopError
// carrying the status the RPC ends with (see statusOf).
func callError(err error) error {
	stop, ok := err.(*pipeline.StopError)
	if !ok {
		return err
	}
	return &statusError{err: stop, status: statusOf(stop)}
}

// statusOf is the status of an RPC the pipeline stopped: DeadlineExceeded
// or Canceled for a deadline (ours or the caller's) that passed or a
// cancellation, as gRPC would say them (a server that ran out of the
// caller's time a moment before the client did stops the retry with a
// Deadline too); otherwise the last attempt's own status, code, message and
// details, as the server sent it; and Unavailable for a refusal before any
// attempt ran (an open breaker).
func statusOf(stop *pipeline.StopError) *status.Status {
	if stop.Cause != nil || stop.Err == nil {
		switch stop.Reason {
		case pipeline.Deadline:
			return status.New(codes.DeadlineExceeded, stop.Error())
		case pipeline.Canceled:
			return status.New(codes.Canceled, stop.Error())
		}
	}
	if stop.Err != nil {
		if st, ok := status.FromError(stop.Err); ok {
			return st
		}
		return status.New(codes.Unknown, stop.Error())
	}
	return status.New(codes.Unavailable, stop.Error())
}

// configError is the error of an RPC whose scope could not be built:
// Internal, since only a fix of the client's configuration helps.
func configError(err error) error {
	return &statusError{err: err, status: status.New(codes.Internal, err.Error())}
}
