package fleet

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// takeScript takes up to ARGV[3] tokens from the quota at KEYS[1], the only
// key it touches (so it runs on Redis Cluster), and returns {granted, wait}:
// how many it took, and how many microseconds until the quota holds a token
// more than it left.
//
// The quota is kept by the generic cell rate algorithm as one number, tat,
// the theoretical arrival time of the next token, in microseconds. At now,
// the tokens available are (now + burst × interval - max(tat, now)) /
// interval, at most burst; taking g of them moves tat g intervals on. The key
// expires when tat passes, which is when it would read as a full bucket
// anyway.
//
// now (ARGV[4]) is Redis's own clock (TIME) when "0", so that every process
// times tokens alike; tests pass times directly.
const takeScript = `
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if now == 0 then
	if redis.replicate_commands then redis.replicate_commands() end
	local t = redis.call('TIME')
	now = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local avail = math.floor((now + burst * interval - tat) / interval)
local granted = math.max(0, math.min(want, avail))
if granted > 0 then
	tat = tat + granted * interval
	redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
end
local wait = math.max(0, math.ceil(tat - now - (burst - 1) * interval))
return {granted, wait}
`

var take = redis.NewScript(takeScript)

// grant runs takeScript for want tokens of the quota at key, at now (in
// microseconds since the Unix epoch; 0 for Redis's clock).
func grant(ctx context.Context, rdb redis.Scripter, key string, interval float64, burst, want, now int64) (granted int64, wait time.Duration, err error) {
	res, err := take.Run(ctx, rdb, []string{key},
		strconv.FormatFloat(interval, 'f', -1, 64), burst, want, now).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(res) != 2 {
		return 0, 0, fmt.Errorf("fleet: the quota script returned %v", res)
	}
	return res[0], time.Duration(res[1]) * time.Microsecond, nil
}
