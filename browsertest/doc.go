// Package browsertest holds the tests that load the library's pages in a
// real browser: the live dashboard (package dashboard) and the simulation's
// report page (cmd/simulate's index.html). It is a module of its own, so
// that chromedp is never a dependency of the library, and its tests skip,
// saying so, where no Chromium is installed.
//
// Run them with
//
//	cd browsertest && go test ./...
//
// With PIPELINE_SCREENSHOTS=1 they also write the screenshots the docs
// show, docs/img/dashboard.png and docs/img/report.png. PIPELINE_CHROMIUM
// names the browser's binary when it is not on the PATH.
package browsertest
