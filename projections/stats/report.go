package stats

import (
	"math"
	"sort"
	"time"
)

// Report is the machine form of the stats, built by (*Stats).Report: every
// figure is a count of calls or of bytes (never tokens), and every field
// name carries its unit. It is what `omni stats --json` prints and what the
// dashboard shows; the text report is rendered from it. For a given fold
// state it is deterministic: slices are sorted, times are RFC 3339 UTC.
type Report struct {
	// Since is the filter (absent: the whole log); FirstEvent and LastEvent
	// the times of the first and newest event folded.
	Since      string `json:"since,omitempty"`
	FirstEvent string `json:"first_event,omitempty"`
	LastEvent  string `json:"last_event,omitempty"`
	// Agent holds the rows a model read: invocations from a host hook.
	// Terminal holds rows with no host (omni exec, pipes) or no session;
	// they are reported apart and never added to Agent.
	Agent    PartReport `json:"agent"`
	Terminal PartReport `json:"terminal"`
}

// PartReport is one population.
type PartReport struct {
	Calls    int `json:"calls"`
	Sessions int `json:"sessions"`
	// RawBytes the tools produced, DeliveredBytes the model read;
	// BytesSaved = RawBytes - DeliveredBytes, the bytes that never reached
	// the model (the headline).
	RawBytes       int64 `json:"raw_bytes"`
	DeliveredBytes int64 `json:"delivered_bytes"`
	BytesSaved     int64 `json:"bytes_saved"`
	// RepeatBytes is the available repetition: bytes of non-blank lines the
	// reader had already been delivered.
	RepeatBytes int64 `json:"repeat_bytes"`
	// Baseline names what RawBytes measures: "raw", the bytes the tools
	// produced, except for the over-cap calls (OverCap), whose raw bytes
	// are the whole output the host persisted to a file, what the model
	// would otherwise have read from it, not the ~2 KB preview it was
	// shown inline.
	Baseline string `json:"baseline"`
	// Tokens are the same totals in tokens, over the calls whose decision
	// counted them (TokenCalls): the raw and delivered text each tokenized
	// line by line with Tokenizer's encoding and summed (see README,
	// "Tokens and recall"). Zero when no call counted tokens.
	Tokens TokenReport `json:"tokens"`
	// OverCap totals the calls whose output the host persisted
	// (events.ParamPersisted), inside the figures above.
	OverCap         OverCapReport `json:"over_cap"`
	FailedCalls     int           `json:"failed_calls"`
	UnrecordedCalls int           `json:"unrecorded_calls"`
	FirstEvent      string        `json:"first_event,omitempty"`
	LastEvent       string        `json:"last_event,omitempty"`
	// Mechanisms: one figure per mechanism, each percentage over its own
	// base; they are never summed.
	Mechanisms Mechanisms `json:"mechanisms"`
	// LeftAloneReasons counts the calls left alone by reason.
	LeftAloneReasons []Count `json:"left_alone_reasons"`
	// Breakdowns, each sorted by bytes saved, then calls, then name.
	ByTool    []RowReport `json:"by_tool"`
	ByFamily  []RowReport `json:"by_family"`
	BySession []RowReport `json:"by_session"`
	ByHost    []RowReport `json:"by_host"`
	ByAgent   []RowReport `json:"by_agent"`
	ByProject []RowReport `json:"by_project"`
	// ByMachine and ByUser split the calls by the machine and user whose
	// daemon recorded them (a team sharing one cluster); "" when the
	// events recorded none.
	ByMachine []RowReport `json:"by_machine"`
	ByUser    []RowReport `json:"by_user"`
	// Folds is the calibration per marker kind, sorted by kind: the recall
	// rate of each ledger mechanism is its RetrievedPct.
	Folds []FoldReport `json:"folds"`
	// Cuts is the same for the first-seen stages' cuts, per mechanism
	// (the distiller's name, "collapse", "cut"), sorted by name; Marker
	// holds the mechanism and Folds the cuts.
	Cuts []FoldReport `json:"cuts"`
	// DecideLatency is the histogram of the engine's decision time per
	// invocation (measured in the daemon; hook process start not included).
	DecideLatency LatencyReport  `json:"decide_latency"`
	Lifetimes     LifetimeReport `json:"lifetimes"`
	Series        SeriesReport   `json:"series"`
}

