#!/usr/bin/env bash
# Runs go vet, staticcheck and every test of every module (the library; the
# nested downstream/ module that uses it as a user would; and the nested otel/
# and grpc/ modules, which keep OpenTelemetry and gRPC out of the library's
# dependencies; and the nested fleet/ module, which keeps Redis out of them)
# under the race detector, then builds the benchmark harness and runs each
# benchmark once so it cannot rot.
#
# The fleet/ tests need a Redis: the script starts a redis-server of its own on
# a free loopback port, without persistence, exports PIPELINE_REDIS_ADDR and
# stops it on exit. Without redis-server it installs it when it can (as root,
# with apt-get, about a minute); otherwise it says so loudly and leaves the
# fleet/ module out, as it runs without -race when it cannot get a compiler.
#
# The race detector needs a C compiler. Without one, the script installs gcc when
# it can (as root, with apt-get); otherwise it says so and runs without -race.
set -euo pipefail
cd "$(dirname "$0")/.."

race=-race
if ! command -v "$(go env CC)" >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing gcc for the race detector" >&2
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc >/dev/null
	else
		echo "test.sh: no C compiler, so the tests run WITHOUT -race; install gcc to get it" >&2
		race=
	fi
fi

modules=". downstream otel grpc fleet"
if ! command -v redis-server >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing redis-server for the fleet/ tests" >&2
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null || true
	fi
fi
if ! command -v redis-server >/dev/null 2>&1; then
	echo "test.sh: WARNING: no redis-server and none could be installed: the fleet/ module is NOT tested" >&2
	modules=". downstream otel grpc"
else
	redis_port=6390
	while (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null; do # taken: try the next
		redis_port=$((redis_port + 1))
	done
	redis_dir=$(mktemp -d)
	redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$redis_dir" \
		--daemonize yes --pidfile "$redis_dir/redis.pid" --logfile "$redis_dir/redis.log"
	stop_redis() {
		if [ -s "$redis_dir/redis.pid" ]; then
			kill "$(cat "$redis_dir/redis.pid")" 2>/dev/null || true
		fi
		rm -rf "$redis_dir"
	}
	trap stop_redis EXIT
	for _ in $(seq 50); do # daemonized: wait until it answers
		if (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	export PIPELINE_REDIS_ADDR="127.0.0.1:$redis_port"
fi

staticcheck="go run honnef.co/go/tools/cmd/staticcheck@v0.8.2"
for module in $modules; do
	echo "test.sh: module $module" >&2
	(cd "$module" && go vet ./... && $staticcheck ./... && go test $race -count=1 ./...)
done
if [ -x .ci/bench ]; then
	.ci/bench
fi
