#!/usr/bin/env bash
# Checks that every module's go.mod is tidy, and runs go vet, staticcheck and
# every test of every module (the library; the
# nested downstream/ and downstream/observe/ modules that use it as a user
# would, the second through OpenTelemetry; examples/service, a runnable
# service whose tests build and run it; the nested otel/ and grpc/ modules,
# which keep OpenTelemetry and gRPC out of the library's dependencies; and the
# nested fleet/ module, which keeps Redis out of them; and the nested
# browsertest/ module, which loads the dashboard and the report page in a
# headless Chromium)
# under the race detector, then builds the benchmark harness and runs each
# benchmark once so it cannot rot, and runs the release check
# (scripts/release-check.sh) for the version in VERSION.
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

modules=". downstream downstream/observe examples/service otel grpc fleet browsertest scripts/releasecheck"
if ! command -v redis-server >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing redis-server for the fleet/ tests" >&2
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null || true
	fi
fi
if ! command -v redis-server >/dev/null 2>&1; then
	echo "test.sh: WARNING: no redis-server and none could be installed: the fleet/ module is NOT tested" >&2
	modules=". downstream downstream/observe examples/service otel grpc browsertest scripts/releasecheck"
else
	# A port of our own: start a redis-server on the first port that looks
	# free and keep it once the server answering there says, by its process
	# id, that it is ours. Another run of this script may take the same port
	# between our check and our start; then our server fails to bind and
	# exits, and we try the next port, rather than use (and later stop) the
	# other run's.
	redis_dir=$(mktemp -d)
	redis_pid=
	stop_redis() {
		if [ -n "$redis_pid" ]; then
			kill "$redis_pid" 2>/dev/null || true
			wait "$redis_pid" 2>/dev/null || true
		fi
		rm -rf "$redis_dir"
	}
	trap stop_redis EXIT
	redis_port=6390
	while [ -z "$redis_pid" ] && [ "$redis_port" -lt 6490 ]; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$redis_port") 2>/dev/null; then # taken
			redis_port=$((redis_port + 1))
			continue
		fi
		redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$redis_dir" \
			--logfile "$redis_dir/redis-$redis_port.log" &
		pid=$!
		for _ in $(seq 50); do # until it answers, or has exited
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			# The server that answers must be ours: another run's may hold
			# the port while ours has not yet failed to bind it.
			answering=$(redis-cli -p "$redis_port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p' || true)
			if [ "$answering" = "$pid" ]; then
				redis_pid=$pid
				break
			fi
			sleep 0.1
		done
		if [ -z "$redis_pid" ]; then # it lost the port to another run
			kill "$pid" 2>/dev/null || true
			redis_port=$((redis_port + 1))
		fi
	done
	if [ -z "$redis_pid" ]; then
		echo "test.sh: could not start a redis-server on any port from 6390 to 6489" >&2
		exit 1
	fi
	export PIPELINE_REDIS_ADDR="127.0.0.1:$redis_port"
fi

if [ -n "$race" ]; then
	echo "test.sh: the tests run under the race detector (-race)" >&2
else
	echo "test.sh: the tests run WITHOUT the race detector" >&2
fi
staticcheck="go run honnef.co/go/tools/cmd/staticcheck@v0.8.2"
# The browsertest/ module loads the dashboard and the simulation's report
# page in a headless Chromium; without one it installs Debian's when it can,
# and otherwise its tests skip, saying so.
if [ -z "${PIPELINE_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing chromium for the browsertest/ module" >&2
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || true
	fi
fi
if [ -z "${PIPELINE_CHROMIUM:-}" ] && ! command -v chromium >/dev/null 2>&1; then
	echo "test.sh: WARNING: no chromium and none could be installed: the browsertest/ tests SKIP" >&2
fi

for module in $modules; do
	echo "test.sh: module $module" >&2
	(cd "$module" && go mod tidy -diff && go vet ./... && $staticcheck ./... && go test $race -count=1 ./...)
done
if [ -x .ci/bench ]; then
	.ci/bench
fi
echo "test.sh: the release check, for version $(cat VERSION)" >&2
./scripts/release-check.sh
