package sandbox

import (
	"io/fs"
	"syscall"
)

// statIDs returns a file's ctime (ns) and inode, 0s where unknown.
func statIDs(st fs.FileInfo) (int64, uint64) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Ctim.Nano(), s.Ino
	}
	return 0, 0
}
