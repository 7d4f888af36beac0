package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"testing"
	"time"
)

// TestArchivesReproducible: the same files give byte-identical archives
// whatever order they come in and whenever they are written; entries are
// sorted, dated at the epoch given, owned by 0:0, with their modes.
func TestArchivesReproducible(t *testing.T) {
	epoch := time.Unix(1764633600, 0).UTC()
	files := func() []entry {
		return []entry{{"omni-hook", 0o755, []byte("hook")}, {"README.md", 0o644, []byte("# omni\n")}, {"omni", 0o755, []byte("omni binary")}}
	}
	rev := func() []entry { f := files(); f[0], f[2] = f[2], f[0]; return f }
	for _, w := range []struct {
		name  string
		write func(io.Writer, string, []entry, time.Time) error
	}{{"tar.gz", writeTarGz}, {"zip", writeZip}} {
		var a, b bytes.Buffer
		if err := w.write(&a, "omni_1.0.0_x_y", files(), epoch); err != nil {
			t.Fatal(err)
		}
		if err := w.write(&b, "omni_1.0.0_x_y", rev(), epoch); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two writes of the same files differ", w.name)
		}
	}
	var buf bytes.Buffer
	if err := writeTarGz(&buf, "p", files(), epoch); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !zr.ModTime.IsZero() || zr.Name != "" {
		t.Errorf("gzip header carries name %q, time %v", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" {
			t.Errorf("%s: time %v, owner %d:%d %q", h.Name, h.ModTime, h.Uid, h.Gid, h.Uname)
		}
		if (h.Name == "p/omni") != (h.Mode == 0o755) && h.Name != "p/omni-hook" {
			t.Errorf("%s: mode %o", h.Name, h.Mode)
		}
	}
	if want := "p/README.md p/omni p/omni-hook"; joined(names) != want {
		t.Errorf("entries %q, want %q", joined(names), want)
	}
	buf.Reset()
	if err := writeZip(&buf, "p", files(), epoch); err != nil {
		t.Fatal(err)
	}
	zr2, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr2.File {
		if !f.Modified.Equal(epoch) {
			t.Errorf("%s: time %v", f.Name, f.Modified)
		}
	}
}

func joined(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x)
	}
	return b.String()
}
