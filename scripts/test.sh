#!/usr/bin/env bash
# Runs go vet, staticcheck and every test of every module (the library; the
# nested downstream/ module that uses it as a user would; and the nested otel/
# and grpc/ modules, which keep OpenTelemetry and gRPC out of the library's
# dependencies) under the race detector, then builds the benchmark harness and runs each benchmark once so it
# cannot rot.
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

staticcheck="go run honnef.co/go/tools/cmd/staticcheck@v0.8.2"
for module in . downstream otel grpc; do
	echo "test.sh: module $module" >&2
	(cd "$module" && go vet ./... && $staticcheck ./... && go test $race -count=1 ./...)
done
if [ -x .ci/bench ]; then
	.ci/bench
fi
