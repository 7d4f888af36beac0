package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/statsreport"
	"github.com/omnictx/omni/internal/testfixture"
	"github.com/omnictx/omni/projections/stats"
)

// serviceSource is a report source over a service, the way the daemon's
// "stats" method answers.
func serviceSource(svc *daemon.Service) Source {
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

// testKey is the owner's key get sends (the dashboard under test's).
var testKey string

func get(t *testing.T, url, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if testKey != "" {
		req.AddCookie(&http.Cookie{Name: keyCookie, Value: testKey})
	}
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
	svc := testfixture.Service(t)
	d, err := New(serviceSource(svc), func() time.Time { return time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC) }, "test")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	// Without the owner's key, nothing: the page, the report, the style.
	testKey = ""
	for _, p := range []string{"/", "/stats.json", "/style.css", "/?key=0123"} {
		if code, body := get(t, srv.URL+p, ""); code != 403 || strings.Contains(body, "s1") {
			t.Errorf("GET %s without the key: %d", p, code)
		}
	}
	testKey = d.Key()
	defer func() { testKey = "" }()
	rep, _ := testfixture.ServiceStats(t, svc, time.Time{})
	var want bytes.Buffer
	statsreport.WriteJSON(&want, rep)

	code, page := get(t, srv.URL+"/", "")
	if code != 200 {
		t.Fatalf("GET /: %d %s", code, page)
	}
	if n := testfixture.CheckShown(t, page, want.Bytes()); n < 30 {
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
	d, err := New(serviceSource(testfixture.Service(t)), time.Now, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, d, 0, func(u string) { urls <- u }) }()
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

// TestDashboardTeam: the by-machine and by-user charts show when machines
// sharing one cluster recorded calls, and only then.
func TestDashboardTeam(t *testing.T) {
	rep := stats.Report{}
	src := func(context.Context, time.Time) (stats.Report, error) { return rep, nil }
	d, err := New(src, time.Now, "test")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler())
	defer srv.Close()
	testKey = d.Key()
	defer func() { testKey = "" }()
	if _, page := get(t, srv.URL+"/", ""); strings.Contains(page, "Savings by machine") {
		t.Fatal("one machine: the team charts show")
	}
	rep.Agent.ByMachine = []stats.RowReport{{Name: "laptop/0a1b2c3d", Calls: 3, BytesSaved: 900}, {Name: "desk/4e5f6a7b", Calls: 2, BytesSaved: 400}}
	rep.Agent.ByUser = []stats.RowReport{{Name: "ann", Calls: 5, BytesSaved: 1300}}
	_, page := get(t, srv.URL+"/", "")
	for _, s := range []string{"Savings by machine", "laptop/0a1b2c3d", "desk/4e5f6a7b", "Savings by user", "ann"} {
		if !strings.Contains(page, s) {
			t.Errorf("team page lacks %q", s)
		}
	}
}
