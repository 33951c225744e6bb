// Command releasecheck checks that the modules of this repository can be
// fetched and built by a user once they are tagged at a version: it zips
// each one as the go command would, serves the zips from a file:// module
// proxy, and in a new module fetches every one at that version and builds a
// program importing them all. Before that it checks what the go command
// would not: every module carries the licence, none requires a benchmark
// peer, and each nested module requires the root at that very version.
//
//	go run ./scripts/releasecheck -root ../.. v0.1.0    (from scripts/releasecheck)
//
// With -api it compares instead the exported API of every module (apidiff)
// with the baseline in api/, written by -write-api at the last release: an
// incompatible change passes only in a version that may make it (a new
// minor version before v1, a new major after) whose CHANGELOG.md entry has
// a "### Breaking" section. scripts/release-check.sh runs both for the
// version in VERSION.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	modules := flag.String("modules", ". otel grpc fleet", "the published modules' directories, the root's first")
	api := flag.Bool("api", false, "check the exported API against the baseline in api/ instead")
	writeBaseline := flag.Bool("write-api", false, "write the exported API to api/ as VERSION's baseline instead (at a release)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: releasecheck [-root DIR] [-modules DIRS] [-api | -write-api] VERSION")
		os.Exit(2)
	}
	log := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "releasecheck: "+format+"\n", args...) }
	dirs, version := strings.Fields(*modules), flag.Arg(0)
	var err error
	switch {
	case *writeBaseline:
		err = writeAPI(*root, dirs, version)
	case *api:
		err = checkAPI(*root, dirs, version, log)
	default:
		err = check(*root, dirs, version, log)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
