package wire

import (
	"github.com/omnictx/omni/internal/daemon/wire/thin"
)

// The names of package thin (the part of the protocol the thin hook
// client links), under their historical names in this package.
const (
	// Protocol is thin.Protocol.
	Protocol = thin.Protocol
	// AddrFile is thin.AddrFile.
	AddrFile = thin.AddrFile
	// MethodHook is thin.MethodHook.
	MethodHook = thin.MethodHook
	// HookPassthrough is thin.HookPassthrough.
	HookPassthrough = thin.HookPassthrough
	// BackoffFile is thin.BackoffFile.
	BackoffFile = thin.BackoffFile
	// BackoffFor is thin.BackoffFor.
	BackoffFor = thin.BackoffFor
	// ReplaceEnv is thin.ReplaceEnv.
	ReplaceEnv = thin.ReplaceEnv
	// ClusterFile is thin.ClusterFile.
	ClusterFile = thin.ClusterFile
	// DefaultStream is thin.DefaultStream.
	DefaultStream = thin.DefaultStream
	// EnvNATSURL and the other cluster variables are thin's.
	EnvNATSURL      = thin.EnvNATSURL
	EnvNATSCreds    = thin.EnvNATSCreds
	EnvNATSCA       = thin.EnvNATSCA
	EnvNATSCert     = thin.EnvNATSCert
	EnvNATSKey      = thin.EnvNATSKey
	EnvNATSStream   = thin.EnvNATSStream
	EnvNATSReplicas = thin.EnvNATSReplicas
)

// Types of package thin.
type (
	// Addr is thin.Addr.
	Addr = thin.Addr
	// Backoff is thin.Backoff.
	Backoff = thin.Backoff
	// BuildInfo is thin.BuildInfo.
	BuildInfo = thin.BuildInfo
	// ClusterConfig is thin.ClusterConfig.
	ClusterConfig = thin.ClusterConfig
)

// Errors of package thin (the same values: errors.Is matches either name).
var (
	// ErrUntrusted is thin.ErrUntrusted.
	ErrUntrusted = thin.ErrUntrusted
	// ErrUnsafeHome is thin.ErrUnsafeHome.
	ErrUnsafeHome = thin.ErrUnsafeHome
	// ErrNoDaemon is thin.ErrNoDaemon.
	ErrNoDaemon = thin.ErrNoDaemon
	// ErrRemote is thin.ErrRemote.
	ErrRemote = thin.ErrRemote
	// ErrBackoff is thin.ErrBackoff.
	ErrBackoff = thin.ErrBackoff
	// ErrUnhealthy is thin.ErrUnhealthy.
	ErrUnhealthy = thin.ErrUnhealthy
	// ErrTokenRefused is thin.ErrTokenRefused.
	ErrTokenRefused = thin.ErrTokenRefused
)

// Home is thin.Home.
func Home() string { return thin.Home() }

// Subject is thin.Subject.
func Subject(method string) string { return thin.Subject(method) }

// CheckName is thin.CheckName.
func CheckName(name string) error { return thin.CheckName(name) }

// ReadAddr is thin.ReadAddr.
func ReadAddr(home string) (Addr, error) { return thin.ReadAddr(home) }

// RetireAddr is thin.RetireAddr.
func RetireAddr(home, token string) bool { return thin.RetireAddr(home, token) }

// CheckPrivate is thin.CheckPrivate.
func CheckPrivate(path string) error { return thin.CheckPrivate(path) }

// ReadBackoff is thin.ReadBackoff.
func ReadBackoff(home string) (Backoff, bool) { return thin.ReadBackoff(home) }

// StartBackoff is thin.StartBackoff.
func StartBackoff(home string, pid int, err error) bool { return thin.StartBackoff(home, pid, err) }

// Stopped is thin.Stopped.
func Stopped(pid int) bool { return thin.Stopped(pid) }

// EndBackoff is thin.EndBackoff.
func EndBackoff(home string) { thin.EndBackoff(home) }

// ReadBuild is thin.ReadBuild.
func ReadBuild() BuildInfo { return thin.ReadBuild() }

// BuildID is thin.BuildID.
func BuildID() string { return thin.BuildID() }

// FileStamp is thin.FileStamp.
func FileStamp(path string) string { return thin.FileStamp(path) }

// RedactURLs is thin.RedactURLs.
func RedactURLs(s string) string { return thin.RedactURLs(s) }

// ReadCluster is thin.ReadCluster.
func ReadCluster(home string, lookup func(string) (string, bool)) (ClusterConfig, error) {
	return thin.ReadCluster(home, lookup)
}

// WriteCluster is thin.WriteCluster.
func WriteCluster(home string, c ClusterConfig) error { return thin.WriteCluster(home, c) }

// CursorArg is thin.CursorArg.
const CursorArg = thin.CursorArg

// CursorDuplicate is thin.CursorDuplicate.
func CursorDuplicate(fromCursorEntry bool, payload []byte) bool {
	return thin.CursorDuplicate(fromCursorEntry, payload)
}
