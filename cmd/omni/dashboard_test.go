package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/projections/stats"
)

// shownRe finds every number the page shows with the report path it comes
// from: <span data-json="agent.bytes_saved">2,383,998</span>.
var shownRe = regexp.MustCompile(`data-json="([^"]+)"[^>]*>([^<]*)<`)

// jsonPath returns the value at a dotted path (object keys, array indexes).
func jsonPath(v any, path string) (any, bool) {
	for _, step := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[step]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// checkShown compares every number the page shows with the value at its
// path in the JSON report, and requires the headline figures to be shown.
// It returns how many numbers it compared.
func checkShown(t *testing.T, page string, report []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(report))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("report: %v", err)
	}
	seen := map[string]bool{}
	n := 0
	for _, m := range shownRe.FindAllStringSubmatch(page, -1) {
		path, shown := m[1], strings.ReplaceAll(strings.TrimSpace(m[2]), ",", "")
		v, ok := jsonPath(doc, path)
		num, isNum := v.(json.Number)
		if !ok || !isNum {
			t.Errorf("the page shows %s = %q, the report has no number there", path, shown)
			continue
		}
		want := num.String()
		if strings.HasSuffix(path, "_pct") {
			f, _ := num.Float64()
			want = strconv.FormatFloat(f, 'f', 1, 64)
		}
		if shown != want {
			t.Errorf("the page shows %s = %q, the report %s", path, shown, want)
		}
		seen[path] = true
		n++
	}
	for _, p := range []string{"agent.bytes_saved", "agent.raw_bytes", "agent.delivered_bytes", "agent.calls", "agent.sessions",
		"agent.mechanisms.folded.bytes_saved", "agent.mechanisms.folded.saved_pct", "agent.mechanisms.folded.folds",
		"agent.mechanisms.distilled.bytes_saved", "agent.mechanisms.collapsed.bytes_saved", "agent.mechanisms.redacted.bytes_saved",
		"agent.mechanisms.left_alone.calls", "terminal.calls", "terminal.bytes_saved", "agent.lifetimes.compactions"} {
		if !seen[p] {
			t.Errorf("the page does not show %s", p)
		}
	}
	return n
}

// serviceSource is a report source over a service, the way the daemon's
// "stats" method answers.
func serviceSource(svc *daemon.Service) reportSource {
	return func(ctx context.Context, since time.Time) (stats.Report, error) {
		req, _ := json.Marshal(daemon.StatsRequest{Since: since})
		b, err := svc.Handle(ctx, "stats", req)
		if err != nil {
			return stats.Report{}, err
		}
		var rep stats.Report
		err = json.Unmarshal(b, &rep)
		return rep, err
	}
}

func get(t *testing.T, url, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDashboardFixture(t *testing.T) {
	svc := fixtureService(t)
	d, err := newDashboard(serviceSource(svc), func() time.Time { return time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.handler())
	defer srv.Close()
	rep, _ := serviceStats(t, svc, time.Time{})
	var want bytes.Buffer
	writeStatsJSON(&want, rep)

	code, page := get(t, srv.URL+"/", "")
	if code != 200 {
		t.Fatalf("GET /: %d %s", code, page)
	}
	if n := checkShown(t, page, want.Bytes()); n < 30 {
		t.Errorf("only %d numbers compared", n)
	}
	for _, s := range []string{"<svg", "Bytes saved over time", "Savings by tool", "Fold calibration", "decision time in the daemon", `href="style.css"`} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") && !strings.Contains(page, "127.0.0.1") {
		t.Errorf("the page loads scripts or remote resources")
	}
	// /stats.json is byte for byte what `omni stats --json` prints.
	code, js := get(t, srv.URL+"/stats.json", "")
	if code != 200 || js != want.String() {
		t.Errorf("stats.json: %d, differs from omni stats --json", code)
	}
	code, js = get(t, srv.URL+"/stats.json?since=2026-03-02T09:40:00Z", "")
	if code != 200 || !strings.Contains(js, `"since": "2026-03-02T09:40:00Z"`) {
		t.Errorf("since: %d %.200s", code, js)
	}
	if code, _ := get(t, srv.URL+"/?since=soon", ""); code != 400 {
		t.Errorf("bad since: %d", code)
	}
	if code, _ := get(t, srv.URL+"/", "evil.example:7717"); code != 403 {
		t.Errorf("foreign Host header: %d", code)
	}
	if code, _ := get(t, srv.URL+"/nothing", ""); code != 404 {
		t.Errorf("unknown path: %d", code)
	}
	if code, css := get(t, srv.URL+"/style.css", ""); code != 200 || !strings.Contains(css, "font") {
		t.Errorf("style.css: %d", code)
	}
}

func TestDashboardListensOnLoopback(t *testing.T) {
	d, err := newDashboard(serviceSource(fixtureService(t)), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- serveDashboard(ctx, d, 0, func(u string) { urls <- u }) }()
	u := <-urls
	if !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("url %s", u)
	}
	if code, _ := get(t, u, ""); code != 200 {
		t.Fatalf("GET %s: %d", u, code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// chromium returns the headless browser, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, c := range []string{os.Getenv("OMNI_CHROMIUM"), "chromium", "/usr/bin/chromium", "chromium-browser"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	t.Skip("headless Chromium not found (Debian: apt-get install -y chromium; or set OMNI_CHROMIUM): dashboard browser test skipped")
	return ""
}

// The dashboard over a bench-filled home, loaded in headless Chromium:
// every number the rendered page shows equals `omni stats --json` of that
// home, and a screenshot is saved to testdata/dashboard.png for review (with
// -update; otherwise to a temporary file).
func TestDashboardBrowser(t *testing.T) {
	browser := chromium(t)
	b := sharedBench(t)
	svc := openHome(t, b.home)
	// A fixed clock keeps the screenshot the same from run to run.
	d, err := newDashboard(serviceSource(svc), func() time.Time { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	go serveDashboard(ctx, d, 0, func(u string) { urls <- u })
	u := <-urls

	rep, _ := serviceStats(t, svc, time.Time{})
	var want bytes.Buffer
	writeStatsJSON(&want, rep)

	chrome := func(args ...string) []byte {
		t.Helper()
		cctx, ccancel := context.WithTimeout(ctx, 90*time.Second)
		defer ccancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
			"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
		cmd := exec.CommandContext(cctx, browser, append(append(base, args...), u)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
		}
		return out
	}
	dom := string(chrome("--dump-dom"))
	if n := checkShown(t, dom, want.Bytes()); n < 30 {
		t.Errorf("only %d numbers compared in the rendered page", n)
	}
	if !strings.Contains(dom, num(b.rep.All.BytesSaved)) {
		t.Errorf("the page does not show the bench's %s bytes saved", num(b.rep.All.BytesSaved))
	}
	// The reviewed screenshot in testdata is rewritten only with -update;
	// a plain run writes to a temporary file, so tests never dirty the tree.
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	if *update {
		var err error
		if shot, err = filepath.Abs(filepath.Join("testdata", "dashboard.png")); err != nil {
			t.Fatal(err)
		}
	}
	chrome("--screenshot="+shot, "--window-size=1280,1900", "--hide-scrollbars")
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 10000 {
		t.Fatalf("screenshot %s: %d bytes, %v", shot, len(png), err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}
