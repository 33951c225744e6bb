package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/resilience-go/pipeline"
	"github.com/resilience-go/pipeline/policy/breaker"
)

// loop runs a round every Config.Refresh until Close.
func (f *Fleet) loop() {
	defer close(f.done)
	t := f.s.clock.NewTicker(f.s.refresh)
	defer t.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-t.Chan():
			f.round(f.ready(), true)
			f.rounds.Add(1)
		}
	}
}

// ready returns the watches the loop runs.
func (f *Fleet) ready() []*watch {
	f.mu.Lock()
	defer f.mu.Unlock()
	ws := make([]*watch, 0, len(f.watched))
	for _, w := range f.watched {
		if w.ready {
			ws = append(ws, w)
		}
	}
	return ws
}

// round publishes this process's report of each of ws (when publish is set)
// and reads each one's summary in the same pipeline, by summaryScript or by
// the plain commands of the usual round (see queued), and applies them.
// Every command and script names only keys of its breaker's hash tag, so
// the pipeline works on Redis Cluster. The script goes by EVALSHA; if a
// Redis does not have it (restarted, failed over, flushed), the round is
// sent again with EVAL, which caches it: the reports published twice have
// the same scores, so nothing changes twice. The round waits on Redis for
// at most half of Config.Refresh in all; when it fails, it applies nothing
// and raises Degraded (once per outage).
func (f *Fleet) round(ws []*watch, publish bool) {
	if len(ws) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(f.ctx, f.s.timeout())
	defer cancel()
	now := f.s.clock.Now()
	ps := make([]publication, len(ws))
	for i, w := range ws {
		ps[i] = publication{process: f.s.process, now: now}
		if publish {
			ps[i].state = w.report()
			ps[i].changed = ps[i].state != w.published
			ps[i].prune = now.Sub(w.pruned) >= w.pruneIn || now.Before(w.pruned)
		}
	}
	qs := make([]queued, len(ws))
	send := func(eval bool) ([]redis.Cmder, error) {
		pipe := f.s.redis.Pipeline()
		for i, w := range ws {
			qs[i] = f.s.queue(ctx, pipe, w.keys, ps[i], eval, w.quiet)
		}
		return pipe.Exec(ctx)
	}
	cmds, err := send(false)
	if noScript(cmds) {
		_, err = send(true)
	}
	if errors.Is(err, redis.Nil) { // an absent control key; the commands' other errors are read below
		err = nil
	}
	if err == nil {
		err = f.readStirred(ctx, ws, qs, now)
	}
	if f.ctx.Err() != nil { // closing: not an outage
		return
	}
	cs := make([]counts, len(ws))
	for i, w := range ws {
		c, kept, e := qs[i].result()
		cs[i] = c
		if err == nil {
			err = e
		}
		if !publish {
			continue
		}
		w.published = 0 // unknown: the next round sends the script
		if kept {
			w.published = ps[i].state
		}
		if kept && qs[i].script != nil && ps[i].prune {
			w.pruned, w.pruneIn = now, f.s.pruneAfter(c.seen)
		}
		w.quiet = err == nil && c.open == 0 && !c.isolated
	}
	f.reached(err, now)
	if err != nil {
		return
	}
	for i, w := range ws {
		if w.gone.Load() {
			continue
		}
		f.apply(w, f.s.viewOf(cs[i]), now)
	}
}

// readStirred sends, in a second pipeline, the full read of every quiet
// round of qs that found the breaker stirred (see queued), and waits for
// it within ctx.
func (f *Fleet) readStirred(ctx context.Context, ws []*watch, qs []queued, now time.Time) error {
	var pipe redis.Pipeliner
	from := f.s.from(now)
	for i := range qs {
		if !qs[i].stirs() {
			continue
		}
		if pipe == nil {
			pipe = f.s.redis.Pipeline()
		}
		qs[i].read(ctx, pipe, from, ws[i].keys)
	}
	if pipe == nil {
		return nil
	}
	_, err := pipe.Exec(ctx)
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return err
}

// reached records whether a round reached Redis, and raises Degraded or
// Recovered when that changed.
func (f *Fleet) reached(err error, now time.Time) {
	var e pipeline.Event
	f.mu.Lock()
	switch {
	case err != nil && !f.degraded:
		f.degraded, f.degradedAt = true, now
		e = Degraded{Err: err, At: now}
	case err == nil && f.degraded:
		f.degraded = false
		e = Recovered{After: now.Sub(f.degradedAt), At: now}
	}
	f.mu.Unlock()
	if e != nil {
		f.emit(e)
	}
}

// report is what this process says of w's breaker (see quorum.Member.Report).
func (w *watch) report() byte { return w.member.Report(w.b.Snapshot()) }

// apply brings w's breaker in line with the fleet's view v:
//   - the fleet-wide isolation, while set, isolates it (again, if it was
//     reset locally meanwhile); once cleared, a breaker the fleet isolated
//     and still Isolated is reset;
//   - a quorum reporting open forces a Closed breaker open for hold(), and
//     renews that break every round while the quorum holds and the break is
//     still the fleet's (quorum.Member.Follow). A breaker open on its own
//     evidence, recovering, or probing after a break of its own is left to
//     recover by itself.
func (f *Fleet) apply(w *watch, v view, now time.Time) {
	b := w.b
	if v.isolated {
		w.member.ForcedEnds = time.Time{}
		w.member.Isolated = true
		if b.State() != breaker.Isolated {
			b.Isolate()
			f.emit(Switched{Breaker: w.name, Isolated: true, At: now})
		}
		return
	}
	if w.member.Isolated {
		w.member.Isolated = false
		if b.State() == breaker.Isolated {
			b.Reset()
		}
		f.emit(Switched{Breaker: w.name, Isolated: false, At: now})
	}
	if !v.quorum() {
		return
	}
	hold := f.s.hold()
	if _, started := w.member.Follow(b, hold); started {
		f.emit(Followed{Breaker: w.name, Open: v.open, Seen: v.seen, Need: v.need, Break: hold, At: now})
	}
}
