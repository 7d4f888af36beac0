package daemon_test

import (
	"context"
	"errors"
	"testing"

	"github.com/omnictx/omni/hooks"
	"github.com/omnictx/omni/internal/daemon"
	"github.com/omnictx/omni/internal/testfixture"
)

// TestRecentAndRetrieveScoped: with a directory, "recent" lists only that
// project's calls (and with a session only that session's), and
// "retrieve" knows only the handles archived in that project or named by
// a marker printed there (beta printed none of alpha's bytes).
func TestRecentAndRetrieveScoped(t *testing.T) {
	ctx := context.Background()
	svc := testfixture.Service(t)
	const alpha, beta = "/home/dev/alpha", "/home/dev/beta"
	all, err := svc.Recent(ctx, daemon.RecentRequest{N: 1000})
	if err != nil {
		t.Fatal(err)
	}
	projects := map[string]bool{}
	for _, r := range all {
		projects[r.Project] = true
	}
	if !projects[alpha] || !projects[beta] {
		t.Fatalf("fixture: recent spans %v", projects)
	}
	betaOnly, err := svc.Recent(ctx, daemon.RecentRequest{N: 1000, Dir: beta})
	if err != nil {
		t.Fatal(err)
	}
	if len(betaOnly) == 0 {
		t.Fatal("no calls for beta")
	}
	for _, r := range betaOnly {
		if r.Project != beta {
			t.Errorf("recent for %s lists %s's call %q", beta, r.Project, r.Source)
		}
	}
	s2, _ := svc.Recent(ctx, daemon.RecentRequest{N: 1000, Dir: alpha, Session: "s2"})
	for _, r := range s2 {
		if r.Reader != "s2" {
			t.Errorf("recent for session s2 lists %s", r.Reader)
		}
	}
	if len(s2) == 0 {
		t.Error("no calls for session s2")
	}
	var handle string
	for _, r := range all {
		if r.Project == alpha && len(r.Folds) > 0 && r.Folds[0].Handle != "" {
			handle = r.Folds[0].Handle
		}
	}
	if handle == "" {
		t.Fatal("fixture: no fold in alpha")
	}
	if _, err := svc.Retrieve(ctx, daemon.RetrieveRequest{Handle: handle, Dir: alpha}); err != nil {
		t.Errorf("retrieve in its own project: %v", err)
	}
	if b, err := svc.Retrieve(ctx, daemon.RetrieveRequest{Handle: handle, Dir: beta}); !errors.Is(err, hooks.ErrUnknownHandle) {
		t.Errorf("retrieve from another project: %d bytes, %v", len(b), err)
	}
	if _, err := svc.Retrieve(ctx, daemon.RetrieveRequest{Handle: handle}); err != nil {
		t.Errorf("retrieve unscoped: %v", err)
	}
}
