package systest

import "github.com/omnictx/omni/internal/bench"

// shownSets is the corpus oracles' own record of deliveries, kept apart
// from the ledger they check: per reader (session and agent) the
// identities of the lines it read since its session's last compaction, per
// project those any reader read.
type shownSets struct {
	readerSet  map[string]map[string]struct{}
	projectSet map[string]map[string]struct{}
	readersOf  map[string][]string // session -> its readers' keys
	epoch      map[string]int      // session -> its last compaction epoch seen
}

func newShownSets() shownSets {
	return shownSets{readerSet: map[string]map[string]struct{}{}, projectSet: map[string]map[string]struct{}{},
		readersOf: map[string][]string{}, epoch: map[string]int{}}
}

// setsFor returns the shown-sets of o's reader and project, first emptying
// every reader of o's session when o comes after a compaction.
func (s *shownSets) setsFor(o *bench.OutLine) (rset, pset map[string]struct{}) {
	if o.Epoch > s.epoch[o.Session] {
		s.epoch[o.Session] = o.Epoch
		for _, rk := range s.readersOf[o.Session] {
			delete(s.readerSet, rk)
		}
	}
	rk := o.Session + "\x00" + o.Agent
	rset = s.readerSet[rk]
	if rset == nil {
		rset = map[string]struct{}{}
		s.readerSet[rk] = rset
		s.readersOf[o.Session] = append(s.readersOf[o.Session], rk)
	}
	pset = s.projectSet[o.Project]
	if pset == nil {
		pset = map[string]struct{}{}
		s.projectSet[o.Project] = pset
	}
	return rset, pset
}

// record adds the identities of lines (but "" and skip) to rset and pset,
// unless o's output was over the host's cap: the model was not shown it.
func record(o *bench.OutLine, rset, pset map[string]struct{}, lines []string, skip string) {
	if o.Reason == "host-cap" {
		return
	}
	for _, l := range lines {
		if id := lineIdentity(l); id != "" && id != skip {
			rset[id] = struct{}{}
			pset[id] = struct{}{}
		}
	}
}

// claimProps names, in an oracle's report, the properties of a ledger
// marker's claim: a session claim ("already shown") holds lines this reader
// read; a project claim ("not shown here") holds lines read in the project
// but not by this reader.
type claimProps struct{ session, project, notReader string }

// checkClaim checks the claim of marker h (of scope and kind) about one line
// it replaced (bl, identity id) against the reader's and the project's
// shown-sets, counting each property in checked and reporting a violation
// through fail.
func checkClaim(o *bench.OutLine, rset, pset map[string]struct{}, scope markerScope, kind, h, bl, id string,
	props claimProps, checked map[string]int, fail func(o *bench.OutLine, prop, format string, args ...any)) {
	switch scope {
	case claimSession:
		checked[props.session]++
		if _, seen := rset[id]; !seen {
			fail(o, props.session, "%s marker %s: line never delivered to this reader since its last compaction: %s", kind, h, quoteShort(bl))
		}
	case claimProject:
		checked[props.project]++
		if _, seen := pset[id]; !seen {
			fail(o, props.project, "%s marker %s: line never delivered in project %s: %s", kind, h, o.Project, quoteShort(bl))
		}
		checked[props.notReader]++
		if _, seen := rset[id]; seen {
			fail(o, props.notReader, "%s marker %s says \"not shown here\" but this reader holds: %s", kind, h, quoteShort(bl))
		}
	}
}
