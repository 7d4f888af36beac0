package thin

import "golang.org/x/sys/unix"

const sockCloexec = unix.SOCK_CLOEXEC

func closeOnExec(int) {}

// PeerOf returns the process id and user id of the other end of the
// connected Unix socket fd, from the kernel (SO_PEERCRED: for a client,
// the process that called listen; for the daemon, the one that called
// connect). Errors: the system call's.
func PeerOf(fd int) (pid, uid int, err error) {
	c, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return 0, 0, err
	}
	return int(c.Pid), int(c.Uid), nil
}
