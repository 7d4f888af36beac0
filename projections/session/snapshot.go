package session

import (
	"bytes"
	"cmp"
	"encoding/gob"
	"fmt"
	"slices"
	"time"
)

// Snapshot is the exported mirror of a Sessions projection's whole state,
// in a deterministic order, for checkpoints.
type Snapshot struct {
	States   []State           // sorted by ID
	Projects []ProjectSnapshot // sorted by Name
}

// ProjectSnapshot mirrors a Project, its unexported maps included.
type ProjectSnapshot struct {
	Name   string
	Goal   Goal
	Goals  []Goal
	Facts  []Fact
	Last   time.Time
	Files  []FileEntry   // sorted by Key
	Active []ActiveEntry // sorted by Key
}

// FileEntry is one entry of a project's files map.
type FileEntry struct {
	Key  string
	File File
}

// ActiveEntry is one entry of a project's active failures map.
type ActiveEntry struct {
	Key     string
	Failure Failure
}

// Snapshot copies the projection's state into its exported mirror.
func (s *Sessions) Snapshot() Snapshot {
	var out Snapshot
	for id, st := range s.byID {
		c := *st
		c.ID = id
		c.Readers = slices.Clone(st.Readers)
		c.Segments = slices.Clone(st.Segments)
		out.States = append(out.States, c)
	}
	slices.SortFunc(out.States, func(a, b State) int { return cmp.Compare(a.ID, b.ID) })
	for name, p := range s.byProject {
		x := ProjectSnapshot{Name: name, Goal: p.Goal, Goals: slices.Clone(p.Goals), Facts: slices.Clone(p.Facts), Last: p.Last}
		for k, f := range p.files {
			x.Files = append(x.Files, FileEntry{Key: k, File: *f})
		}
		slices.SortFunc(x.Files, func(a, b FileEntry) int { return cmp.Compare(a.Key, b.Key) })
		for k, f := range p.active {
			x.Active = append(x.Active, ActiveEntry{Key: k, Failure: f})
		}
		slices.SortFunc(x.Active, func(a, b ActiveEntry) int { return cmp.Compare(a.Key, b.Key) })
		out.Projects = append(out.Projects, x)
	}
	slices.SortFunc(out.Projects, func(a, b ProjectSnapshot) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// FromSnapshot returns the projection whose state x mirrors.
func FromSnapshot(x Snapshot) *Sessions {
	s := New()
	for _, st := range x.States {
		c := st
		c.Readers = slices.Clone(st.Readers)
		c.Segments = slices.Clone(st.Segments)
		s.byID[st.ID] = &c
	}
	for _, px := range x.Projects {
		p := &Project{Name: px.Name, Goal: px.Goal, Goals: slices.Clone(px.Goals), Facts: slices.Clone(px.Facts), Last: px.Last,
			files: make(map[string]*File, len(px.Files)), active: make(map[string]Failure, len(px.Active))}
		for _, f := range px.Files {
			ff := f.File
			p.files[f.Key] = &ff
		}
		for _, a := range px.Active {
			p.active[a.Key] = a.Failure
		}
		s.byProject[px.Name] = p
	}
	return s
}

// MarshalBinary encodes the projection's whole state (gob of Snapshot).
func (s *Sessions) MarshalBinary() ([]byte, error) { return s.Snapshot().Encode() }

// Encode is what MarshalBinary returns for the state x mirrors: a caller
// can take the Snapshot under its lock and encode it outside.
func (x Snapshot) Encode() ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(x); err != nil {
		return nil, fmt.Errorf("session snapshot: %w", err)
	}
	return b.Bytes(), nil
}

// UnmarshalBinary replaces the projection's state with what MarshalBinary
// encoded. On error the projection is unchanged.
func (s *Sessions) UnmarshalBinary(data []byte) error {
	var x Snapshot
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&x); err != nil {
		return fmt.Errorf("session snapshot: %w", err)
	}
	*s = *FromSnapshot(x)
	return nil
}
