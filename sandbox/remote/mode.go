package remote

import (
	"io/fs"
	"strconv"
	"strings"
)

// unixMode turns a raw st_mode (stat's %f, in hex) into an fs.FileMode.
func unixMode(raw uint32) fs.FileMode {
	m := fs.FileMode(raw & 0o777)
	switch raw & 0o170000 {
	case 0o040000:
		m |= fs.ModeDir
	case 0o120000:
		m |= fs.ModeSymlink
	case 0o010000:
		m |= fs.ModeNamedPipe
	case 0o140000:
		m |= fs.ModeSocket
	case 0o020000:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case 0o060000:
		m |= fs.ModeDevice
	}
	if raw&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if raw&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if raw&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// findMode turns find's %y (type letter) and %m (octal permissions) into
// an fs.FileMode.
func findMode(typ, perm string) (fs.FileMode, bool) {
	p, err := strconv.ParseUint(perm, 8, 32)
	if err != nil || len(typ) != 1 {
		return 0, false
	}
	types := map[byte]uint32{'f': 0o100000, 'd': 0o040000, 'l': 0o120000, 'p': 0o010000, 's': 0o140000, 'c': 0o020000, 'b': 0o060000}
	t, ok := types[typ[0]]
	if !ok {
		return 0, false
	}
	return unixMode(t | uint32(p)&0o7777), true
}

// splitNUL splits NUL-terminated records.
func splitNUL(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
