package openrath

import (
	"bufio"
	"errors"
	"io"
)

// maxLine caps one line of an OpenRath file. Lines carry whole tool results
// and can be many megabytes; anything past this is not a session file, and
// refusing it keeps hostile input from exhausting memory.
const maxLine = 64 << 20

// errLineTooLong is returned by readLine; the decoder turns it into an
// ErrCorrupt naming the line.
var errLineTooLong = errors.New("line too long")

// readLine reads one line into buf, without its "\n". terminated is false
// for a final line that has no newline (and for the empty read at end of
// input). A line longer than limit is refused as soon as that is known, so a
// file without newlines cannot make us buffer all of it.
func readLine(br *bufio.Reader, buf []byte, limit int) (line []byte, terminated bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		buf = append(buf, frag...)
		switch {
		case err == nil:
			if len(buf)-1 > limit {
				return nil, true, errLineTooLong
			}
			return buf[:len(buf)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(buf) > limit {
				return nil, false, errLineTooLong
			}
		case errors.Is(err, io.EOF):
			if len(buf) > limit {
				return nil, false, errLineTooLong
			}
			return buf, false, nil
		default:
			return nil, false, err
		}
	}
}
