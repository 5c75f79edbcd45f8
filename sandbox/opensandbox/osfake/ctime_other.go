//go:build !linux

package osfake

import (
	"os"
	"time"
)

// changeTime is a file's creation time as the fake reports it where it
// cannot read the inode change time: its modification time.
func changeTime(st os.FileInfo) time.Time { return st.ModTime() }
