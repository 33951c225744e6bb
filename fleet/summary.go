package fleet

import (
	"context"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// A round's part for one breaker: summaryScript, or, in the usual round,
// the plain commands that do what the script would.
//
// The script runs when the process's report joins a set or leaves one (its
// first report, a change of state, a round that failed and so may or may
// not have changed it), when pruning is due (every 3 × TTL), and for
// Watch's first read. Otherwise the process is already a member of the
// sets of its state, and the round refreshes its scores (ZADD XX: update
// only) and reads the summary with plain commands: ZCOUNT of the seen and
// the open sets, and GET of the control key, exactly what the script reads.
// The plain commands cost Redis about two thirds of the script, whose
// fixed cost per run outweighs its four calls (docs/fleet.md, "Cost"). A
// ZADD XX that finds no member (the Redis lost the keys) sends the script
// the next round, which adds it back.
type queued struct {
	script  *redis.Cmd
	scores  []*redis.IntCmd // ZADD XX CH: 1 when the member was there
	seen    *redis.IntCmd
	open    *redis.IntCmd
	control *redis.StringCmd
}

// queue queues the commands of p on the breaker whose keys are k in pipe:
// the script when p needs it (by EVALSHA, or by EVAL when eval is set),
// else the plain commands.
func (s *settings) queue(ctx context.Context, pipe redis.Pipeliner, k keys, p publication, eval bool) queued {
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
	from := strconv.FormatInt(s.window(p.now).from, 10)
	q.seen = pipe.ZCount(ctx, k.seen, from, "+inf")
	q.open = pipe.ZCount(ctx, k.open, from, "+inf")
	q.control = pipe.Get(ctx, k.control)
	return q
}

// result is the breaker's summary, and whether the process's reports were
// where the round took them to be (false: send the script next round).
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
