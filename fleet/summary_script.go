package fleet

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// summaryScript publishes one process's report of one breaker and returns
// the breaker's summary, three integers whatever the size of the fleet:
// {seen, open, isolated}, the processes whose latest report was written at
// or after ARGV[4] (Unix milliseconds), those of them whose latest report is
// open, and 1 while the fleet-wide isolation is set (the control key,
// KEYS[4], holds "isolate"), else 0.
//
// A breaker's reports are three sorted sets whose members are processes,
// each scored by the time of its latest report on its own clock: KEYS[1],
// every process; KEYS[2], those whose latest report is open; KEYS[3], those
// following the fleet. ARGV[2] is the state the process ARGV[1] publishes,
// written at ARGV[3]: "o", "c" or "f", or "" to only read the summary. A set
// the process joins as a new member is set to expire in ARGV[7]
// milliseconds. When ARGV[5] is "1" (its previous report may have been of
// another state), the process leaves whichever of the open and following
// sets is not its state's. When ARGV[6] is not empty it is "(" and Unix
// milliseconds: the members older than that, dead reports, are deleted from
// the three sets, whose expiry is renewed. Every run also puts KEYS[2]'s
// marker (the empty member, scored +inf) right: there exactly while the
// isolation is set; the open count leaves it out.
//
// The fleet runs it when a process's membership may change (its first
// report, a change of state, a round that failed, a member found missing),
// to prune (about 8 processes every 3 × TTL, whatever the fleet's size:
// settings.pruneAfter) and for Watch's first read; the usual round does
// the same with plain commands (see queued).
// Each of its calls is O(log N) in a fleet of N processes, or O(1), and
// the dead members pruned are each deleted once; its reply is three small
// numbers. Every key shares the breaker's hash tag, so the script runs on
// Redis Cluster.
const summaryScript = `
local p, state, at = ARGV[1], ARGV[2], ARGV[3]
if state ~= '' then
	if state ~= 'o' and state ~= 'c' and state ~= 'f' then
		return redis.error_reply('fleet summary: the state must be o, c or f, got ' .. state)
	end
	local life = ARGV[7]
	if redis.call('ZADD', KEYS[1], at, p) == 1 then redis.call('PEXPIRE', KEYS[1], life) end
	if state == 'o' then
		if redis.call('ZADD', KEYS[2], at, p) == 1 then redis.call('PEXPIRE', KEYS[2], life) end
	elseif state == 'f' then
		if redis.call('ZADD', KEYS[3], at, p) == 1 then redis.call('PEXPIRE', KEYS[3], life) end
	end
	if ARGV[5] == '1' then
		if state ~= 'o' then redis.call('ZREM', KEYS[2], p) end
		if state ~= 'f' then redis.call('ZREM', KEYS[3], p) end
	end
	if ARGV[6] ~= '' then
		for i = 1, 3 do
			redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', ARGV[6])
			redis.call('PEXPIRE', KEYS[i], life)
		end
	end
end
local isolated = 0
if redis.call('GET', KEYS[4]) == '` + isolateValue + `' then
	isolated = 1
	if redis.call('ZADD', KEYS[2], '+inf', '') == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[7]) end
else
	redis.call('ZREM', KEYS[2], '')
end
return {redis.call('ZCOUNT', KEYS[1], ARGV[4], '+inf'), redis.call('ZCOUNT', KEYS[2], ARGV[4], '(+inf'), isolated}
`

var summary = redis.NewScript(summaryScript)

// publication is what one run of summaryScript writes and reads.
type publication struct {
	process string
	state   byte      // the report to publish; 0 only reads the summary
	now     time.Time // the time of the report, and the time the summary is read at
	changed bool      // the process's previous report may have been of another state
	prune   bool      // delete the dead reports and renew the keys' expiry
}

// summaryArgs are the keys and arguments of summaryScript for p on the
// breaker whose keys are k, with the reports' lifetimes of s.
func (s *settings) summaryArgs(k keys, p publication) ([]string, []any) {
	w := s.window(p.now)
	state, changed, prune := "", "0", ""
	if p.state != 0 {
		state = string(p.state)
	}
	if p.changed {
		changed = "1"
	}
	if p.prune {
		prune = "(" + strconv.FormatInt(w.forget, 10)
	}
	return []string{k.seen, k.open, k.following, k.control},
		[]any{p.process, state, p.now.UnixMilli(), w.from, changed, prune, s.forget().Milliseconds()}
}

// publish queues summaryScript for p in pipe: by EVALSHA, or by EVAL when
// eval is set (the script is not in the Redis's cache: a restart, a
// failover, SCRIPT FLUSH).
func (s *settings) publish(ctx context.Context, pipe redis.Pipeliner, k keys, p publication, eval bool) *redis.Cmd {
	keys, args := s.summaryArgs(k, p)
	if eval {
		return summary.Eval(ctx, pipe, keys, args...)
	}
	return summary.EvalSha(ctx, pipe, keys, args...)
}

// counts are a breaker's summary as summaryScript returns it.
type counts struct {
	seen, open int
	isolated   bool
}

// countsOf reads the reply of summaryScript.
func countsOf(cmd *redis.Cmd) (counts, error) {
	r, err := cmd.Int64Slice()
	if err != nil {
		return counts{}, err
	}
	if len(r) != 3 {
		return counts{}, fmt.Errorf("fleet: the summary script returned %v", r)
	}
	return counts{seen: int(r[0]), open: int(r[1]), isolated: r[2] == 1}, nil
}
