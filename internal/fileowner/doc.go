// Package fileowner tells whether a file belongs to another account where
// ownership is not a uid in fs.FileInfo: on Windows, the file's owner SID
// against this process's token. It imports golang.org/x/sys and the
// standard library only, so the thin hook client's trust check
// (internal/daemon/wire/thin) and internal/platform share one copy.
package fileowner
