package systest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/dashboard"
	"github.com/omnictx/omni/internal/statsreport"
	"github.com/omnictx/omni/internal/testfixture"
	"github.com/omnictx/omni/projections/stats"
)

// update rewrites the reviewed dashboard screenshot (go test
// ./internal/systest -run DashboardBrowser -update).
var update = flag.Bool("update", false, "rewrite the reviewed dashboard screenshot")

// openHome opens a home's store in-process for the test, closed at cleanup.
func openHome(t *testing.T, home string) *daemon.Service {
	t.Helper()
	svc, closeFn, err := daemon.OpenLocal(context.Background(), daemon.Config{Home: home}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	return svc
}

// serviceSource is a report source over a service, the way the daemon's
// "stats" method answers.
func serviceSource(svc *daemon.Service) dashboard.Source {
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
// home, and a screenshot is saved to internal/dashboard/testdata/dashboard.png for review (with
// -update; otherwise to a temporary file).
func TestDashboardBrowser(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	b := ledgerPass(t)
	sharedStoreMu.Lock()
	defer sharedStoreMu.Unlock()
	svc := openHome(t, b.home)
	// A fixed clock keeps the screenshot the same from run to run.
	d, err := dashboard.New(serviceSource(svc), func() time.Time { return time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC) }, "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urls := make(chan string, 1)
	go dashboard.Serve(ctx, d, 0, func(u string) { urls <- u })
	u := <-urls

	rep, _ := testfixture.ServiceStats(t, svc, time.Time{})
	var want bytes.Buffer
	statsreport.WriteJSON(&want, rep)

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
	if n := testfixture.CheckShown(t, dom, want.Bytes()); n < 30 {
		t.Errorf("only %d numbers compared in the rendered page", n)
	}
	if !strings.Contains(dom, statsreport.Num(b.rep.All.BytesSaved)) {
		t.Errorf("the page does not show the bench's %s bytes saved", statsreport.Num(b.rep.All.BytesSaved))
	}
	// The reviewed screenshot in internal/dashboard/testdata is rewritten
	// only with -update; a plain run writes to a temporary file, so tests
	// never dirty the tree.
	shot := filepath.Join(t.TempDir(), "dashboard.png")
	if *update {
		var err error
		if shot, err = filepath.Abs(filepath.Join("..", "dashboard", "testdata", "dashboard.png")); err != nil {
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
