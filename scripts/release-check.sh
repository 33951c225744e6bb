#!/usr/bin/env bash
# Checks that every published module (the root, otel/, grpc/, fleet/) can be
# fetched and built by a user once tagged at VERSION (the argument, or the
# version in the VERSION file): see scripts/releasecheck. It zips each
# module as the go command would, serves the zips from a file:// module
# proxy, and in a new module per published module runs `go get
# path@VERSION` and builds a program importing it; first it checks that
# each module carries the LICENSE, requires no benchmark peer, and, if
# nested, requires the root at VERSION. Then it compares every module's
# exported API with the last release's (api/, written by -write-api at a
# release): an incompatible change fails unless VERSION may make it and
# CHANGELOG.md names it under "### Breaking".
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-$(cat VERSION)}"
cd scripts/releasecheck
go run . -root ../.. "$version"
go run . -root ../.. -api "$version"
