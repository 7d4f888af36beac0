package thin

import "golang.org/x/sys/unix"

const sockCloexec = 0

// closeOnExec marks fd close-on-exec (macOS has no SOCK_CLOEXEC).
func closeOnExec(fd int) { unix.CloseOnExec(fd) }

// PeerOf returns the process id and user id of the other end of the
// connected Unix socket fd, from the kernel (LOCAL_PEERPID and
// LOCAL_PEERCRED, the credentials getpeereid reads: for a client, the
// process that called listen; for the daemon, the one that called
// connect). Errors: the system calls'.
func PeerOf(fd int) (pid, uid int, err error) {
	c, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	pid, err = unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID)
	if err != nil {
		return 0, 0, err
	}
	return pid, int(c.Uid), nil
}
