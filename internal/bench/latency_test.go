package bench

import (
	"testing"
	"time"
)

// TestStagesOf: a hook's stage line is read from its stderr beside other
// lines, and the row's stages derive from it: start is the wall time
// outside the process's run, request the send and the daemon's read, reply
// the wait outside the daemon's read and handler plus the write.
func TestStagesOf(t *testing.T) {
	stderr := "omni: peak RSS 9000 KiB\nomni: stages main_us=2000 read_us=30 connect_us=200 send_us=40 wait_us=1500 daemon_read_us=60 handle_us=1300 redact_us=100 decide_us=900 append_us=250 reply_us=5\n"
	st := parseStages(stderr, 3500*time.Microsecond)
	if st == nil || st["main_us"] != 2000 || st["reply_us"] != 5 {
		t.Fatalf("parseStages: %v", st)
	}
	if parseStages("omni: peak RSS 1 KiB\n", time.Millisecond) != nil {
		t.Fatal("a stderr without a stage line gave stages")
	}
	g := stagesOf([]stageSample{st})
	want := LatencyStages{Start: 1.5, Read: 0.03, Connect: 0.2, Request: 0.1, Redact: 0.1, Decide: 0.9, Append: 0.25, Reply: 0.145}
	if g == nil || *g != want {
		t.Fatalf("stagesOf: %+v, want %+v", g, want)
	}
	if stagesOf(nil) != nil {
		t.Fatal("stages without samples")
	}
}