// OverCapReport totals the over-cap calls: RawBytes is the whole output
// each had (the baseline: what the model would otherwise have read from the
// host's file), DeliveredBytes what the model read instead; SavedPct =
// 100 * BytesSaved / RawBytes, rounded to 0.1.
type OverCapReport struct {
	Calls          int     `json:"calls"`
	RawBytes       int64   `json:"raw_bytes"`
	DeliveredBytes int64   `json:"delivered_bytes"`
	BytesSaved     int64   `json:"bytes_saved"`
	SavedPct       float64 `json:"saved_pct"`
}

// BaselineRaw is PartReport.Baseline: every figure is over the bytes the
// tools produced, an over-cap output counted whole.
const BaselineRaw = "raw: the bytes the tools produced; an over-cap output counts whole (what the model would otherwise read from the host's file), not its inline preview"

// Mechanisms are the per-mechanism figures.
type Mechanisms struct {
	Folded    MechanismReport `json:"folded"`
	Distilled MechanismReport `json:"distilled"`
	Collapsed MechanismReport `json:"collapsed"`
	Redacted  MechanismReport `json:"redacted"`
	Cut       MechanismReport `json:"cut"`
	// LeftAlone: calls no mechanism changed; its bytes_saved is 0 by design.
	LeftAlone MechanismReport `json:"left_alone"`
}

// MechanismReport is one mechanism over its own population.
type MechanismReport struct {
	Calls          int   `json:"calls"`
	Folds          int   `json:"folds"`
	RedactedValues int   `json:"redacted_values"`
	BytesSaved     int64 `json:"bytes_saved"`
	// BaseBytes is the size of the text the mechanism acted on (the calls
	// it changed), in bytes; SavedPct = 100 * BytesSaved / BaseBytes,
	// rounded to 0.1 (0 when BaseBytes is 0).
	BaseBytes int64   `json:"base_bytes"`
	SavedPct  float64 `json:"saved_pct"`
}

// Count is a named count.
type Count struct {
	Name  string `json:"name"`
	Calls int    `json:"calls"`
}

// LatencyReport is a histogram of decision times.
type LatencyReport struct {
	// Calls counts the invocations that recorded a decision time.
	Calls int `json:"calls"`
	// Buckets hold the calls per bucket: UpToMicros is the bucket's upper
	// bound in microseconds (0 for the last, open-ended one).
	Buckets []LatencyBucket `json:"buckets"`
}

// LatencyBucket is one bar of a LatencyReport.
type LatencyBucket struct {
	UpToMicros int64 `json:"up_to_us"`
	Calls      int   `json:"calls"`
}

// RowReport is one line of a breakdown.
type RowReport struct {
	Name           string `json:"name"`
	Calls          int    `json:"calls"`
	RawBytes       int64  `json:"raw_bytes"`
	DeliveredBytes int64  `json:"delivered_bytes"`
	BytesSaved     int64  `json:"bytes_saved"`
	// SavedPct is over this row's own raw bytes.
	SavedPct    float64 `json:"saved_pct"`
	Folds       int     `json:"folds"`
	FailedCalls int     `json:"failed_calls"`
}

// TokenReport is a PartReport's totals in tokens.
type TokenReport struct {
	Tokenizer       string  `json:"tokenizer,omitempty"`
	Calls           int     `json:"calls"`
	RawTokens       int64   `json:"raw_tokens"`
	DeliveredTokens int64   `json:"delivered_tokens"`
	TokensSaved     int64   `json:"tokens_saved"`
	SavedPct        float64 `json:"saved_pct"`
}

// RecallFlagPct is the recall rate, in percent of a mechanism's handles,
// at or over which a report flags the mechanism (once it has at least
// RecallFlagMinHandles handles): a cut the agent fetches back that often
// is a cut it needed. 5% is about six times the 0.85% base rate at which
// readers retrieved folded blocks in the measured history the ledger's
// floors came from.
const (
	RecallFlagPct        = 5.0
	RecallFlagMinHandles = 10
)

