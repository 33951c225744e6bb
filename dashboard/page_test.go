package dashboard_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/resilience-go/pipeline/budget"
	"github.com/resilience-go/pipeline/dashboard"
	"github.com/resilience-go/pipeline/health"
	"github.com/resilience-go/pipeline/policy/breaker"
	"github.com/resilience-go/pipeline/policy/bulkhead"
)

// hostile is a dependency name that would break a page that did not escape
// it, long enough to test the layout's bounds.
var hostile = `<script>alert("x")</script>&amp;'"` + strings.Repeat("very-long-host-name.", 100)

// TestThePageReadsWithoutJavaScript serves the page over loopback and reads
// it as a browser without JavaScript would: every dependency is a row of
// the server-rendered table with its state, a hostile name is escaped, and
// the page fetches nothing and runs no script but its own.
func TestThePageReadsWithoutJavaScript(t *testing.T) {
	down := preset(t, "payments", nil)
	require.Error(t, call(down, errDown))
	require.Error(t, call(down, errDown)) // two failures in a row: open
	brk, err := breaker.New(breaker.Config{Name: "hostile"})
	require.NoError(t, err)
	brk.Isolate()
	funds, err := budget.New(budget.Config{Name: "quota", Capacity: 10})
	require.NoError(t, err)
	reg := registry(health.Preset(down), health.Of(hostile, brk, nil), health.Of("quota", nil, funds))
	srv := httptest.NewServer(newDashboard(t, dashboard.Config{Registry: reg}))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	csp := resp.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "frame-ancestors 'none'")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	page := string(body)

	rows := rowsOf(t, page)
	assert.Equal(t, map[string]string{"payments": "open", hostile: "isolated", "quota": "none"}, rows)
	assert.NotContains(t, page, `<script>alert`, "the name is escaped")
	assert.Equal(t, 1, strings.Count(page, "<script"), "one script, the page's own")
	assert.NotRegexp(t, regexp.MustCompile(`(src|href)=`), page, "nothing is fetched, nothing linked")
	assert.Contains(t, page, "30.0 / 30", "the budget's tokens")
	assert.Contains(t, page, "trips 1, break ends", "the open breaker's break")
	assert.NotContains(t, page, "<form", "no actions without an authorizer")
	assert.NotContains(t, page, `id="fleet"`, "no fleet view without peers")
}

// rowsOf parses the page as XML, which it is written as, and returns the
// state of each row of the dependencies' table, by name.
func rowsOf(t *testing.T, page string) map[string]string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Entity = xml.HTMLEntity
	rows := map[string]string{}
	inTable := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the page is well-formed")
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "table" {
				inTable = attr(el, "id") == "dependencies"
			}
			if inTable && el.Name.Local == "tr" && attr(el, "data-dependency") != "" {
				rows[attr(el, "data-dependency")] = attr(el, "data-state")
			}
		case xml.EndElement:
			if el.Name.Local == "table" {
				inTable = false
			}
		}
	}
	return rows
}

// attr returns the attribute name of el, "" if it has none.
func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// TestTheLivePartAndMethods checks the live part the script fetches (the
// table without the page around it), HEAD, a refused POST and an unknown
// path.
func TestTheLivePartAndMethods(t *testing.T) {
	d := newDashboard(t, dashboard.Config{Registry: registry(health.Preset(preset(t, "payments", nil)))})
	w := get(d, "/debug/dashboard/live")
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Contains(t, w.Body.String(), `data-dependency="payments"`)
	assert.NotContains(t, w.Body.String(), "<html")

	w = httptest.NewRecorder()
	d.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/debug/dashboard/", nil))
	assert.Equal(t, http.StatusOK, w.Code)
	assert.Empty(t, w.Body.String())

	w = post(d, "/debug/dashboard/", "")
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
	assert.Equal(t, "GET, HEAD", w.Header().Get("Allow"))

	assert.Equal(t, http.StatusNotFound, get(d, "/debug/dashboard/nothing").Code)
	assert.Equal(t, http.StatusNotFound, get(d, "/debug/dashboard/fleet.json").Code, "no fleet view without peers")
}

// TestThePageShowsTheLimitsInUse: a dependency's bulkhead, as the health
// view reads it, is a cell of its row.
func TestThePageShowsTheLimitsInUse(t *testing.T) {
	b, err := bulkhead.New(bulkhead.Config{Name: "pool", MaxConcurrent: 8})
	require.NoError(t, err)
	for range 3 {
		_, ok := b.TryAcquire(context.Background())
		require.True(t, ok)
	}
	srv := httptest.NewServer(newDashboard(t, dashboard.Config{Registry: registry(health.Limits("search", b))}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Contains(t, string(page), `<span class="limit">bulkhead pool: 3 / 8</span>`)
	assert.Equal(t, 3, b.InFlight(), "reading takes no slot")
}
