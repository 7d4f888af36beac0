//go:build !unix

package platform

// NoFollow and NonBlock are 0 where the system has no such open flags
// (Windows opens a link's target; the home there is the user's own).
const (
	NoFollow = 0
	NonBlock = 0
)
