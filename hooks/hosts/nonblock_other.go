//go:build !unix

package hosts

// nonBlock is 0 where opens have no non-blocking flag.
const nonBlock = 0
