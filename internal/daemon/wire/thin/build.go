package thin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
)

// BuildInfo is what a binary knows of its own build.
type BuildInfo struct {
	// Module is the main module's path and Version its version as the Go
	// toolchain recorded it ("(devel)" for a build inside the module's
	// checkout).
	Module  string `json:"module"`
	Version string `json:"module_version"`
	// Revision is the VCS revision the binary was built from, Modified
	// whether the work tree had changes, Time the revision's time; all
	// empty when built with -buildvcs=false or outside a repository.
	Revision string `json:"vcs_revision,omitempty"`
	Modified bool   `json:"vcs_modified,omitempty"`
	Time     string `json:"vcs_time,omitempty"`
	// GoVersion is the toolchain that built the binary.
	GoVersion string `json:"go_version"`
	// Executable is this binary's path.
	Executable string `json:"executable,omitempty"`
}

// ReadBuild returns this binary's build information
// (runtime/debug.ReadBuildInfo; empty fields where it records nothing).
func ReadBuild() BuildInfo {
	var b BuildInfo
	if exe, err := os.Executable(); err == nil {
		b.Executable = exe
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module, b.Version, b.GoVersion = bi.Main.Path, bi.Main.Version, bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			b.Time = s.Value
		}
	}
	return b
}

// Clean reports whether the build names its code exactly: a VCS revision
// of an unmodified work tree.
func (b BuildInfo) Clean() bool { return b.Revision != "" && !b.Modified }

var (
	buildOnce sync.Once
	buildID   string
)

// BuildID returns this binary's build identity: "rev:" and the VCS
// revision for a build of an unmodified work tree; otherwise (built with
// -buildvcs=false, as CI does, or from a modified tree, where one revision
// names many builds) "exe:" and the first 16 hex digits of the SHA-256 of
// the executable, computed once per process (tens of milliseconds for a
// binary of tens of MiB). Two binaries with equal IDs run the same code.
func BuildID() string {
	buildOnce.Do(func() {
		b := ReadBuild()
		if b.Clean() {
			buildID = "rev:" + b.Revision
			return
		}
		buildID = "exe:unknown"
		if b.Executable == "" {
			return
		}
		f, err := os.Open(b.Executable)
		if err != nil {
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err == nil {
			buildID = "exe:" + hex.EncodeToString(h.Sum(nil))[:16]
		}
	})
	return buildID
}

// FileStamp identifies the file at path as it is now: "dev:inode:size:
// mtime-ns", or "" when it cannot be read. A rebuilt or reinstalled
// binary at the same path has another stamp.
func FileStamp(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	dev, ino := fileID(fi)
	return fmt.Sprintf("%d:%d:%d:%d", dev, ino, fi.Size(), fi.ModTime().UnixNano())
}

// Stale says why the daemon of ad runs another build than the binaries
// now installed, or "" when nothing shows it: the file it was started
// from was replaced since (its stamp changed), or both it and this
// binary are clean VCS builds of different revisions. It costs one stat.
func (ad Addr) Stale() string {
	if ad.Exe != "" && ad.ExeStamp != "" {
		if cur := FileStamp(ad.Exe); cur != ad.ExeStamp {
			return fmt.Sprintf("its binary %s was replaced since it started", ad.Exe)
		}
	}
	// A daemon whose build is not a revision is never stale by revision:
	// this binary's own build information (parsed) is read only for one
	// that is.
	if !strings.HasPrefix(ad.Build, "rev:") {
		return ""
	}
	if own := cleanBuildID(); own != "" && ad.Build != own {
		return fmt.Sprintf("it runs build %s, this binary is %s", ad.Build, own)
	}
	return ""
}

// cleanBuildID is BuildID when it is a VCS revision (no hashing), else "".
func cleanBuildID() string {
	if b := ReadBuild(); b.Clean() {
		return "rev:" + b.Revision
	}
	return ""
}
