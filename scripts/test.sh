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
# Beside it the script starts a Redis Cluster of its own, three masters with a
# replica each, on six free loopback ports from 7100, and exports their
# addresses as PIPELINE_REDIS_CLUSTER_ADDRS for the fleet/ tests on a cluster
# (a failover among them); it stops them on exit. With redis-server there,
# a cluster that cannot be started (no redis-cli, which it installs as it
# installs redis-server, no free ports, a cluster that never serves every
# slot) fails the script: the cluster tests are not skipped in silence.
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
# redis-cli talks to the servers below and makes the cluster; Debian ships it
# in redis-tools, which its redis-server package depends on.
if command -v redis-server >/dev/null 2>&1 && ! command -v redis-cli >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
		echo "test.sh: installing redis-tools (redis-cli) for the fleet/ tests" >&2
		apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-tools >/dev/null || true
	fi
	if ! command -v redis-cli >/dev/null 2>&1; then
		echo "test.sh: redis-server is installed but redis-cli is not, and it could not be installed: install redis-tools" >&2
		exit 1
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
	# ours waits until the redis-server answering on port $1 says, by its
	# process id, that it is $2, and fails once $2 has exited (it lost the
	# port to another run) or 5 s have passed.
	ours() {
		for _ in $(seq 50); do
			if ! kill -0 "$2" 2>/dev/null; then
				return 1
			fi
			answering=$(redis-cli -p "$1" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p' || true)
			if [ "$answering" = "$2" ]; then
				return 0
			fi
			sleep 0.1
		done
		return 1
	}
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
		# The server that answers must be ours: another run's may hold the
		# port while ours has not yet failed to bind it.
		if ours "$redis_port" "$pid"; then
			redis_pid=$pid
		else # it lost the port to another run
			kill "$pid" 2>/dev/null || true
			redis_port=$((redis_port + 1))
		fi
	done
	if [ -z "$redis_pid" ]; then
		echo "test.sh: could not start a redis-server on any port from 6390 to 6489" >&2
		exit 1
	fi
	export PIPELINE_REDIS_ADDR="127.0.0.1:$redis_port"

	# A Redis Cluster of our own: six nodes, each a redis-server started as
	# the one above, with cluster mode on, on the first port from 7100 that
	# looks free and whose cluster bus (the port + 10000) does too, kept
	# once the server answering there says, by its process id, that it is
	# ours (a node that loses its port or its bus to another run exits, and
	# we try the next port). redis-cli then makes them one cluster of three
	# masters with a replica each, and we wait, for 30 s at most, until
	# every node knows the six and serves all 16384 slots.
	cluster_dir=$(mktemp -d)
	cluster_pids=
	cluster_addrs=
	stop_cluster() {
		for pid in $cluster_pids; do
			kill "$pid" 2>/dev/null || true
		done
		for pid in $cluster_pids; do
			wait "$pid" 2>/dev/null || true
		done
		rm -rf "$cluster_dir"
	}
	trap 'stop_cluster; stop_redis' EXIT
	cluster_fail() {
		echo "test.sh: could not start the Redis Cluster for the fleet/ tests: $1" >&2
		for log in "$cluster_dir"/*.log; do
			[ -f "$log" ] && { echo "--- $log" >&2; tail -n 5 "$log" >&2; }
		done
		exit 1
	}
	cluster_port=7100
	for _ in 1 2 3 4 5 6; do
		node_pid=
		while [ -z "$node_pid" ] && [ "$cluster_port" -lt 7400 ]; do
			port=$cluster_port
			cluster_port=$((cluster_port + 1))
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null ||
				(exec 3<>"/dev/tcp/127.0.0.1/$((port + 10000))") 2>/dev/null; then # taken
				continue
			fi
			redis-server --cluster-enabled yes --cluster-config-file "$cluster_dir/nodes-$port.conf" \
				--cluster-node-timeout 2000 --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
				--dir "$cluster_dir" --logfile "$cluster_dir/redis-$port.log" &
			pid=$!
			if ours "$port" "$pid"; then
				node_pid=$pid
			else # it lost the port or its bus to another run
				kill "$pid" 2>/dev/null || true
				wait "$pid" 2>/dev/null || true
			fi
		done
		if [ -z "$node_pid" ]; then
			cluster_fail "no free port for a node from 7100 to 7399"
		fi
		cluster_pids="$cluster_pids $node_pid"
		cluster_addrs="$cluster_addrs 127.0.0.1:$port"
	done
	# shellcheck disable=SC2086 # one argument per address
	if ! redis-cli --cluster create $cluster_addrs --cluster-replicas 1 --cluster-yes >"$cluster_dir/create.log" 2>&1; then
		cluster_fail "redis-cli --cluster create failed"
	fi
	cluster_ready=
	cluster_deadline=$((SECONDS + 30))
	while [ -z "$cluster_ready" ] && [ "$SECONDS" -lt "$cluster_deadline" ]; do
		cluster_ready=yes
		for addr in $cluster_addrs; do
			ok=$(redis-cli -p "${addr##*:}" cluster info 2>/dev/null | tr -d '\r' |
				grep -cE '^(cluster_state:ok|cluster_slots_assigned:16384|cluster_slots_ok:16384|cluster_known_nodes:6)$' || true)
			if [ "$ok" != 4 ]; then
				cluster_ready=
				sleep 0.1
				break
			fi
		done
	done
	if [ -z "$cluster_ready" ]; then
		cluster_fail "the cluster did not serve all 16384 slots on every node within 30 s"
	fi
	cluster_addrs=${cluster_addrs# }
	export PIPELINE_REDIS_CLUSTER_ADDRS="${cluster_addrs// /,}"
	echo "test.sh: a Redis Cluster on $PIPELINE_REDIS_CLUSTER_ADDRS" >&2
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
