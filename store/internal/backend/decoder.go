package backend

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/openrath/rath/session"
)

// Decoder turns segment rows into chunks while later rows are still being
// read: decoding is most of the work of a large Load, and it can overlap
// with the database reading the rest. Each row is decoded (and validated)
// on its own goroutine, at most GOMAXPROCS at once, straight into its place
// in the result. Backends feed it from WalkLane.
type Decoder struct {
	out  []session.Chunk
	from int
	sem  chan struct{}
	wg   sync.WaitGroup

	mu  sync.Mutex
	err error
}

// NewDecoder prepares to decode chunks [from, to) of a session.
func NewDecoder(from, to int) *Decoder {
	return &Decoder{out: make([]session.Chunk, max(to-from, 0)), from: from, sem: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// Add decodes fs, chunks at, at+1, ... of the session, in the background.
// It has the shape WalkLane wants.
func (d *Decoder) Add(at int, fs []Frame) error {
	if err := d.firstErr(); err != nil {
		return err
	}
	d.sem <- struct{}{}
	d.wg.Go(func() {
		defer func() { <-d.sem }()
		if err := DecodeFramesInto(d.out[at-d.from:][:len(fs)], fs); err != nil {
			d.fail(fmt.Errorf("chunks from %d: %w", at, err))
		}
	})
	return nil
}

// Wait returns the chunks once every row is decoded. Call it even after a
// failed walk: goroutines may still be running.
func (d *Decoder) Wait() ([]session.Chunk, error) {
	d.wg.Wait()
	if err := d.firstErr(); err != nil {
		return nil, err
	}
	return d.out, nil
}

func (d *Decoder) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = err
	}
}

func (d *Decoder) firstErr() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}
