package remote

import (
	"bytes"
	"encoding/base64"
	"io"
)

// lineDecoder undoes the guard's b64 mode: each base64 line written to it
// is decoded and its bytes written on; a line that is not base64 (the
// guard's own failure line) passes as it is.
type lineDecoder struct {
	w   io.Writer
	buf []byte
}

func decodeLines(w io.Writer) *lineDecoder { return &lineDecoder{w: w} }

// Write implements io.Writer.
func (d *lineDecoder) Write(p []byte) (int, error) {
	d.buf = append(d.buf, p...)
	for {
		i := bytes.IndexByte(d.buf, '\n')
		if i < 0 {
			break
		}
		d.line(d.buf[:i])
		d.buf = d.buf[i+1:]
	}
	return len(p), nil
}

// flush decodes what is left (a last line without its newline).
func (d *lineDecoder) flush() {
	if len(d.buf) > 0 {
		d.line(d.buf)
		d.buf = nil
	}
}

func (d *lineDecoder) line(l []byte) {
	l = bytes.TrimSuffix(l, []byte("\r"))
	out := make([]byte, base64.StdEncoding.DecodedLen(len(l)))
	n, err := base64.StdEncoding.Decode(out, l)
	if err != nil {
		_, _ = d.w.Write(append(l, '\n'))
		return
	}
	_, _ = d.w.Write(out[:n])
}
