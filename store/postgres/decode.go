package postgres

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// decoder turns segment rows into chunks while later rows are still on the
// wire: decoding is most of the client's work in a large Load, and it can
// overlap with the server reading and sending the rest. Each row is decoded
// on its own goroutine, at most GOMAXPROCS at once, straight into its place
// in the result.
type decoder struct {
	out  []session.Chunk
	from int
	sem  chan struct{}
	wg   sync.WaitGroup

	mu  sync.Mutex
	err error
}

func newDecoder(from, to int) *decoder {
	return &decoder{out: make([]session.Chunk, max(to-from, 0)), from: from, sem: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// add decodes fs, chunks at, at+1, ... of the session, in the background.
// It has the shape walk wants.
func (d *decoder) add(at int, fs []store.Frame) error {
	if err := d.firstErr(); err != nil {
		return err
	}
	d.sem <- struct{}{}
	d.wg.Go(func() {
		defer func() { <-d.sem }()
		if err := store.DecodeFramesInto(d.out[at-d.from:][:len(fs)], fs); err != nil {
			d.fail(fmt.Errorf("chunks from %d: %w", at, err))
		}
	})
	return nil
}

// wait returns the chunks once every row is decoded.
func (d *decoder) wait() ([]session.Chunk, error) {
	d.wg.Wait()
	if err := d.firstErr(); err != nil {
		return nil, err
	}
	return d.out, nil
}

func (d *decoder) fail(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = err
	}
}

func (d *decoder) firstErr() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}
