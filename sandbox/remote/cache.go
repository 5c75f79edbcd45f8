package remote

import (
	"sync"

	"github.com/openrath/rath/sandbox"
)

// textCacheLimit bounds the bytes a sandbox's text cache holds.
const textCacheLimit = 64 << 20

// textCache holds small files' content by hash: nil for a binary file.
// When it outgrows its limit it starts again empty.
type textCache struct {
	mu    sync.Mutex
	m     map[string]*string
	bytes int
}

func newTextCache() *textCache { return &textCache{m: map[string]*string{}} }

func (c *textCache) get(hash string) (*string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[hash]
	return t, ok
}

func (c *textCache) put(hash string, b []byte) {
	var t *string
	if sandbox.IsText(b) {
		s := string(b)
		t = &s
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+len(b) > textCacheLimit {
		c.m, c.bytes = map[string]*string{}, 0
	}
	c.m[hash] = t
	c.bytes += len(b)
}
