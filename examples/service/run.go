package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// run runs the service until ctx ends (or cfg.Duration has passed), then
// stops it: it stops its own load, lets the requests in flight finish
// (shutdownGrace at most, then cancels them), closes its clients, stops
// the fake upstreams and the meter provider, and returns once every
// goroutine it started has returned. ready, if not nil, is called with
// the address the service listens on once it accepts connections. The
// error is the first that kept the service from starting or from
// stopping cleanly; nil after a clean stop.
func run(ctx context.Context, cfg config, ready func(addr string)) (err error) {
	if err := cfg.validate(); err != nil {
		return err
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}

	m, err := newMetrics(logger)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	defer func() { err = errors.Join(err, m.shutdown(context.WithoutCancel(ctx))) }()

	if cfg.Upstream == "" || cfg.GRPC == "" {
		f := cfg.Faults
		if f == nil {
			f = newFaults(defaultFail, defaultSlow, slowFor, defaultOutage, outageEvery)
		}
		fk, err := startFakes(f)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, fk.close()) }()
		if cfg.Upstream == "" {
			cfg.Upstream = fk.url
		}
		if cfg.GRPC == "" {
			cfg.GRPC = fk.target
		}
		logger.Info("fake upstreams started", slog.String("upstream", cfg.Upstream), slog.String("grpc", cfg.GRPC))
	}

	deps, err := newDependencies(m.telemetry, logger, cfg.Upstream, cfg.GRPC)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, deps.close()) }()

	mux := http.NewServeMux()
	mux.Handle("GET /{$}", deps.handleRoot(logger))
	mux.Handle("GET /metrics", m.handler)
	mux.Handle("GET /health", &deps.view)
	return serve(ctx, cfg, logger, mux, ready)
}

// serve serves handler on cfg.Addr until ctx ends, sending the service's
// own load to it meanwhile, then shuts the server down.
func serve(ctx context.Context, cfg config, logger *slog.Logger, handler http.Handler, ready func(string)) error {
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	// Requests run on base, canceled only if they outlast the grace.
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	var inFlight sync.WaitGroup // the handlers running, which Close does not wait for
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inFlight.Add(1)
			defer inFlight.Done()
			handler.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	addr := ln.Addr().String()
	logger.Info("listening", slog.String("addr", addr), slog.String("upstream", cfg.Upstream), slog.String("grpc", cfg.GRPC))
	if ready != nil {
		ready(addr)
	}

	var load sync.WaitGroup
	loadCtx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	if cfg.Load > 0 {
		load.Go(func() { sendLoad(loadCtx, "http://"+dialable(ln.Addr())+"/", cfg.Load) })
	}

	select {
	case <-ctx.Done():
	case err := <-served: // it stopped by itself: the listener failed
		stopLoad()
		load.Wait()
		cancelRequests()
		err = errors.Join(err, srv.Close())
		inFlight.Wait()
		return err
	}
	logger.Info("stopping", slog.Any("cause", context.Cause(ctx)))
	stopLoad()
	load.Wait()
	grace, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(grace)
	if err != nil { // requests outlasted the grace: cancel them, close their connections
		cancelRequests()
		err = errors.Join(err, srv.Close())
		inFlight.Wait()
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
