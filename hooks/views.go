package hooks

import (
	"github.com/omnictx/omni/projections/session"
)

// SessionView calls fn with the session projection under the Engine's lock.
// fn must not keep the projection or call back into the Engine.
func (e *Engine) SessionView(fn func(*session.Sessions)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	fn(e.session)
}
