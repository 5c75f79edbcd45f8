package osfake

import (
	"os"
	"syscall"
	"time"
)

// changeTime is what execd reports as a file's creation time on Linux:
// its inode change time.
func changeTime(st os.FileInfo) time.Time {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return time.Unix(sys.Ctim.Sec, sys.Ctim.Nsec)
	}
	return st.ModTime()
}
