package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/fleet"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// cell is what one (B, N) cost the Redis, per second of the window.
type cell struct {
	n        int
	cpu      float64 // core-seconds
	out      float64 // bytes sent
	commands float64 // commands processed (a script counts once, its calls too)
	degraded int64   // Degraded events during the cell: rounds that failed after one that did not
}

// process is one simulated process: its own client, fleet and breakers.
type process struct {
	rdb   *redis.Client
	f     *fleet.Fleet
	stops []func()
}

// ping makes p the floor's process (B = 0): no fleet, one PING a refresh
// on its own client, each given half the refresh as a round is, until
// close. It is the least any design costs its Redis that has each process
// talk to it once a refresh: the round trip alone.
func (p *process) ping(refresh time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(refresh)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				c, stop := context.WithTimeout(ctx, refresh/2)
				_ = p.rdb.Ping(c).Err()
				stop()
			}
		}
	}()
	p.stops = append(p.stops, func() { cancel(); <-done })
}

func (p *process) close() {
	for _, stop := range p.stops {
		stop()
	}
	if p.f != nil {
		p.f.Close()
	}
	_ = p.rdb.Close()
}

// runCell starts n processes watching b breakers each, spreading their
// starts over one Refresh so that their rounds do not all fall at once, runs
// the warm-up and the window, and closes them.
func runCell(admin *redis.Client, o options, b, n int) (cell, error) {
	ns := fmt.Sprintf("redisscale-%d-%d-%d-%d", os.Getpid(), time.Now().UnixNano(), b, n)
	ps := make([]*process, 0, n)
	var degraded atomic.Int64
	hook := func(_ context.Context, _ pipeline.Source, e pipeline.Event) {
		if _, ok := e.(fleet.Degraded); ok {
			degraded.Add(1)
		}
	}
	defer func() {
		var wg sync.WaitGroup
		for _, p := range ps {
			wg.Go(p.close)
		}
		wg.Wait()
	}()
	gap := o.refresh / time.Duration(n)
	for i := range n {
		p := &process{rdb: redis.NewClient(&redis.Options{Addr: o.addr, ContextTimeoutEnabled: true, PoolSize: 2})}
		ps = append(ps, p)
		if b == 0 {
			p.ping(o.refresh)
			time.Sleep(gap)
			continue
		}
		f, err := fleet.New(fleet.Config{Redis: p.rdb, Namespace: ns, Process: fmt.Sprintf("p%04d", i), Refresh: o.refresh, OnEvent: hook})
		if err != nil {
			return cell{}, err
		}
		p.f = f
		for j := range b {
			br, err := breaker.New(breaker.Config{Name: fmt.Sprintf("dependency-%02d", j)})
			if err != nil {
				return cell{}, err
			}
			stop, err := f.Watch(br)
			if err != nil {
				return cell{}, err
			}
			p.stops = append(p.stops, stop)
		}
		time.Sleep(gap)
	}
	time.Sleep(o.warmup)
	before, err := readInfo(admin)
	if err != nil {
		return cell{}, err
	}
	time.Sleep(o.window)
	after, err := readInfo(admin)
	if err != nil {
		return cell{}, err
	}
	d := after.sub(before)
	secs := d.wall.Seconds()
	return cell{n: n, cpu: d.cpu / secs, out: d.out / secs, commands: d.commands / secs, degraded: degraded.Load()}, nil
}

// readInfo reads the counters of the Redis's INFO that a cell measures.
func readInfo(rdb *redis.Client) (info, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	text, err := rdb.Info(ctx, "cpu", "stats").Result()
	if err != nil {
		return info{}, err
	}
	in, err := parseInfo(text)
	in.wall = time.Duration(time.Now().UnixNano())
	return in, err
}
