// Package dashboard serves `omni dashboard`: one read-only page on the
// loopback address with the numbers of the stats report (the same report
// `omni stats --json` prints) and SVG plots drawn on the server, plus the
// report itself as /stats.json. The page has no scripts and loads nothing
// from the network.
package dashboard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"html/template"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/omnictx/omni/internal/statsreport"
	"github.com/omnictx/omni/projections/stats"
)

// The dashboard page and its style sheet, shipped inside the binary. The
// charts are SVG drawn here on the server: no script, no CDN.
//
//go:embed static/index.html.tmpl static/style.css
var dashboardFS embed.FS

// DefaultPort is the port of `omni dashboard` on 127.0.0.1.
const DefaultPort = 7717

// Source returns the stats report for events since a time (zero: all).
type Source func(ctx context.Context, since time.Time) (stats.Report, error)

// Dashboard serves the page over one report source.
type Dashboard struct {
	// key is the owner's key: every request carries it (the URL Serve
	// prints, then a cookie), so another local user, who can reach the
	// loopback port but never saw the URL, reads nothing.
	key     string
	report  Source
	now     func() time.Time
	version string
	tmpl    *template.Template
	css     []byte
}

// New builds the dashboard over src; now is the clock ?since=WHEN is read
// against and the page's build time; version is printed in the footer.
// Errors: the embedded template or style sheet cannot be read (a broken
// build).
func New(src Source, now func() time.Time, version string) (*Dashboard, error) {
	funcs := template.FuncMap{
		"num": func(n any) string {
			switch v := n.(type) {
			case int:
				return statsreport.Num(v)
			case int64:
				return statsreport.Num(v)
			}
			return fmt.Sprint(n)
		},
		"pct": func(p float64) string { return strconv.FormatFloat(p, 'f', 1, 64) },
	}
	t, err := template.New("index.html.tmpl").Funcs(funcs).ParseFS(dashboardFS, "static/index.html.tmpl")
	if err != nil {
		return nil, fmt.Errorf("dashboard template: %w", err)
	}
	css, err := dashboardFS.ReadFile("static/style.css")
	if err != nil {
		return nil, fmt.Errorf("dashboard style: %w", err)
	}
	var k [16]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, fmt.Errorf("dashboard key: %w", err)
	}
	return &Dashboard{key: hex.EncodeToString(k[:]), report: src, now: now, version: version, tmpl: t, css: css}, nil
}

// Key returns the owner's key (32 hex): the URL Serve reports carries it
// as ?key=, and a browser keeps it in a cookie.
func (d *Dashboard) Key() string { return d.key }

// keyCookie names the cookie that carries the owner's key.
const keyCookie = "omni_dashboard_key"

