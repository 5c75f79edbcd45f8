package local

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// byImpact: reading t by impact (addImpact) is likely cheaper than reading
// its postings in the scope, estimated from its entries and the scope's
// share of all entries; looking an entry up costs about three postings
// read in a range, and the statements about 64. The choice changes what is
// read, never the answer.
func byImpact(t lexTerm, share float64, k, found int) bool {
	return float64(t.docs)*share > float64(3*found+2*k+64)
}

// shareTTL is how long a scope's share of the entries is taken as known.
const shareTTL = time.Second

// shares caches scopeShare's estimates.
type shares struct {
	mu sync.Mutex
	of map[int64]share
}

type share struct {
	of float64
	at time.Time
}

// scopeShare estimates the share of the entries that scope id holds from
// its last rowid (an overestimate once entries are forgotten), at most
// shareTTL old.
func (b *Backend) scopeShare(ctx context.Context, q *lexQuery, id int64) (float64, error) {
	b.shares.mu.Lock()
	s, ok := b.shares.of[id]
	b.shares.mu.Unlock()
	if ok && time.Since(s.at) < shareTTL {
		return s.of, nil
	}
	lo, hi := scopeRange(id)
	var last sql.NullInt64
	if err := b.stmts.last.QueryRowContext(ctx, lo, hi).Scan(&last); err != nil {
		return 0, err
	}
	s = share{at: time.Now()}
	if last.Valid && q.entries > 0 {
		s.of = min(1, float64(last.Int64-lo+1)/float64(q.entries))
	}
	b.shares.mu.Lock()
	if b.shares.of == nil {
		b.shares.of = map[int64]share{}
	}
	b.shares.of[id] = s
	b.shares.mu.Unlock()
	return s.of, nil
}
