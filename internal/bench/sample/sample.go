// Package sample is the small set of real agent sessions omni bench
// replays when no --corpus is given: 7 sessions, 148 tool calls and
// 137,474 bytes of tool output, copied line for line from the MIT-licensed
// sources of the shared corpus (mini-swe-agent runs of Gemini 3 Pro on
// SWE-bench Verified, and SWE-agent demonstration trajectories). NOTICE.md
// names the sources, their commits and their licences; it ships with the
// sample.
package sample

import (
	_ "embed"
)

// Name stands for the embedded sample where a corpus file name is expected
// (bench.Options.Corpus, Report.Files).
const Name = "(embedded sample)"

// JSONL is the sample: one corpus record per line, the format of the shared
// corpus (session, agent, seq, tool, input, output, exit_code, source, …),
// 222,700 bytes.
//
//go:embed sessions.jsonl
var JSONL []byte

// Notice is NOTICE.md: the sources of the sample and their licences.
//
//go:embed NOTICE.md
var Notice string