// authorized reports a request that carries the owner's key, in its
// query (the printed URL; the key is then set as a cookie for the page's
// links) or its cookie.
func (d *Dashboard) authorized(w http.ResponseWriter, r *http.Request) bool {
	if q := r.URL.Query().Get("key"); q != "" && subtle.ConstantTimeCompare([]byte(q), []byte(d.key)) == 1 {
		http.SetCookie(w, &http.Cookie{Name: keyCookie, Value: d.key, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		return true
	}
	c, err := r.Cookie(keyCookie)
	return err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(d.key)) == 1
}

// Handler serves GET / (the page), /stats.json (the report, as
// `omni stats --json` prints it) and /style.css; every page takes
// ?since=WHEN as `omni stats --since` does. Requests naming another host
// than the loopback address are refused (DNS rebinding), and so are
// requests without the owner's key (Key): the report names sessions,
// projects and users, and any local user can reach the port.
func (d *Dashboard) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.page)
	mux.HandleFunc("GET /stats.json", d.json)
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Write(d.css)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if host != "127.0.0.1" && host != "localhost" {
			http.Error(w, "omni dashboard answers on 127.0.0.1 only", http.StatusForbidden)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if !d.authorized(w, r) {
			http.Error(w, "omni dashboard: open the URL 'omni dashboard' printed (it carries the owner's key)", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (d *Dashboard) load(w http.ResponseWriter, r *http.Request) (stats.Report, string, bool) {
	arg := r.URL.Query().Get("since")
	var since time.Time
	if arg != "" {
		var err error
		if since, err = statsreport.ParseSince(arg, d.now()); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return stats.Report{}, "", false
		}
	}
	rep, err := d.report(r.Context(), since)
	if err != nil {
		http.Error(w, "omni dashboard: "+err.Error(), http.StatusServiceUnavailable)
		return stats.Report{}, "", false
	}
	return rep, arg, true
}

func (d *Dashboard) json(w http.ResponseWriter, r *http.Request) {
	rep, _, ok := d.load(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	statsreport.WriteJSON(w, rep)
}

// mechRow is one row of the page's mechanism table.
type mechRow struct {
	Name, Key string
	M         stats.MechanismReport
}

type rangeLink struct {
	Label, Href string
	On          bool
}

func (d *Dashboard) page(w http.ResponseWriter, r *http.Request) {
	rep, arg, ok := d.load(w, r)
	if !ok {
		return
	}
	a := rep.Agent
	m := a.Mechanisms
	rows := []mechRow{{"folded", "folded", m.Folded}, {"distilled", "distilled", m.Distilled},
		{"collapsed", "collapsed", m.Collapsed}, {"redacted", "redacted", m.Redacted}}
	if m.Cut.Calls != 0 {
		rows = append(rows, mechRow{"cut", "cut", m.Cut})
	}
	rows = append(rows, mechRow{"left alone", "left_alone", m.LeftAlone})
	var ranges []rangeLink
	for _, x := range []struct{ label, arg string }{{"all", ""}, {"today", "today"}, {"week", "week"}, {"month", "month"}} {
		href := "./"
		if x.arg != "" {
			href = "./?since=" + x.arg
		}
		ranges = append(ranges, rangeLink{Label: x.label, Href: href, On: x.arg == arg})
	}
	query := ""
	if arg != "" {
		query = "?since=" + urlQueryEscape(arg)
	}
	const topFamilies = 12
	fam := a.ByFamily
	if len(fam) > topFamilies {
		fam = fam[:topFamilies]
	}
	data := map[string]any{
		"Report": rep, "Span": statsreport.Span(rep), "SinceArg": arg, "Query": query, "Ranges": ranges, "Mechanisms": rows,
		"TimeChart": timeChart(a.Series), "ToolChart": barChart(a.ByTool, "bytes saved"),
		"FamilyChart": barChart(fam, "bytes saved"),
		// The team view, when machines sharing one cluster recorded calls.
		"Team": len(a.ByMachine) > 1 || len(a.ByUser) > 1, "MachineChart": barChart(a.ByMachine, "bytes saved"),
		"UserChart": barChart(a.ByUser, "bytes saved"), "TopFamilies": topFamilies, "FoldChart": foldChart(a.Folds),
		"LatencyChart": latencyChart(a.DecideLatency),
		"Version":      d.version, "Built": d.now().UTC().Format(time.RFC3339),
	}
	var b bytes.Buffer
	if err := d.tmpl.Execute(&b, data); err != nil {
		http.Error(w, "omni dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func urlQueryEscape(s string) string { return template.URLQueryEscaper(s) }

// mechanismColors are the series colours, in stacking order.
var mechanismColors = []struct{ name, color string }{
	{"folded", "#4e79a7"}, {"distilled", "#f28e2b"}, {"collapsed", "#59a14f"}, {"redacted", "#e15759"}, {"cut", "#b07aa1"},
}

func fmtF(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// timeChart draws the series as stacked bars, one per bucket.
func timeChart(s stats.SeriesReport) template.HTML {
	if len(s.Points) == 0 {
		return `<div class="nodata">No calls in this range.</div>`
	}
	const W, H, left, right, top, bottom = 960.0, 260.0, 80.0, 10.0, 10.0, 40.0
	pw, ph := W-left-right, H-top-bottom
	var maxV int64
	for _, p := range s.Points {
		t := pos(p.FoldedBytesSaved) + pos(p.DistilledBytesSaved) + pos(p.CollapsedBytesSaved) + pos(p.RedactedBytesSaved) + pos(p.CutBytesSaved)
		maxV = max(maxV, t)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="bytes saved over time by mechanism">`, int(W), int(H), int(W), int(H))
	fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"/>`, fmtF(left), fmtF(top+ph), fmtF(W-right), fmtF(top+ph))
	for _, f := range []float64{0, 0.5, 1} {
		y := top + ph - f*ph
		fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s" stroke-dasharray="2,3"/>`, fmtF(left), fmtF(y), fmtF(W-right), fmtF(y))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end">%s</text>`, fmtF(left-6), fmtF(y+4), html.EscapeString(statsreport.Size(int64(f*float64(maxV)))))
	}
	bw := pw / float64(len(s.Points))
	for i, p := range s.Points {
		x := left + float64(i)*bw
		y := top + ph
		vals := []int64{p.FoldedBytesSaved, p.DistilledBytesSaved, p.CollapsedBytesSaved, p.RedactedBytesSaved, p.CutBytesSaved}
		for j, v := range vals {
			if v <= 0 || maxV == 0 {
				continue
			}
			h := float64(v) / float64(maxV) * ph
			y -= h
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s: %s %s B saved (%d calls)</title></rect>`,
				fmtF(x+0.5), fmtF(y), fmtF(max(bw-1, 0.5)), fmtF(h), mechanismColors[j].color, html.EscapeString(p.Start),
				mechanismColors[j].name, statsreport.Num(v), p.Calls)
		}
	}
	label := func(i int, anchor string) {
		x := left + (float64(i)+0.5)*bw
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="%s">%s</text>`, fmtF(x), fmtF(H-bottom+16), anchor, html.EscapeString(s.Points[i].Start))
	}
	label(0, "start")
	if len(s.Points) > 2 {
		label(len(s.Points)/2, "middle")
	}
	if len(s.Points) > 1 {
		label(len(s.Points)-1, "end")
	}
	fmt.Fprintf(&b, `<text x="%s" y="%s">one bar per %s</text>`, fmtF(left), fmtF(H-6), html.EscapeString(bucketName(s.BucketSeconds)))
	b.WriteString(`</svg><div class="muted">`)
	for _, c := range mechanismColors {
		fmt.Fprintf(&b, `<span class="swatch" style="background:%s"></span>%s`, c.color, c.name)
	}
	b.WriteString(`</div>`)
	return template.HTML(b.String())
}

func pos(v int64) int64 { return max(v, 0) }

// bucketName says a bucket width in words ("5 minutes", "1 day").
func bucketName(sec int64) string {
	for _, u := range []struct {
		sec  int64
		name string
	}{{86400, "day"}, {3600, "hour"}, {60, "minute"}} {
		if sec >= u.sec && sec%u.sec == 0 {
			return statsreport.Plural(int(sec/u.sec), u.name)
		}
	}
	return statsreport.Plural(int(sec), "second")
}

// barChart draws one horizontal bar per row, by bytes saved.
func barChart(rows []stats.RowReport, what string) template.HTML {
	if len(rows) == 0 {
		return `<div class="nodata">No calls in this range.</div>`
	}
	const W, rowH, left, right = 460.0, 22.0, 150.0, 110.0
	H := rowH*float64(len(rows)) + 8
	var maxV int64
	for _, r := range rows {
		maxV = max(maxV, r.BytesSaved)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`, int(W), int(H), int(W), int(H), html.EscapeString(what))
	for i, r := range rows {
		y := 4 + float64(i)*rowH
		name := r.Name
		if name == "" {
			name = "(none)"
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end">%s</text>`, fmtF(left-6), fmtF(y+14), html.EscapeString(statsreport.ClipName(name, 22)))
		w := 0.0
		if maxV > 0 && r.BytesSaved > 0 {
			w = float64(r.BytesSaved) / float64(maxV) * (W - left - right)
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#4e79a7"><title>%s: %s B saved of %s B raw, %d calls</title></rect>`,
			fmtF(left), fmtF(y+3), fmtF(w), fmtF(rowH-8), html.EscapeString(name), statsreport.Num(r.BytesSaved), statsreport.Num(r.RawBytes), r.Calls)
		fmt.Fprintf(&b, `<text x="%s" y="%s">%s · %s%%</text>`, fmtF(left+w+6), fmtF(y+14), html.EscapeString(statsreport.Size(r.BytesSaved)), fmtF(r.SavedPct))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// latencyChart draws the decision-time histogram, one vertical bar per
// bucket, or says there is nothing measured.
func latencyChart(l stats.LatencyReport) template.HTML {
	if l.Calls == 0 {
		return `<div class="nodata">No decision time in this range: only invocations decided on the real clock record one (bench runs use a synthetic clock). <code>omni bench --latency</code> measures whole hook processes.</div>`
	}
	const W, H, top, bottom, left = 640.0, 190.0, 16.0, 34.0, 40.0
	n := float64(len(l.Buckets))
	bw := (W - left - 10) / n
	maxV := 1
	for _, b := range l.Buckets {
		maxV = max(maxV, b.Calls)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="decision time histogram">`, int(W), int(H), int(W), int(H))
	for i, bk := range l.Buckets {
		x := left + float64(i)*bw
		h := float64(bk.Calls) / float64(maxV) * (H - top - bottom)
		label := "> " + msLabel(l.Buckets[max(i-1, 0)].UpToMicros)
		if bk.UpToMicros > 0 {
			label = "≤ " + msLabel(bk.UpToMicros)
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#4e79a7"><title>%s: %d calls</title></rect>`,
			fmtF(x+2), fmtF(H-bottom-h), fmtF(bw-4), fmtF(h), html.EscapeString(label), bk.Calls)
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, fmtF(x+bw/2), fmtF(H-bottom+14), html.EscapeString(label))
		if bk.Calls > 0 {
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">%d</text>`, fmtF(x+bw/2), fmtF(H-bottom-h-3), bk.Calls)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// msLabel renders microseconds as milliseconds ("0.1 ms", "25 ms").
func msLabel(us int64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.2f", float64(us)/1000), "0"), ".0") + " ms"
}

// foldChart draws, per marker kind, its handles beside the handles
// retrieved, on one scale.
func foldChart(folds []stats.FoldReport) template.HTML {
	if len(folds) == 0 {
		return `<div class="nodata">No folds in this range.</div>`
	}
	const W, rowH, left, right = 700.0, 34.0, 110.0, 150.0
	H := rowH*float64(len(folds)) + 8
	maxV := 1
	for _, f := range folds {
		maxV = max(maxV, f.Handles)
	}
	scale := (W - left - right) / float64(maxV)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="handles folded and handles retrieved per marker kind">`, int(W), int(H), int(W), int(H))
	for i, f := range folds {
		y := 4 + float64(i)*rowH
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end">%s</text>`, fmtF(left-6), fmtF(y+17), html.EscapeString(f.Marker))
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="12" fill="#4e79a7"><title>%s: %d handles folded</title></rect>`,
			fmtF(left), fmtF(y+2), fmtF(float64(f.Handles)*scale), html.EscapeString(f.Marker), f.Handles)
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="12" fill="#e15759"><title>%s: %d handles retrieved</title></rect>`,
			fmtF(left), fmtF(y+16), fmtF(float64(f.RetrievedHandles)*scale), html.EscapeString(f.Marker), f.RetrievedHandles)
		fmt.Fprintf(&b, `<text x="%s" y="%s">%s folded · %s retrieved</text>`, fmtF(left+float64(f.Handles)*scale+6), fmtF(y+17),
			statsreport.Num(f.Handles), statsreport.Num(f.RetrievedHandles))
	}
	b.WriteString(`</svg><div class="muted"><span class="swatch" style="background:#4e79a7"></span>handles folded<span class="swatch" style="background:#e15759"></span>handles retrieved</div>`)
	return template.HTML(b.String())
}

// Serve listens on 127.0.0.1:port (0: any free port) and serves d until
// ctx ends; ready, if not nil, receives the URL once the listener is open
// (with the owner's key: print it only to the owner).
// Errors: the port cannot be bound, the server's.
func Serve(ctx context.Context, d *Dashboard, port int, ready func(url string)) error {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{Handler: d.Handler(), ReadHeaderTimeout: 10 * time.Second}
	errCh := make(chan error, 1)
	go func() { errCh <- srv.Serve(ln) }()
	if ready != nil {
		ready("http://" + ln.Addr().String() + "/?key=" + d.key)
	}
	select {
	case err := <-errCh:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
