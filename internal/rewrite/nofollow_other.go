//go:build !unix

package rewrite

// noFollow is 0 where the platform has no O_NOFOLLOW: the ticket directory
// is private to the user there.
const noFollow = 0

// nonBlock is 0 where opens have no non-blocking flag.
const nonBlock = 0
