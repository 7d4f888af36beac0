package events

import (
	"encoding/json"
	"fmt"
)

// Version is the envelope version written by Encode.
const Version = 1

type envelope struct {
	V      int     `json:"v"`
	Events []Event `json:"events"`
}

// Encode renders a batch as one JSON envelope {"v":1,"events":[...]}.
// Seq and Index are not encoded (the log assigns them). Byte fields are
// base64; Keys are base64 of little-endian uint64s; times are RFC 3339 with
// nanoseconds.
func Encode(batch []Event) ([]byte, error) {
	b, err := json.Marshal(envelope{V: Version, Events: batch})
	if err != nil {
		return nil, fmt.Errorf("encode batch: %w", err)
	}
	return b, nil
}

// Decode parses an envelope written by Encode and sets Seq and Index on
// every event. It returns ErrVersion for an unknown envelope version and a
// wrapped JSON error for malformed input; it never panics.
func Decode(data []byte, seq Seq) ([]Event, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("decode batch %d: %w", seq, err)
	}
	if env.V != Version {
		return nil, fmt.Errorf("decode batch %d: version %d: %w", seq, env.V, ErrVersion)
	}
	for i := range env.Events {
		env.Events[i].Seq = seq
		env.Events[i].Index = i
	}
	return env.Events, nil
}