// FoldReport is the calibration of one marker kind: how many folds it made
// and how many of their handles a reader fetched back.
type FoldReport struct {
	Marker      string `json:"marker"`
	Folds       int    `json:"folds"`
	Handles     int    `json:"handles"`
	Lines       int    `json:"lines"`
	FoldedBytes int64  `json:"folded_bytes"`
	MarkerBytes int64  `json:"marker_bytes"`
	BytesSaved  int64  `json:"bytes_saved"`
	// Retrieves counts Retrieved events naming these handles;
	// RetrievedHandles the distinct handles retrieved at least once, and
	// RetrievedPct their share of Handles.
	Retrieves        int     `json:"retrieves"`
	RetrievedHandles int     `json:"retrieved_handles"`
	RetrievedPct     float64 `json:"retrieved_pct"`
	// Flagged: RetrievedPct (the recall rate) is at least RecallFlagPct
	// over at least RecallFlagMinHandles handles.
	Flagged bool `json:"flagged,omitempty"`
}

// LifetimeReport is how long reader sessions last between compactions,
// counted in calls.
type LifetimeReport struct {
	// Sessions counts sessions with at least one call.
	Sessions int `json:"sessions"`
	// Compactions counts segments a compaction ended (with at least one
	// call); CompactionEvents every Compacted event (a host may send several
	// per compaction).
	Compactions      int `json:"compactions"`
	CompactionEvents int `json:"compaction_events"`
	// CallsBeforeCompaction is over the ended segments; CallsOpen over the
	// running ones (calls since the last compaction, or since the start).
	CallsBeforeCompaction Dist `json:"calls_before_compaction"`
	CallsOpen             Dist `json:"calls_open"`
}

// Dist summarises a list of call counts (nearest-rank percentiles).
type Dist struct {
	Count  int `json:"count"`
	Median int `json:"median"`
	P90    int `json:"p90"`
	Max    int `json:"max"`
}

// SeriesReport is bytes saved over time by mechanism.
type SeriesReport struct {
	BucketSeconds int64         `json:"bucket_seconds"`
	Points        []PointReport `json:"points"`
}

// PointReport is one bucket: the calls that ended in it.
type PointReport struct {
	Start               string `json:"start"`
	Calls               int    `json:"calls"`
	RawBytes            int64  `json:"raw_bytes"`
	FoldedBytesSaved    int64  `json:"folded_bytes_saved"`
	DistilledBytesSaved int64  `json:"distilled_bytes_saved"`
	CollapsedBytesSaved int64  `json:"collapsed_bytes_saved"`
	RedactedBytesSaved  int64  `json:"redacted_bytes_saved"`
	CutBytesSaved       int64  `json:"cut_bytes_saved"`
}

// Pct returns 100*a/b rounded to one decimal, 0 when b is 0.
func Pct(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return math.Round(1000*float64(a)/float64(b)) / 10
}

func timeStr(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// Report builds the machine form of the current state.
func (s *Stats) Report() Report {
	r := Report{FirstEvent: timeStr(s.First), LastEvent: timeStr(s.Last)}
	if !s.since.IsZero() {
		r.Since = timeStr(s.since)
	}
	r.Agent = s.Agent.report()
	r.Terminal = s.Terminal.report()
	return r
}

func mech(m Mechanism) MechanismReport {
	return MechanismReport{Calls: m.Calls, Folds: m.Folds, RedactedValues: m.Values, BytesSaved: m.SavedBytes,
		BaseBytes: m.BaseBytes, SavedPct: Pct(m.SavedBytes, m.BaseBytes)}
}

func rows(m map[string]*Row) []RowReport {
	out := make([]RowReport, 0, len(m))
	for k, r := range m {
		saved := r.RawBytes - r.DeliveredBytes
		out = append(out, RowReport{Name: k, Calls: r.Calls, RawBytes: r.RawBytes, DeliveredBytes: r.DeliveredBytes,
			BytesSaved: saved, SavedPct: Pct(saved, r.RawBytes), Folds: r.Folds, FailedCalls: r.Failed})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.BytesSaved != b.BytesSaved {
			return a.BytesSaved > b.BytesSaved
		}
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return a.Name < b.Name
	})
	return out
}

