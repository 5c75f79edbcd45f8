//go:build unix

package secret

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// checkOwner refuses a file writable by others, and a file the current
// user (not root) owns that group or others may read or write.
func checkOwner(p string, st fs.FileInfo) error {
	owner := -1
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		owner = int(sys.Uid)
	}
	return ownerRule(p, st.Mode().Perm(), owner, os.Getuid())
}

// ownerRule is checkOwner's rule for a file of mode perm owned by owner
// (-1: unknown), read by uid.
func ownerRule(p string, perm fs.FileMode, owner, uid int) error {
	if perm&0o002 != 0 {
		return fmt.Errorf("%w: %s is writable by other users (mode %#o): anyone could replace the secret; run: chmod 600 %s", ErrUnsafe, p, perm, p)
	}
	if uid != 0 && owner == uid && perm&0o077 != 0 {
		return fmt.Errorf("%w: %s is open to other users (mode %#o); run: chmod 600 %s", ErrUnsafe, p, perm, p)
	}
	return nil
}
