package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/openrath/rath/session"
)

// fileFormat is the kind of session file Import detected.
type fileFormat int

const (
	formatOurs     fileFormat = iota + 1 // session.Encode's JSONL
	formatOpenRath                       // OpenRath-Python's session JSONL
)

// maxLine bounds the first line Import buffers to detect the format; both
// decoders refuse longer lines anyway.
const maxLine = 64 << 20

// firstRecord holds the members of a first line that tell formats apart.
type firstRecord struct {
	Type       string  `json:"type"`
	Format     string  `json:"format"`
	RecordType *string `json:"record_type"`
}

// detect reads r up to and including its first non-blank line, decides
// which format the file is in from that line, and returns a reader that
// yields the whole input again, so decoders count lines from the start.
func detect(r io.Reader) (fileFormat, io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var head bytes.Buffer
	for line := 1; ; line++ {
		start := head.Len()
		err := readLineInto(br, &head)
		text := bytes.TrimSpace(head.Bytes()[start:])
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, &session.DecodeError{Line: line, Err: fmt.Errorf("%w: %w", session.ErrCorrupt, err)}
		}
		if len(text) > 0 {
			f, ferr := formatOf(text)
			if ferr != nil {
				return 0, nil, &session.DecodeError{Line: line, Err: ferr}
			}
			return f, io.MultiReader(bytes.NewReader(head.Bytes()), br), nil
		}
		if errors.Is(err, io.EOF) {
			return 0, nil, &session.DecodeError{Line: 1, Err: fmt.Errorf("%w: empty input: no header line", session.ErrCorrupt)}
		}
	}
}

// readLineInto appends one line of br, with its newline, to buf. It returns
// io.EOF at the end of input (after appending what was there).
func readLineInto(br *bufio.Reader, buf *bytes.Buffer) error {
	n := 0
	for {
		frag, err := br.ReadSlice('\n')
		n += len(frag)
		if n > maxLine {
			return fmt.Errorf("line longer than %d MiB", maxLine>>20)
		}
		buf.Write(frag)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// formatOf tells our header line from OpenRath's.
func formatOf(line []byte) (fileFormat, error) {
	var rec firstRecord
	if err := json.Unmarshal(line, &rec); err != nil {
		return 0, fmt.Errorf("%w: not a session file: the first line is not a JSON object (%w)", session.ErrCorrupt, err)
	}
	switch {
	case rec.RecordType != nil:
		return formatOpenRath, nil
	case rec.Type != "" || rec.Format != "":
		return formatOurs, nil
	}
	return 0, fmt.Errorf("%w: not a session file: the first line has neither \"type\" (rath JSONL) nor \"record_type\" (OpenRath JSONL)", session.ErrCorrupt)
}
