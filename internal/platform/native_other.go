//go:build unix && !linux

package platform

// native is the portable Unix implementation.
func native() OS { return Unix{} }
