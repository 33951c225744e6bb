// Command service is a small HTTP service that calls an HTTP upstream and a
// gRPC upstream through the resilience pipeline library, wired as its docs
// recommend: a pipelinehttp transport in its http.Client and a pipelinegrpc
// client on its gRPC channel, both reporting to one pipelineotel Telemetry
// (exported through OpenTelemetry's Prometheus exporter on /metrics),
// logging their events with log/slog, and listed by the health view on
// /health. Given no upstreams, it starts fake ones on loopback that fail a
// share of their requests, answer some slowly, and go down once a minute,
// and it sends itself a little traffic, so that `go run .` alone shows
// breakers, retries and hedges at work. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "service:", err)
		os.Exit(2)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, nil); err != nil {
		cfg.Logger.Error("service stopped", slog.Any("err", err))
		stop()
		os.Exit(1)
	}
}

// parseFlags reads the command line into a config, or returns the error
// of a flag that cannot work (flag.ErrHelp for -h).
func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("service", flag.ContinueOnError)
	cfg := config{}
	fs.StringVar(&cfg.Addr, "addr", defaultAddr, "listen address")
	fs.StringVar(&cfg.Upstream, "upstream", "", "HTTP URL that / GETs (empty: a fake upstream on loopback)")
	fs.StringVar(&cfg.GRPC, "grpc", "", "gRPC target whose health service / asks (empty: a fake upstream on loopback)")
	fs.DurationVar(&cfg.Duration, "duration", 0, "run this long, then stop cleanly (0: until SIGINT or SIGTERM)")
	fs.Float64Var(&cfg.Load, "load", defaultLoad, "requests per second the service sends to its own / (0: none)")
	fail := fs.Float64("fail", defaultFail, "share of requests the fake upstreams fail, from 0 to 1")
	slow := fs.Float64("slow", defaultSlow, "share of requests the fake upstreams answer after "+slowFor.String()+", from 0 to 1")
	outage := fs.Duration("outage", defaultOutage, "how long the fake upstreams fail everything, once every "+outageEvery.String()+" (0: never)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var errs []error
	for _, f := range []struct {
		name  string
		share float64
	}{{"-fail", *fail}, {"-slow", *slow}} {
		if f.share < 0 || f.share > 1 {
			errs = append(errs, fmt.Errorf("%s must lie in [0, 1], got %v", f.name, f.share))
		}
	}
	if *outage < 0 || *outage >= outageEvery {
		errs = append(errs, fmt.Errorf("-outage must lie in [0, %v), got %v", outageEvery, *outage))
	}
	cfg.Faults = newFaults(*fail, *slow, slowFor, *outage, outageEvery)
	if err := errors.Join(append(errs, cfg.validate())...); err != nil {
		return config{}, err
	}
	return cfg, nil
}
