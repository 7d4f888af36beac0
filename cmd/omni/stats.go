package main

import (
	"github.com/omnictx/omni/projections/stats"
)

// statsJSON is the machine form of the stats projection (bytes, not tokens).
type statsJSONT struct {
	Calls          int                         `json:"calls"`
	RawBytes       int64                       `json:"raw_bytes"`
	DeliveredBytes int64                       `json:"delivered_bytes"`
	BytesSaved     int64                       `json:"bytes_saved"`
	RepeatBytes    int64                       `json:"repeat_bytes"`
	ByTool         map[string]stats.Totals     `json:"by_tool"`
	ByFold         map[string]stats.FoldTotals `json:"by_fold"`
}

func statsJSON(s *stats.Stats) statsJSONT {
	out := statsJSONT{Calls: s.All.Calls, RawBytes: s.All.RawBytes, DeliveredBytes: s.All.DeliveredBytes,
		BytesSaved: s.All.SavedBytes(), RepeatBytes: s.All.RepeatBytes,
		ByTool: map[string]stats.Totals{}, ByFold: map[string]stats.FoldTotals{}}
	for k, v := range s.ByTool {
		out.ByTool[k] = *v
	}
	for k, v := range s.ByFold {
		out.ByFold[k] = *v
	}
	return out
}
