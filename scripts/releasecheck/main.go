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
// scripts/release-check.sh runs it for the version in VERSION.
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
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: releasecheck [-root DIR] [-modules DIRS] VERSION")
		os.Exit(2)
	}
	log := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "releasecheck: "+format+"\n", args...) }
	if err := check(*root, strings.Fields(*modules), flag.Arg(0), log); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
