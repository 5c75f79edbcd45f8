package e2bfake

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The Connect protocol's server side, after its specification
// (connectrpc.com/docs/protocol): unary calls carry a bare message
// (application/json or application/proto); server streams carry
// enveloped messages (application/connect+json or +proto), a flags byte
// and a 4-byte big-endian length before each, and end with an end-stream
// envelope (flags 0x02) holding {"error": ...} when the call failed.

// rpcError is a Connect error.
type rpcError struct {
	code string
	msg  string
}

func (e *rpcError) Error() string { return e.code + ": " + e.msg }

func errorf(code, format string, args ...any) *rpcError {
	return &rpcError{code: code, msg: fmt.Sprintf(format, args...)}
}

// httpStatus maps a Connect code to the status of a unary error.
var httpStatus = map[string]int{
	"canceled": 499, "unknown": 500, "invalid_argument": 400, "deadline_exceeded": 504, "not_found": 404,
	"already_exists": 409, "permission_denied": 403, "resource_exhausted": 429, "failed_precondition": 400,
	"aborted": 409, "out_of_range": 400, "unimplemented": 501, "internal": 500, "unavailable": 503,
	"data_loss": 500, "unauthenticated": 401,
}

// rpc is one procedure: its message types and handler.
type rpc struct {
	in, out string
	stream  bool
	handle  func(c *call) error
}

// call is one request to a procedure.
type call struct {
	r       *http.Request
	w       http.ResponseWriter
	sc      *schema
	rpc     *rpc
	binary  bool
	body    []byte
	timeout time.Duration // Connect-Timeout-Ms, 0 if absent

	mu   sync.Mutex
	sent bool
}

// decode reads the request message.
func (c *call) decode(into any) error {
	if err := c.sc.decode(c.rpc.in, c.binary, c.body, into); err != nil {
		return errorf("invalid_argument", "%s: %v", c.rpc.in, err)
	}
	return nil
}

// send writes one message of a server stream (or the unary reply).
func (c *call) send(v any) error {
	b, err := c.sc.encode(c.rpc.out, c.binary, v)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = true
	if !c.rpc.stream {
		c.w.Header().Set("Content-Type", contentType(false, c.binary))
		c.w.WriteHeader(http.StatusOK)
		_, err = c.w.Write(b)
		return err
	}
	if _, err := c.w.Write(envelope(0, b)); err != nil {
		return err
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

func envelope(flags byte, b []byte) []byte {
	out := make([]byte, 5+len(b))
	out[0] = flags
	binary.BigEndian.PutUint32(out[1:5], uint32(len(b)))
	copy(out[5:], b)
	return out
}

func contentType(stream, binary bool) string {
	codec := "json"
	if binary {
		codec = "proto"
	}
	if stream {
		return "application/connect+" + codec
	}
	return "application/" + codec
}

// serveRPC answers one Connect request.
func serveRPC(w http.ResponseWriter, r *http.Request, sc *schema, p *rpc) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	ct := r.Header.Get("Content-Type")
	var bin bool
	switch {
	case ct == contentType(p.stream, false):
	case ct == contentType(p.stream, true):
		bin = true
	default:
		w.Header().Set("Accept-Post", contentType(p.stream, false)+", "+contentType(p.stream, true))
		http.Error(w, "unsupported content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return
	}
	c := &call{r: r, w: w, sc: sc, rpc: p, binary: bin, body: body}
	if v := r.Header.Get("Connect-Timeout-Ms"); v != "" {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			c.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if p.stream {
		if len(body) < 5 || body[0] != 0 || int(binary.BigEndian.Uint32(body[1:5])) != len(body)-5 {
			w.Header().Set("Content-Type", contentType(true, bin))
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(endStream(errorf("invalid_argument", "the request is not one uncompressed envelope")))
			return
		}
		c.body = body[5:]
		w.Header().Set("Content-Type", contentType(true, bin))
		w.WriteHeader(http.StatusOK)
	}
	herr := p.handle(c)
	if p.stream {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, _ = w.Write(endStream(herr))
		return
	}
	if herr != nil {
		writeError(w, herr)
		return
	}
	if !c.sent {
		_ = c.send(struct{}{})
	}
}

// endStream is the end-stream envelope, with the call's error if any.
func endStream(err error) []byte {
	var body struct {
		Error *jsonError `json:"error,omitempty"`
	}
	if err != nil {
		body.Error = asJSONError(err)
	}
	b, _ := json.Marshal(body)
	return envelope(0x02, b)
}

type jsonError struct {
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
}

func asJSONError(err error) *jsonError {
	if re, ok := err.(*rpcError); ok {
		return &jsonError{Code: re.code, Message: re.msg}
	}
	return &jsonError{Code: "internal", Message: err.Error()}
}

// writeError writes a unary call's error.
func writeError(w http.ResponseWriter, err error) {
	je := asJSONError(err)
	status, ok := httpStatus[je.Code]
	if !ok {
		status = 500
	}
	b, _ := json.Marshal(je)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.Copy(w, bytes.NewReader(b))
}
