// Command redisscale measures what a fleet costs its Redis as the fleet
// grows. For each number of watched breakers B and each fleet size N of the
// grid, it starts N fleets in this process, each with its own go-redis
// client, process id and B breakers (all closed), at the given Refresh (the
// default, 1 s), lets them run a warm-up, and reads the Redis's own INFO
// before and after a window: the CPU it spent (used_cpu_sys +
// used_cpu_user) and the bytes it sent (total_net_output_bytes), per second
// of the window. It prints one row per (B, N), with the fleets' Degraded
// events over the whole cell (a round that timed out: the machine was too
// busy), and, per B, the least-squares
// fit a + b·N + c·N² of each, whose c is what grows with the square of the
// fleet. B = 0 is the floor: each process, with no fleet, sends one PING a
// refresh, the round trip alone that any design with one exchange per
// process per refresh costs its Redis.
//
// Usage, from the fleet module, against a Redis of its own (the numbers are
// the whole server's, so nothing else should use it):
//
//	redis-server --port 6391 --save '' --appendonly no --daemonize yes
//	go run ./cmd/redisscale [-addr 127.0.0.1:6391] [-processes 25,50,100,200,400] [-breakers 0,1,10] [-warmup 5s] [-window 15s] [-refresh 1s]
//
// The fleets are closed, and their reports deleted, before the next cell
// starts; each cell has a namespace of its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's flags, parsed.
type options struct {
	addr      string
	processes []int
	breakers  []int
	warmup    time.Duration
	window    time.Duration
	refresh   time.Duration
}

// run is the command: it parses args, prints the table to stdout and
// problems to stderr, and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("redisscale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:6391", "the Redis to measure (its INFO is the whole server's)")
	processes := fs.String("processes", "25,50,100,200,400", "the fleet sizes N, comma-separated")
	breakers := fs.String("breakers", "0,1,10", "the numbers B of breakers each process watches, comma-separated (0: the floor, one PING a refresh)")
	warmup := fs.Duration("warmup", 5*time.Second, "how long a fleet runs before the window")
	window := fs.Duration("window", 15*time.Second, "how long each measurement lasts")
	refresh := fs.Duration("refresh", time.Second, "each fleet's Config.Refresh")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	o := options{addr: *addr, warmup: *warmup, window: *window, refresh: *refresh}
	var err error
	if o.processes, err = counts("processes", *processes, 1); err == nil {
		o.breakers, err = counts("breakers", *breakers, 0)
	}
	switch {
	case err != nil:
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.window <= 0 || o.warmup < 0 || o.refresh <= 0:
		err = fmt.Errorf("-window and -refresh must be positive and -warmup not negative, got %v, %v, %v", o.window, o.refresh, o.warmup)
	}
	if err != nil {
		fmt.Fprintf(stderr, "redisscale: %v\n", err)
		return 2
	}
	if err := measure(o, stdout); err != nil {
		fmt.Fprintf(stderr, "redisscale: %v\n", err)
		return 1
	}
	return 0
}

// counts parses a comma-separated list of integers of at least least, the
// value of the flag named name.
func counts(name, list string, least int) ([]int, error) {
	var ns []int
	for f := range strings.SplitSeq(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < least {
			return nil, fmt.Errorf("-%s must list integers of at least %d, got %q", name, least, list)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// measure runs every cell of the grid and prints the table and the fits.
func measure(o options, w io.Writer) error {
	admin := redis.NewClient(&redis.Options{Addr: o.addr, ContextTimeoutEnabled: true})
	defer admin.Close()
	if err := admin.Ping(context.Background()).Err(); err != nil {
		return fmt.Errorf("the Redis at %s: %w", o.addr, err)
	}
	fmt.Fprintf(w, "Redis at %s, Refresh %v, warm-up %v, window %v\n\n", o.addr, o.refresh, o.warmup, o.window)
	fmt.Fprintln(w, "| B | N | Redis CPU, core-s/s | bytes out/s | commands/s | Degraded |")
	fmt.Fprintln(w, "|--:|--:|--:|--:|--:|--:|")
	results := map[int][]cell{}
	for _, b := range o.breakers {
		for _, n := range o.processes {
			c, err := runCell(admin, o, b, n)
			if err != nil {
				return fmt.Errorf("cell B=%d N=%d: %w", b, n, err)
			}
			results[b] = append(results[b], c)
			fmt.Fprintf(w, "| %d | %d | %.4f | %s | %.0f | %d |\n", b, n, c.cpu, bytesPerSecond(c.out), c.commands, c.degraded)
		}
	}
	fmt.Fprintln(w)
	for _, b := range o.breakers {
		cs := results[b]
		if len(cs) < 3 {
			fmt.Fprintf(w, "B=%d: a fit of a + bN + cN² needs at least 3 fleet sizes\n", b)
			continue
		}
		xs, cpu, out := make([]float64, len(cs)), make([]float64, len(cs)), make([]float64, len(cs))
		for i, c := range cs {
			xs[i], cpu[i], out[i] = float64(c.n), c.cpu, c.out
		}
		fc, err := fitQuadratic(xs, cpu)
		if err != nil {
			return err
		}
		fo, err := fitQuadratic(xs, out)
		if err != nil {
			return err
		}
		top := xs[len(xs)-1]
		fmt.Fprintf(w, "B=%d CPU   = %s core-s/s; at N=%.0f the N² term is %.4f of %.4f\n", b, fc, top, fc.c*top*top, fc.at(top))
		fmt.Fprintf(w, "B=%d bytes = %s B/s; at N=%.0f the N² term is %s of %s\n", b, fo, top, bytesPerSecond(fo.c*top*top), bytesPerSecond(fo.at(top)))
	}
	return nil
}

// bytesPerSecond formats a rate of bytes a second in kB or MB (10³, 10⁶).
func bytesPerSecond(v float64) string {
	switch {
	case v >= 1e6 || v <= -1e6:
		return fmt.Sprintf("%.2f MB/s", v/1e6)
	case v >= 1e3 || v <= -1e3:
		return fmt.Sprintf("%.1f kB/s", v/1e3)
	}
	return fmt.Sprintf("%.0f B/s", v)
}
