package docker

import (
	"bytes"
	"io"

	"github.com/openrath/rath/sandbox"
)

// capped keeps the first sandbox.MaxOutput bytes written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := sandbox.MaxOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// tee writes to buf and, if set, to w.
func tee(buf io.Writer, w io.Writer) io.Writer {
	if w == nil {
		return buf
	}
	return io.MultiWriter(buf, w)
}
