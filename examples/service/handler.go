package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/resilience-go/pipeline"
)

// bodyLimit is how much of the upstream's answer the service reads and
// passes on.
const bodyLimit = 4 << 10

// answer is what / answers: what each upstream gave.
type answer struct {
	Upstream part `json:"upstream"`
	GRPC     part `json:"grpc"`
}

// part is what one upstream gave: its status (an HTTP status line, a
// health-check status) and body, or the error of the call. Fallback is set
// when an open breaker refused the call and the part is the service's own
// stand-in.
type part struct {
	Status   string `json:"status"`
	Body     string `json:"body,omitempty"`
	Error    string `json:"error,omitempty"`
	Fallback bool   `json:"fallback,omitempty"`
}

// handleRoot calls both upstreams, the HTTP one then the gRPC one, and
// answers with what they gave, as JSON. Its status says how the HTTP
// upstream fared: 200 when it answered with a success, 502 when it failed
// (an error, or a failing status once the retries were spent), and 503
// with a Retry-After when the upstream's breaker refused the call, which
// cost the upstream nothing. A refused health check is answered with a fallback
// status, UNKNOWN, and changes no status code.
func (d *dependencies) handleRoot(logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a answer
		code, retryAfter := d.callUpstream(r.Context(), &a.Upstream)
		d.checkGRPC(r.Context(), &a.GRPC)
		if retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if err := json.NewEncoder(w).Encode(a); err != nil {
			logger.DebugContext(r.Context(), "writing the answer", slog.Any("err", err))
		}
	})
}

// callUpstream GETs the upstream into p and returns the status / answers
// with, and how long the caller should wait before asking again when the
// call was refused.
func (d *dependencies) callUpstream(ctx context.Context, p *part) (code int, retryAfter time.Duration) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.upstream, nil)
	if err != nil {
		p.Error = err.Error()
		return http.StatusInternalServerError, 0
	}
	resp, err := d.http.Do(req)
	if err != nil {
		p.Error = err.Error()
		if stop, ok := refused(err); ok {
			p.Status, p.Fallback = "unavailable", true
			return http.StatusServiceUnavailable, max(stop.RetryAfter, time.Second)
		}
		return http.StatusBadGateway, 0
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, bodyLimit))
	p.Status, p.Body = resp.Status, strings.TrimSpace(string(body))
	if err != nil {
		p.Error = err.Error()
		return http.StatusBadGateway, 0
	}
	if resp.StatusCode >= 400 {
		return http.StatusBadGateway, 0
	}
	return http.StatusOK, 0
}

// checkGRPC asks the gRPC upstream's health service how the server is,
// into p.
func (d *dependencies) checkGRPC(ctx context.Context, p *part) {
	resp, err := d.checks.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		p.Error = status.Convert(err).Message()
		if _, ok := refused(err); ok {
			p.Status, p.Fallback = healthpb.HealthCheckResponse_UNKNOWN.String(), true
			return
		}
		p.Status = status.Code(err).String()
		return
	}
	p.Status = resp.GetStatus().String()
}

// refused returns the stop of a call an open breaker refused, sending
// nothing, and whether err is one.
func refused(err error) (*pipeline.StopError, bool) {
	stop, ok := errors.AsType[*pipeline.StopError](err)
	if !ok || stop.Reason != pipeline.DependencyUnavailable {
		return nil, false
	}
	return stop, true
}
