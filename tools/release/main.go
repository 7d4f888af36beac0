// Command release builds omni's release archives: omni and omni-hook for
// linux, darwin and windows on amd64 and arm64, each pair in one archive
// (tar.gz, zip for Windows) with the README and the notice of the built-in
// bench sample, and a checksums file (SHA-256, the format sha256sum -c
// reads). The binaries are stamped with the version and the commit
// (-ldflags -X main.version, main.commit; omni version prints both) and
// built with -trimpath, -buildvcs=false and CGO_ENABLED=0; the archives
// hold their entries sorted, owned by 0:0 and dated at the commit's time,
// so two runs on one commit give byte-identical files.
//
//	go run ./tools/release [-snapshot] [-version vX.Y.Z] [-commit SHA] [-out dist] [-targets linux/amd64,...]
//
// Without -version the tag on HEAD (git describe --tags --exact-match) is
// the version; -snapshot names the build after the newest tag and the
// short commit instead ("v0.3.0-SNAPSHOT-1a2b3c4", or "0.0.0-SNAPSHOT-…"
// before the first tag), for CI, where no tag is on HEAD.
//
// Why not goreleaser: its current release (v2.18.2) requires Go 1.27.1,
// newer than the toolchain this module builds with, and it brings a large
// dependency tree to compile on every CI run; this file does the part
// omni needs with the standard library.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Targets are the platforms a release covers.
var Targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// binaries are the commands each archive holds.
var binaries = []string{"omni", "omni-hook"}

// docs are the files beside the binaries: repository path, name in the
// archive.
var docs = [][2]string{{"README.md", "README.md"}, {"internal/bench/sample/NOTICE.md", "NOTICE-bench-sample.md"}}

func main() {
	log.SetFlags(0)
	log.SetPrefix("release: ")
	snapshot := flag.Bool("snapshot", false, "name the build after the newest tag and the commit (no tag needed on HEAD)")
	version := flag.String("version", "", "the version to stamp (default: the tag on HEAD)")
	commit := flag.String("commit", "", "the commit to stamp (default: git rev-parse HEAD)")
	out := flag.String("out", "dist", "directory for the archives and checksums.txt (emptied first)")
	targets := flag.String("targets", strings.Join(Targets, ","), "GOOS/GOARCH pairs, comma-separated")
	flag.Parse()

	if *commit == "" {
		*commit = git("rev-parse", "HEAD")
	}
	if *commit == "" {
		*commit = "unknown"
	}
	if *version == "" {
		var err error
		if *version, err = versionOf(*snapshot, *commit); err != nil {
			log.Fatal(err)
		}
	}
	epoch := commitTime()
	if err := os.RemoveAll(*out); err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	start := time.Now()
	var sums []string
	for _, t := range strings.Split(*targets, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(t), "/")
		if !ok {
			log.Fatalf("-targets: %q is not GOOS/GOARCH", t)
		}
		name, err := buildArchive(*out, goos, goarch, *version, *commit, epoch)
		if err != nil {
			log.Fatal(err)
		}
		sum, err := fileSHA256(filepath.Join(*out, name))
		if err != nil {
			log.Fatal(err)
		}
		sums = append(sums, sum+"  "+name)
		fmt.Fprintf(os.Stderr, "%s\n", name)
	}
	sort.Strings(sums)
	if err := os.WriteFile(filepath.Join(*out, "checksums.txt"), []byte(strings.Join(sums, "\n")+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "omni %s (%s): %d archives and checksums.txt in %s in %.1fs\n", *version, short(*commit), len(sums), *out, time.Since(start).Seconds())
}

// versionOf is the tag on HEAD, or with snapshot the newest tag (or
// 0.0.0) with "-SNAPSHOT-" and the short commit.
func versionOf(snapshot bool, commit string) (string, error) {
	if !snapshot {
		if v := git("describe", "--tags", "--exact-match"); v != "" {
			return v, nil
		}
		return "", errors.New("no tag on HEAD: give -version, or -snapshot for a build named after the commit")
	}
	base := git("describe", "--tags", "--abbrev=0")
	if base == "" {
		base = "0.0.0"
	}
	return base + "-SNAPSHOT-" + short(commit), nil
}

func short(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}

// git runs git with args and returns its trimmed output, "" on error.
func git(args ...string) string {
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// sourceDateEpoch names the variable of the reproducible-builds convention
// that fixes the time stamped into archives (seconds since 1970).
const sourceDateEpoch = "SOURCE_DATE_EPOCH"

// commitTime is the time every archive entry carries: SOURCE_DATE_EPOCH
// when set, else HEAD's commit time, else the Unix epoch.
func commitTime() time.Time {
	s := os.Getenv(sourceDateEpoch)
	if s == "" {
		s = git("log", "-1", "--format=%ct")
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC()
	}
	return time.Unix(0, 0).UTC()
}

// entry is one file of an archive.
type entry struct {
	name string
	mode int64
	data []byte
}

// buildArchive builds the binaries of goos/goarch and writes their archive
// into dir; it returns the archive's name.
func buildArchive(dir, goos, goarch, version, commit string, epoch time.Time) (string, error) {
	tmp, err := os.MkdirTemp("", "omni-release-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	exe := ""
	if goos == "windows" {
		exe = ".exe"
	}
	var files []entry
	for _, b := range binaries {
		bin := filepath.Join(tmp, b+exe)
		c := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
			"-ldflags", "-s -w -X main.version="+version+" -X main.commit="+commit,
			"-o", bin, "./cmd/"+b)
		c.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		if err := c.Run(); err != nil {
			return "", fmt.Errorf("build %s for %s/%s: %w", b, goos, goarch, err)
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return "", err
		}
		files = append(files, entry{name: b + exe, mode: 0o755, data: data})
	}
	for _, d := range docs {
		data, err := os.ReadFile(d[0])
		if err != nil {
			return "", err
		}
		files = append(files, entry{name: d[1], mode: 0o644, data: data})
	}
	base := fmt.Sprintf("omni_%s_%s_%s", strings.TrimPrefix(version, "v"), goos, goarch)
	var buf bytes.Buffer
	name := base + ".tar.gz"
	if goos == "windows" {
		name = base + ".zip"
		err = writeZip(&buf, base, files, epoch)
	} else {
		err = writeTarGz(&buf, base, files, epoch)
	}
	if err != nil {
		return "", err
	}
	return name, os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644)
}

// writeTarGz writes files under the directory prefix as a gzip'd tar:
// sorted, owned by 0:0 with no user names, dated epoch, and a gzip header
// with no name and no time.
func writeTarGz(w io.Writer, prefix string, files []entry, epoch time.Time) error {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: prefix + "/" + f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: epoch,
			Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeZip writes files under the directory prefix as a zip: sorted,
// deflated, dated epoch.
func writeZip(w io.Writer, prefix string, files []entry, epoch time.Time) error {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	zw := zip.NewWriter(w)
	for _, f := range files {
		h := &zip.FileHeader{Name: prefix + "/" + f.name, Method: zip.Deflate, Modified: epoch}
		h.SetMode(os.FileMode(f.mode))
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.data); err != nil {
			return err
		}
	}
	return zw.Close()
}

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
