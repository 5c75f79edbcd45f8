package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/openrath/rath/session"
)

// WitnessReport is what VerifyWitness read of a witness file.
type WitnessReport struct {
	// Lines counts the file's lines; Lanes the lanes they name.
	Lines int `json:"lines"`
	Lanes int `json:"lanes"`
	// Unwitnessed counts the store's lanes the file names no line of
	// (written by a process without a witness file, say): the witness
	// says nothing of them.
	Unwitnessed int `json:"unwitnessed"`
	// Torn are the lines a write left incomplete (a crash while writing
	// them), skipped: the line after each chains past it.
	Torn []int `json:"torn,omitempty"`
}

// witnessMark is a witness line's mark of a lane, and its line number.
type witnessMark struct {
	witnessLine
	line int
}

// witnessRead is a witness file as read: the marks of its lines whose
// hash and chain hold, by lane, and the problems of the file itself.
type witnessRead struct {
	marks    map[session.ID][]witnessMark
	problems []Problem
	report   WitnessReport
}

// readWitness reads a witness file. Each line's hash must match its
// content and its prev the hash of the line before: a line edited,
// removed, inserted or moved is a problem naming the line. A line that
// does not decode is one too, unless a crash explains it: the file's last
// line without its newline, or a line the next one chains past (a writer
// ends a torn line before appending). Errors are reading errors.
func readWitness(r io.Reader) (*witnessRead, error) {
	wr := &witnessRead{marks: map[session.ID][]witnessMark{}}
	br := bufio.NewReaderSize(r, 64<<10)
	prev := "" // the hash of the last line that decoded
	var bad *Problem
	for n := 1; ; n++ {
		b, whole, err := readLine(br)
		if err != nil {
			return nil, err
		}
		if !whole && len(b) == 0 {
			break
		}
		wr.report.Lines = n
		l, derr := decodeWitnessLine(b)
		if derr != nil {
			switch {
			case !whole && tornLine(b):
				wr.report.Torn = append(wr.report.Torn, n)
			case bad != nil:
				wr.problems = append(wr.problems, *bad)
				fallthrough
			default:
				bad = &Problem{Line: n, What: fmt.Sprintf("it is not a witness line: %v", derr)}
			}
			if !whole {
				break
			}
			continue
		}
		if bad != nil {
			if l.Prev == prev {
				wr.report.Torn = append(wr.report.Torn, bad.Line)
			} else {
				wr.problems = append(wr.problems, *bad)
			}
			bad = nil
		}
		if l.Prev != prev {
			wr.problems = append(wr.problems, Problem{Line: n, What: chainBreak(n, l.Prev)})
		}
		prev = l.Hash
		if sum, err := l.sum(); err != nil || sum != l.Hash {
			wr.problems = append(wr.problems, Problem{Line: n, What: "edited: its hash does not match its content"})
			continue
		}
		wr.marks[l.Lane] = append(wr.marks[l.Lane], witnessMark{witnessLine: l, line: n})
		if !whole {
			break
		}
	}
	if bad != nil {
		wr.problems = append(wr.problems, *bad)
	}
	wr.report.Lanes = len(wr.marks)
	return wr, nil
}

// chainBreak says what a line whose prev is not the line before's means.
func chainBreak(n int, prev string) string {
	switch {
	case n == 1:
		return "the chain breaks: it follows a line, and it is the file's first (lines were cut off the file's start)"
	case prev == "":
		return "the chain breaks: it begins a file, and lines are before it (a line was inserted, or the file's start replaced)"
	}
	return fmt.Sprintf("the chain breaks: it does not follow line %d (a line before it was removed, inserted, moved or edited)", n-1)
}

// readLine reads one line of a witness file: its bytes without the
// newline, and whether the newline ended it (else it is the file's last,
// possibly empty). A line longer than a witness line is cut to
// maxWitnessLine+1 bytes, which no witness line decodes.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	var line []byte
	for {
		b, err := br.ReadSlice('\n')
		whole := err == nil
		if whole {
			b = b[:len(b)-1]
		}
		if room := maxWitnessLine + 1 - len(line); room > 0 {
			line = append(line, b[:min(len(b), room)]...)
		}
		switch {
		case whole:
			return line, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return line, false, nil
		default:
			return nil, false, fmt.Errorf("audit: witness: %w", err)
		}
	}
}
