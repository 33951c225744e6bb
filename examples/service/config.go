package main

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults of the flags.
const (
	// defaultAddr is where the service listens.
	defaultAddr = ":8080"
	// defaultLoad is how many requests a second the service sends to its
	// own /, so that a dashboard has something to show.
	defaultLoad = 10
	// defaultFail and defaultSlow are the shares of requests the fake
	// upstreams fail and answer slowly: one in 20 and one in 50.
	defaultFail = 0.05
	defaultSlow = 0.02
	// defaultOutage is how long the fakes fail everything, once a minute
	// (outageEvery): long enough for the breakers to open, probe and
	// close again.
	defaultOutage = 15 * time.Second
	outageEvery   = time.Minute
	// slowFor is how long a slow answer of the fakes takes: past the
	// hedge's delay, which is the p95 of the answers (10 ms at least).
	slowFor = 200 * time.Millisecond
	// shutdownGrace is how long requests in flight get to finish once the
	// service stops, before they are canceled.
	shutdownGrace = 5 * time.Second
)

// config is what run needs. Its zero value is not usable: main fills it
// from the flags, and a test sets each field it needs.
type config struct {
	// Addr is the listen address; "127.0.0.1:0" picks a free port.
	Addr string
	// Upstream is the HTTP URL / GETs, and GRPC the gRPC target whose
	// health service / asks; empty means the fake upstreams, which run
	// then starts on loopback.
	Upstream, GRPC string
	// Duration is how long the service runs before it stops as on a
	// signal; zero means until its context ends.
	Duration time.Duration
	// Load is how many requests a second the service sends to its own /;
	// zero means none.
	Load float64
	// Faults is what the fake upstreams do wrong; nil means the defaults
	// (defaultFail, defaultSlow, defaultOutage). Unused with real
	// upstreams.
	Faults *faults
	// Logger receives the service's logs and the library's events; nil
	// means slog.Default().
	Logger *slog.Logger
}

// validate reports the settings of c that cannot work, each naming its
// flag.
func (c config) validate() error {
	var errs []error
	if c.Duration < 0 {
		errs = append(errs, fmt.Errorf("-duration must not be negative (0 means until a signal), got %v", c.Duration))
	}
	if c.Load < 0 {
		errs = append(errs, fmt.Errorf("-load must not be negative (0 means none), got %v", c.Load))
	}
	return errors.Join(errs...)
}