func dist(xs []int) Dist {
	if len(xs) == 0 {
		return Dist{}
	}
	s := append([]int(nil), xs...)
	sort.Ints(s)
	rank := func(q float64) int {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return Dist{Count: len(s), Median: rank(0.5), P90: rank(0.9), Max: s[len(s)-1]}
}

func (p *Part) report() PartReport {
	t := p.Totals
	r := PartReport{Calls: t.Calls, RawBytes: t.RawBytes, DeliveredBytes: t.DeliveredBytes, BytesSaved: t.SavedBytes(),
		RepeatBytes: t.RepeatBytes, FailedCalls: t.Failed, UnrecordedCalls: t.Unrecorded,
		FirstEvent: timeStr(p.First), LastEvent: timeStr(p.Last), Baseline: BaselineRaw}
	r.Tokens = TokenReport{Tokenizer: t.Tokenizer, Calls: t.TokenCalls, RawTokens: t.RawTokens, DeliveredTokens: t.DeliveredTokens,
		TokensSaved: t.RawTokens - t.DeliveredTokens, SavedPct: Pct(t.RawTokens-t.DeliveredTokens, t.RawTokens)}
	oc := p.OverCap
	r.OverCap = OverCapReport{Calls: oc.Calls, RawBytes: oc.RawBytes, DeliveredBytes: oc.DeliveredBytes,
		BytesSaved: oc.SavedBytes(), SavedPct: Pct(oc.SavedBytes(), oc.RawBytes)}
	r.Mechanisms = Mechanisms{Folded: mech(p.Folded), Distilled: mech(p.Distilled), Collapsed: mech(p.Collapsed),
		Redacted: mech(p.Redacted), Cut: mech(p.Cut), LeftAlone: mech(p.LeftAlone)}
	r.LeftAloneReasons = []Count{}
	for k, n := range p.LeftAloneReasons {
		r.LeftAloneReasons = append(r.LeftAloneReasons, Count{Name: k, Calls: n})
	}
	sort.Slice(r.LeftAloneReasons, func(i, j int) bool {
		a, b := r.LeftAloneReasons[i], r.LeftAloneReasons[j]
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return a.Name < b.Name
	})
	r.DecideLatency.Buckets = []LatencyBucket{}
	for i, n := range p.Latency {
		up := int64(0)
		if i < len(LatencyBucketsMicros) {
			up = LatencyBucketsMicros[i]
		}
		r.DecideLatency.Calls += n
		r.DecideLatency.Buckets = append(r.DecideLatency.Buckets, LatencyBucket{UpToMicros: up, Calls: n})
	}
	r.ByTool, r.ByFamily, r.BySession = rows(p.ByTool), rows(p.ByFamily), rows(p.BySession)
	r.ByHost, r.ByAgent, r.ByProject = rows(p.ByHost), rows(p.ByAgent), rows(p.ByProject)
	r.ByMachine, r.ByUser = rows(p.ByMachine), rows(p.ByUser)
	r.Sessions = len(p.BySession)
	r.Folds, r.Cuts = calibration(p.ByFold), calibration(p.ByCut)
	var open []int
	for _, n := range p.Open {
		if n > 0 {
			open = append(open, n)
		}
	}
	r.Lifetimes = LifetimeReport{Sessions: len(p.Open), Compactions: len(p.Lifetimes), CompactionEvents: p.Compactions,
		CallsBeforeCompaction: dist(p.Lifetimes), CallsOpen: dist(open)}
	starts, pts := p.Series.Points()
	r.Series = SeriesReport{BucketSeconds: int64(p.Series.Width() / time.Second), Points: []PointReport{}}
	for i, pt := range pts {
		r.Series.Points = append(r.Series.Points, PointReport{Start: starts[i].Format(time.RFC3339), Calls: pt.Calls,
			RawBytes: pt.RawBytes, FoldedBytesSaved: pt.Folded, DistilledBytesSaved: pt.Distilled,
			CollapsedBytesSaved: pt.Collapsed, RedactedBytesSaved: pt.Redacted, CutBytesSaved: pt.Cut})
	}
	return r
}

// calibration reports m's entries sorted by key, each with its recall rate
// (RetrievedPct) and flag.
func calibration(m map[string]*FoldTotals) []FoldReport {
	out := []FoldReport{}
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		f := m[k]
		if f.Folds == 0 && f.Handles == 0 {
			continue
		}
		fr := FoldReport{Marker: k, Folds: f.Folds, Handles: f.Handles, Lines: f.Lines,
			FoldedBytes: f.Bytes, MarkerBytes: f.MarkerBytes, BytesSaved: f.Bytes - f.MarkerBytes,
			Retrieves: f.Retrieved, RetrievedHandles: f.RetrievedHandles,
			RetrievedPct: Pct(int64(f.RetrievedHandles), int64(f.Handles))}
		fr.Flagged = f.Handles >= RecallFlagMinHandles && fr.RetrievedPct >= RecallFlagPct
		out = append(out, fr)
	}
	return out
}
