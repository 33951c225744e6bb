package main

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every metric the dashboard queries is one the service exports, as the
// exporter spells it: a misspelt name, or one the exporter names otherwise
// (a missing unit suffix, a _total too many), fails here rather than
// showing "No data" in Grafana.
func TestTheDashboardQueriesOnlyExportedMetrics(t *testing.T) {
	d := loadDashboard(t)
	exported := seriesNames(outage(t).families)

	queries := d.queries()
	require.NotEmpty(t, queries)
	for _, q := range queries {
		names := metricNames(q.expr)
		assert.NotEmpty(t, names, "%s: %s uses no metric", q.where, q.expr)
		for _, name := range names {
			assert.Contains(t, exported, name, "%s: %s", q.where, q.expr)
		}
	}
}

// The dashboard is one Grafana imports: panels with ids of their own, each
// on the Prometheus data source variable, and the panels the README lists.
func TestTheDashboardIsWellFormed(t *testing.T) {
	d := loadDashboard(t)
	assert.GreaterOrEqual(t, d.SchemaVersion, 39)
	var variables []string
	for _, v := range d.Templating.List {
		variables = append(variables, v.Name)
		if v.Type == "datasource" {
			assert.Equal(t, "prometheus", v.Query, v.Name)
		}
	}
	assert.Contains(t, variables, "DS_PROMETHEUS")

	ids := map[int]string{}
	var titles []string
	for _, p := range d.Panels {
		titles = append(titles, p.Title)
		assert.NotContains(t, ids, p.ID, "%s has the id of %s", p.Title, ids[p.ID])
		ids[p.ID] = p.Title
		assert.Equal(t, "${DS_PROMETHEUS}", p.Datasource.UID, p.Title)
		require.NotEmpty(t, p.Targets, p.Title)
		for _, target := range p.Targets {
			assert.Equal(t, "${DS_PROMETHEUS}", target.Datasource.UID, p.Title)
		}
	}
	for _, want := range []string{
		"Calls per second by outcome", "Call latency p50 / p99", "Breaker state per dependency",
		"Breakers not closed, now", "Budget tokens per dependency", "Refusals per second",
		"Retries per second", "Hedges per second", "Breaker transitions",
	} {
		assert.Contains(t, titles, want)
	}
}

// metricNames finds the metrics a query uses: what is left of its
// identifiers once the label matchers ({...}), ranges ([5m]), grouping
// clauses (by (...)) and Grafana variables are cut out, less the names of
// functions (an identifier before a parenthesis) and PromQL's keywords.
func TestMetricNamesOfAQuery(t *testing.T) {
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`up`, []string{"up"}},
		{`rate(a_total{job="x", le="0.5"}[5m])`, []string{"a_total"}},
		{`histogram_quantile(0.99, sum by (le, name) (rate(d_seconds_bucket{name=~"$pipeline"}[$__rate_interval])))`, []string{"d_seconds_bucket"}},
		{`sum without (instance) (a) / on (job) group_left (x) b > bool 1e3`, []string{"a", "b"}},
		{`max by (n) ((s{state="open"} * 3) or (s{state="closed"} * 0)) == 1 unless absent(c offset 5m)`, []string{"s", "c"}},
		{`count(x{a="by (y)"}) or vector(0)`, []string{"x"}},
		{`label_values(resilience_breaker_state, resilience_breaker_name)`, []string{"resilience_breaker_state"}},
	} {
		assert.Equal(t, tt.want, metricNames(tt.expr), tt.expr)
	}
}

// dashboard is the part of a Grafana dashboard the tests read.
type dashboard struct {
	SchemaVersion int `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"` // a string, or an object with a query
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int        `json:"id"`
		Title      string     `json:"title"`
		Datasource datasource `json:"datasource"`
		Targets    []struct {
			Expr       string     `json:"expr"`
			Datasource datasource `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

type datasource struct {
	UID string `json:"uid"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile("grafana/dashboard.json")
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(b, &d))
	return d
}

// query is one PromQL query of a dashboard and where it is.
type query struct{ where, expr string }

// queries are every panel's expressions and every query variable's query.
func (d dashboard) queries() []query {
	var qs []query
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			qs = append(qs, query{"panel " + p.Title, target.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		switch q := v.Query.(type) {
		case string:
			qs = append(qs, query{"variable " + v.Name, q})
		case map[string]any:
			s, _ := q["query"].(string)
			qs = append(qs, query{"variable " + v.Name, s})
		}
	}
	return qs
}

var (
	// labelValues is Grafana's variable query label_values(metric, label).
	labelValuesQuery = regexp.MustCompile(`^\s*label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,[^)]*\)\s*$`)
	// cut are the parts of a query that hold no metric name, in the order
	// they are cut: strings first, since they may hold any character.
	cut = []*regexp.Regexp{
		regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|` + "`[^`]*`"), // strings
		regexp.MustCompile(`\{[^}]*\}`),                                        // label matchers
		regexp.MustCompile(`\[[^\]]*\]`),                                       // ranges, subqueries
		regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`),
		regexp.MustCompile(`\$\{[^}]*\}|\$\w+`), // Grafana variables
	}
	// token is an identifier or a number (which may hold letters: 1e3, 5m).
	token = regexp.MustCompile(`[0-9][0-9A-Za-z.+]*|[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	// keywords are PromQL's words that are not metrics.
	keywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// metricNames returns the metrics expr uses, each once, in the order they
// appear (see TestMetricNamesOfAQuery).
func metricNames(expr string) []string {
	if m := labelValuesQuery.FindStringSubmatch(expr); m != nil {
		return []string{m[1]}
	}
	for _, re := range cut {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, tok := range token.FindAllString(expr, -1) {
		switch {
		case tok[0] >= '0' && tok[0] <= '9': // a number, a duration
		case strings.HasSuffix(tok, "("): // a function
		case slices.Contains(keywords, strings.ToLower(tok)):
		case !slices.Contains(names, tok):
			names = append(names, tok)
		}
	}
	return names
}

// seriesNames are the names of every series of the families, as a query
// names them: a histogram's _bucket, _sum and _count, a summary's
// quantiles, _sum and _count, any other family's own name.
func seriesNames(families map[string]*dto.MetricFamily) []string {
	var names []string
	for name, mf := range families {
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names = append(names, name+"_bucket", name+"_sum", name+"_count")
		case dto.MetricType_SUMMARY:
			names = append(names, name, name+"_sum", name+"_count")
		default:
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}
