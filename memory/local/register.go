package local

import (
	"context"
	"fmt"
	"net/url"

	"github.com/openrath/rath/memory"
	"github.com/openrath/rath/memory/internal/rank"
)

func init() {
	memory.Register("sqlite", func(ctx context.Context, u *url.URL, o memory.Options) (memory.Memory, error) {
		path := u.Path
		if u.Opaque != "" { // sqlite:relative/memory.db
			path = u.Opaque
		}
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("memory/local: URL %q names host %q; use sqlite:///absolute/path or sqlite:relative/path", u.Redacted(), u.Host)
		}
		if path == "" {
			return nil, fmt.Errorf("memory/local: URL %q names no file", u.Redacted())
		}
		opts, err := urlOptions(u.Query())
		if err != nil {
			return nil, err
		}
		if o.Embedder != nil {
			opts = append(opts, WithEmbedder(o.Embedder))
		}
		return Open(ctx, path, opts...)
	})
}

// Describe implements memory.Describer.
func (b *Backend) Describe() string {
	how := "full-text (bm25)"
	if b.embedder != nil {
		how += " + vectors (" + rank.EmbedderKey(b.embedder) + ")"
	}
	return "local " + b.path + ": " + how
}
