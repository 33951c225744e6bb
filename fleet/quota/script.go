package quota

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// takeScript charges ARGV[7] tokens to the quota whose tat is at KEYS[1],
// takes up to ARGV[3] more from what is left, registers the process ARGV[5]
// in the set of processes seen at KEYS[2], and returns {granted, wait,
// seen}: how many tokens it took, how many microseconds until the quota
// holds a token more than it left, and how many processes fetched within
// the last ARGV[6] microseconds, this one included. Both keys share the
// quota's hash tag, so the script runs on Redis Cluster.
//
// The quota is kept by the generic cell rate algorithm as one number, tat,
// the theoretical arrival time of the next token, in microseconds. At now,
// the tokens available are (now + burst × interval - max(tat, now)) /
// interval, at most burst; taking g of them moves tat g intervals on. The key
// expires when tat passes, which is when it would read as a full bucket
// anyway.
//
// The charge (the calls a process admitted on its own while it could not
// reach Redis, see Quota.fetch) moves tat on as many intervals first,
// whatever the bucket holds: it may leave fewer than none available, which
// the fleet then earns back at the rate before anything more is granted.
//
// The processes seen are a sorted set scored by the time of each one's
// latest fetch: the script drops those older than ARGV[6] before it counts,
// and the set expires when its newest member would be dropped.
//
// now (ARGV[4]) is Redis's own clock (TIME) when "0", so that every process
// times tokens alike; tests pass times directly.
const takeScript = `
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local ttl = tonumber(ARGV[6])
local debt = tonumber(ARGV[7])
if now == 0 then
	if redis.replicate_commands then redis.replicate_commands() end
	local t = redis.call('TIME')
	now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
tat = tat + debt * interval
local avail = math.floor((now + burst * interval - tat) / interval)
local granted = math.max(0, math.min(want, avail))
if granted > 0 or debt > 0 then
	tat = tat + granted * interval
	redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
end
local wait = math.max(0, math.ceil(tat - now - (burst - 1) * interval))
redis.call('ZADD', KEYS[2], now, ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. string.format('%.0f', now - ttl))
redis.call('PEXPIRE', KEYS[2], math.ceil(ttl / 1000) + 1)
return {granted, wait, redis.call('ZCARD', KEYS[2])}
`

var take = redis.NewScript(takeScript)

// takeRequest is what one run of takeScript asks for.
type takeRequest struct {
	interval float64       // microseconds per token
	burst    int64         // the bucket's size
	want     int64         // the tokens asked for; 0 only registers the process
	debt     int64         // the tokens to charge before any is granted
	process  string        // the process to register as seen
	ttl      time.Duration // how long a registration counts
	now      int64         // microseconds since the Unix epoch; 0 for Redis's clock
}

// grant runs takeScript for r on the quota whose keys are k.
func grant(ctx context.Context, rdb redis.Scripter, k keys, r takeRequest) (granted int64, wait time.Duration, seen int64, err error) {
	res, err := take.Run(ctx, rdb, []string{k.tat, k.seen},
		strconv.FormatFloat(r.interval, 'f', -1, 64), r.burst, r.want, r.now, r.process, r.ttl.Microseconds(), r.debt).Int64Slice()
	if err != nil {
		return 0, 0, 0, err
	}
	if len(res) != 3 {
		return 0, 0, 0, fmt.Errorf("quota: the take script returned %v", res)
	}
	return res[0], time.Duration(res[1]) * time.Microsecond, res[2], nil
}

// giveScript gives ARGV[2] unused tokens back to the quota whose tat is at
// KEYS[1] by moving tat back as many intervals, removes the process ARGV[4]
// from the processes seen at KEYS[2], and returns how many whole tokens the
// bucket gained.
//
// It never moves tat below now: a tat at or behind now reads as a full
// bucket, so the tokens given back to a bucket that has filled up again in
// the meantime are dropped rather than let it hold more than its burst. A
// missing key (expired, or lost by Redis) is a full bucket already, and is
// left alone. Giving a token back is never worse for the fleet's bound than
// spending it: either lets exactly one more call through.
//
// now (ARGV[3]) is Redis's own clock (TIME) when "0", as for takeScript.
const giveScript = `
local interval = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if now == 0 then
	if redis.replicate_commands then redis.replicate_commands() end
	local t = redis.call('TIME')
	now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
redis.call('ZREM', KEYS[2], ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat <= now or n <= 0 then
	return 0
end
local back = math.max(now, tat - n * interval)
if back <= now then
	redis.call('DEL', KEYS[1])
else
	redis.call('SET', KEYS[1], string.format('%.3f', back), 'PX', math.ceil((back - now) / 1000) + 1)
end
return math.floor((tat - back) / interval + 1e-9)
`

var give = redis.NewScript(giveScript)

// giveBack runs giveScript for n tokens of process on the quota whose keys
// are k, at now (in microseconds since the Unix epoch; 0 for Redis's clock),
// and returns the whole tokens the bucket gained.
func giveBack(ctx context.Context, rdb redis.Scripter, k keys, interval float64, n int64, process string, now int64) (int64, error) {
	return give.Run(ctx, rdb, []string{k.tat, k.seen}, strconv.FormatFloat(interval, 'f', -1, 64), n, now, process).Int64()
}
