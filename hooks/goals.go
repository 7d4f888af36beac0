package hooks

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/omnictx/omni/events"
	"github.com/omnictx/omni/redact"
)

// Limits of the texts people pin, in bytes.
const (
	// MaxGoalBytes bounds a goal.
	MaxGoalBytes = 1000
	// MaxFactBytes bounds a remembered fact.
	MaxFactBytes = 1000
)

// Errors of SetGoal and Remember.
var (
	// ErrEmptyFact: a fact must hold some text.
	ErrEmptyFact = errors.New("a fact to remember must not be empty")
	// ErrTooLong: the goal or fact is over its limit.
	ErrTooLong = errors.New("text is too long")
)

// SetGoal pins goal as the goal of project (an empty goal clears it) by
// appending one GoalSet event, stamped with the Engine's clock and the
// reader r (r.Session may be ""). Surrounding whitespace is trimmed and
// every credential value is masked (redact.Text): a goal is shown to
// every later session's model (SessionStart) and stored in the log. It
// returns the batch's sequence. Errors: ErrTooLong, or the wrapped append
// error (then nothing was recorded).
func (e *Engine) SetGoal(ctx context.Context, project string, r events.Reader, goal string) (events.Seq, error) {
	goal, _ = redact.Text(strings.TrimSpace(goal))
	if len(goal) > MaxGoalBytes {
		return 0, fmt.Errorf("goal of %d bytes (limit %d): %w", len(goal), MaxGoalBytes, ErrTooLong)
	}
	return e.appendOne(ctx, project, r, events.KindGoalSet, func(ev *events.Event) {
		ev.GoalSet = &events.GoalSet{Text: goal}
	})
}

// Remember records fact for project by appending one Remembered event.
// Surrounding whitespace is trimmed and credential values are masked, as
// for SetGoal. Errors: ErrEmptyFact, ErrTooLong, or
// the wrapped append error.
func (e *Engine) Remember(ctx context.Context, project string, r events.Reader, fact string) (events.Seq, error) {
	fact, _ = redact.Text(strings.TrimSpace(fact))
	if fact == "" {
		return 0, ErrEmptyFact
	}
	if len(fact) > MaxFactBytes {
		return 0, fmt.Errorf("fact of %d bytes (limit %d): %w", len(fact), MaxFactBytes, ErrTooLong)
	}
	return e.appendOne(ctx, project, r, events.KindRemembered, func(ev *events.Event) {
		ev.Remembered = &events.Remembered{Fact: fact}
	})
}

// appendOne appends a batch of one event outside any invocation, under the
// Engine's lock, and folds it.
func (e *Engine) appendOne(ctx context.Context, project string, r events.Reader, k events.Kind, set func(*events.Event)) (events.Seq, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.opt.Now().UTC()
	ev := events.Event{ID: e.newID(now), Kind: k, Time: now, Project: project, Session: r.Session, Agent: r.Agent}
	set(&ev)
	batch := []events.Event{ev}
	if err := e.append(ctx, batch); err != nil {
		return 0, fmt.Errorf("append %s: %w", k, err)
	}
	return batch[0].Seq, nil
}
