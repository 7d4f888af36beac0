//go:build windows

package fileowner

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/windows"
)

// OtherAccount reads the owner SID of the file at path
// (GetNamedSecurityInfo) and reports whether it is another account's than
// this process's (ownSID). False when the owner cannot be read (a FAT or
// network volume without one, an error): the caller's other checks still
// apply.
func OtherAccount(path string) bool {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return false
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil || !owner.IsValid() {
		return false
	}
	return !ownSID(owner)
}

// ownSID reports whether a file owned by sid is this process's: sid is
// the token's user, or the token's default owner, or the Administrators
// group while the token holds it (enabled, or deny-only when not
// elevated): an elevated administrator's files are owned by that group,
// and the same person, not elevated, still owns them; no other account
// can give a file that owner. True when the token cannot be read.
func ownSID(sid *windows.SID) bool {
	tok := windows.GetCurrentProcessToken()
	u, err := tok.GetTokenUser()
	if err != nil {
		return true
	}
	if sid.Equals(u.User.Sid) {
		return true
	}
	if def := tokenOwner(tok); def != nil && sid.Equals(def) {
		return true
	}
	if sid.IsWellKnown(windows.WinBuiltinAdministratorsSid) {
		if gs, err := tok.GetTokenGroups(); err == nil {
			for _, g := range gs.AllGroups() {
				if g.Sid != nil && g.Sid.Equals(sid) {
					return true
				}
			}
		}
	}
	return false
}

// tokenOwnerInfo is TOKEN_OWNER.
type tokenOwnerInfo struct{ Owner *windows.SID }

// tokenOwner returns the default owner SID of the objects tok creates
// (TokenOwner), or nil.
func tokenOwner(tok windows.Token) *windows.SID {
	n := uint32(64)
	for range 4 {
		b := make([]byte, n)
		err := windows.GetTokenInformation(tok, windows.TokenOwner, &b[0], uint32(len(b)), &n)
		if err == nil {
			sid := (*tokenOwnerInfo)(unsafe.Pointer(&b[0])).Owner
			if sid == nil || !sid.IsValid() {
				return nil
			}
			c, err := sid.Copy()
			if err != nil {
				return nil
			}
			return c
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) {
			return nil
		}
	}
	return nil
}
