package fleet

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A round's part for one breaker: summaryScript, or, in the usual round,
// the plain commands that do what the script would.
//
// The script runs when the process's report joins a set or leaves one (its
// first report, a change of state, a round that failed and so may or may
// not have changed it), when pruning is due (settings.pruneAfter), and for
// Watch's first read. Otherwise the process is already a member of the
// sets of its state, and the round refreshes its scores (ZADD XX: update
// only) and reads the summary with plain commands: ZCOUNT of the seen and
// the open sets, and GET of the control key, exactly what the script reads.
// The plain commands cost Redis about two thirds of the script, whose
// fixed cost per run outweighs its four calls (docs/fleet.md, "Cost"). A
// ZADD XX that finds no member (the Redis lost the keys) sends the script
// the next round, which adds it back.
//
// The quiet round, a closed process's while the breaker's latest summary
// had no open report and no isolation (the usual state of a healthy
// fleet), reads less: one ZCOUNT of the open set that counts the isolation
// marker too. Zero means the summary is still quiet, and nothing needs the
// number of processes seen; more sends the full read (read) in a second
// pipeline of the same round, so the round applies what a full round would
// have. A healthy round is then two commands per breaker instead of four.
type queued struct {
	script  *redis.Cmd
	scores  []*redis.IntCmd // ZADD XX CH: 1 when the member was there
	stirred *redis.IntCmd   // the quiet round's ZCOUNT of open reports and the marker
	seen    *redis.IntCmd
	open    *redis.IntCmd
	control *redis.StringCmd
}

// queue queues the commands of p on the breaker whose keys are k in pipe:
// the script when p needs it (by EVALSHA, or by EVAL when eval is set),
// else the plain commands, of the quiet round when quiet is set.
func (s *settings) queue(ctx context.Context, pipe redis.Pipeliner, k keys, p publication, eval, quiet bool) queued {
	if p.state == 0 || p.changed || p.prune {
		return queued{script: s.publish(ctx, pipe, k, p, eval)}
	}
	z := redis.ZAddArgs{XX: true, Ch: true, Members: []redis.Z{{Score: float64(p.now.UnixMilli()), Member: p.process}}}
	q := queued{scores: []*redis.IntCmd{pipe.ZAddArgs(ctx, k.seen, z)}}
	switch p.state {
	case reportOpen:
		q.scores = append(q.scores, pipe.ZAddArgs(ctx, k.open, z))
	case reportFollowing:
		q.scores = append(q.scores, pipe.ZAddArgs(ctx, k.following, z))
	}
	if quiet && p.state == reportClosed {
		q.stirred = pipe.ZCount(ctx, k.open, s.from(p.now), "+inf")
		return q
	}
	q.read(ctx, pipe, s.from(p.now), k)
	return q
}

// from is the lowest score a summary read at now counts, as ZCOUNT takes it.
func (s *settings) from(now time.Time) string { return strconv.FormatInt(s.window(now).from, 10) }

// read queues the full read of the summary in pipe: the reports seen since
// from, the open ones among them, and the control key.
func (q *queued) read(ctx context.Context, pipe redis.Pipeliner, from string, k keys) {
	q.seen = pipe.ZCount(ctx, k.seen, from, "+inf")
	q.open = pipe.ZCount(ctx, k.open, from, "(+inf")
	q.control = pipe.Get(ctx, k.control)
}

// stirs reports whether q is a quiet round's whose ZCOUNT found an open
// report or the isolation marker, so that it needs the full read.
func (q queued) stirs() bool { return q.stirred != nil && q.seen == nil && q.stirred.Val() > 0 }

// result is the breaker's summary, and whether the process's reports were
// where the round took them to be (false: send the script next round). A
// quiet round that found nothing gives no number of processes seen: the
// summary's zero open reports make no quorum whatever it is.
func (q queued) result() (c counts, kept bool, err error) {
	if q.script != nil {
		c, err = countsOf(q.script)
		return c, err == nil, err
	}
	kept = true
	for _, z := range q.scores {
		n, err := z.Result()
		if err != nil {
			return counts{}, false, err
		}
		kept = kept && n == 1
	}
	if q.seen == nil {
		n, err := q.stirred.Result()
		if err == nil && n > 0 {
			err = errors.New("fleet: the quiet round's summary was stirred but not read")
		}
		return counts{}, kept, err
	}
	seen, err := q.seen.Result()
	if err != nil {
		return counts{}, false, err
	}
	open, err := q.open.Result()
	if err != nil {
		return counts{}, false, err
	}
	v, err := q.control.Result()
	if errors.Is(err, redis.Nil) { // no switch set
		v, err = "", nil
	}
	if err != nil {
		return counts{}, false, err
	}
	return counts{seen: int(seen), open: int(open), isolated: v == isolateValue}, kept, nil
}

// noScript reports whether a command of cmds found the Redis without the
// script.
func noScript(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") {
			return true
		}
	}
	return false
}
