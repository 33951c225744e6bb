package browsertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// report runs the simulation's retry-storm scenario, a short run whose
// dependency fails from 10 s to 40 s, with go run ./cmd/simulate, and
// returns the path of the report page it wrote.
func report(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command runs the simulation")
	dir := t.TempDir()
	cmd := exec.Command(goTool, "run", "github.com/resilience-go/pipeline/cmd/simulate", "-scenario", "retry-storm", "-out", dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	page := filepath.Join(dir, "index.html")
	require.FileExists(t, page)
	return page
}

// TestTheReportInABrowser loads the simulation's report page from disk and
// checks that its charts shade the fault's window (the rect of class band
// each chart draws per fault, named in its legend), with no error in the
// console.
func TestTheReportInABrowser(t *testing.T) {
	ctx := browser(t)
	messages := watchConsole(t, ctx)
	page := report(t)

	step, cancel := within(ctx, 20*time.Second)
	defer cancel()
	require.NoError(t, chromedp.Do(step,
		chromedp.EmulateViewport(1100, 1250),
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible(chromedp.CSS(`section#retry-storm figure svg`)),
	))
	type band struct {
		Charts, Bands int
		Width         float64
		Legend        bool
	}
	got, err := chromedp.Run(step, chromedp.Evaluate[band](`(function () {
		var charts = document.querySelectorAll("figure svg");
		var bands = document.querySelectorAll("figure svg rect.band");
		var first = bands[0], svg = first && first.closest("svg");
		var legend = svg ? Array.prototype.some.call(svg.querySelectorAll("text.legend"),
			function (t) { return t.textContent === "failures 10-40 s"; }) : false;
		return {Charts: charts.length, Bands: bands.length,
			Width: first ? first.getBoundingClientRect().width : 0, Legend: legend};
	})()`))
	require.NoError(t, err)
	assert.Positive(t, got.Charts)
	assert.Equal(t, got.Charts, got.Bands, "every chart of the run shades its one fault")
	assert.Positive(t, got.Width, "the band is drawn, not empty")
	assert.True(t, got.Legend, "the legend names the fault and its window")
	assert.Empty(t, messages.seen(), "no error in the console")

	if os.Getenv("PIPELINE_SCREENSHOTS") == "1" {
		png, err := chromedp.Run(step, chromedp.CaptureScreenshot())
		require.NoError(t, err)
		screenshot(t, "report.png", png)
	}
}
