package audit

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
)

// witnessFile is a witness file open for appending. Several Logs, in
// this process or others, may append to one file: each append takes an
// exclusive flock, reads the file's last line to chain to it, writes its
// lines in one write and syncs them.
type witnessFile struct {
	path string
	f    *os.File
}

// openWitnessFile opens (creating it, mode 0600) the witness file at
// path. A file that is not empty must end with a witness line (or a line
// a crash left incomplete after one): else the error wraps ErrNotWitness,
// so that a mistyped path does not get lines appended to it.
func openWitnessFile(path string) (*witnessFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: witness file: %w", err)
	}
	w := &witnessFile{path: path, f: f}
	if err := w.locked(func() error { _, _, err := w.tail(); return err }); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// append writes ls at the file's end, chained to its last line, and syncs
// the file.
func (w *witnessFile) append(ls []witnessLine) error {
	return w.locked(func() error {
		prev, torn, err := w.tail()
		if err != nil {
			return err
		}
		var buf []byte
		if torn {
			// End the incomplete line, so that the next is whole; Verify
			// skips it because the line after it chains past it.
			buf = append(buf, '\n')
		}
		for _, l := range ls {
			data, h, err := l.encode(prev)
			if err != nil {
				return err
			}
			buf, prev = append(buf, data...), h
		}
		if _, err := w.f.Write(buf); err != nil {
			return fmt.Errorf("audit: witness file %s: %w", w.path, err)
		}
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("audit: witness file %s: %w", w.path, err)
		}
		return nil
	})
}

// locked runs fn holding the file's exclusive lock.
func (w *witnessFile) locked(fn func() error) error {
	fd := int(w.f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX); err != nil {
		return fmt.Errorf("audit: witness file %s: lock: %w", w.path, err)
	}
	defer func() { _ = syscall.Flock(fd, syscall.LOCK_UN) }()
	return fn()
}

// tail reads the file's end: the hash of its last whole line ("" if it
// has none) and whether an incomplete line (no newline: a write a crash
// cut short) follows it. Its lock must be held.
func (w *witnessFile) tail() (hash string, torn bool, err error) {
	fi, err := w.f.Stat()
	if err != nil {
		return "", false, fmt.Errorf("audit: witness file %s: %w", w.path, err)
	}
	size := fi.Size()
	if size == 0 {
		return "", false, nil
	}
	n := min(size, 2*(maxWitnessLine+1))
	buf := make([]byte, n)
	if _, err := w.f.ReadAt(buf, size-n); err != nil {
		return "", false, fmt.Errorf("audit: witness file %s: %w", w.path, err)
	}
	notWitness := func(why string) error {
		return fmt.Errorf("%w: %s: %s", ErrNotWitness, w.path, why)
	}
	end := bytes.LastIndexByte(buf, '\n')
	torn = end < len(buf)-1
	if torn && len(buf)-1-end > maxWitnessLine {
		return "", false, notWitness("its last line is too long to be a witness line")
	}
	if torn {
		// A line cut short just before its newline is whole: the next
		// chains to it.
		if l, err := decodeWitnessLine(buf[end+1:]); err == nil {
			return l.Hash, true, nil
		}
		if !tornLine(buf[end+1:]) {
			return "", false, notWitness("it ends with something other than a witness line")
		}
	}
	if end < 0 {
		if n < size {
			return "", false, notWitness("its last line is too long to be a witness line")
		}
		return "", true, nil // a first line, incomplete
	}
	start := bytes.LastIndexByte(buf[:end], '\n') + 1
	if start == 0 && n < size {
		return "", false, notWitness("its last line is too long to be a witness line")
	}
	l, err := decodeWitnessLine(buf[start:end])
	if err != nil {
		return "", false, notWitness(fmt.Sprintf("its last line is not a witness line (%v)", err))
	}
	return l.Hash, torn, nil
}

// close closes the file.
func (w *witnessFile) close() error {
	return w.f.Close()
}

// witnessStart is how every witness line begins.
const witnessStart = `{"time":"`

// tornLine says whether b, a file's last bytes after its last newline, can
// be the start of a witness line that a crash cut short.
func tornLine(b []byte) bool {
	n := min(len(b), len(witnessStart))
	return len(b) <= maxWitnessLine && string(b[:n]) == witnessStart[:n]
}
