package model

import "github.com/openrath/rath/session"

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cache_read,omitempty"`
	CacheWrite float64 `json:"cache_write,omitempty"`
}

// Cost prices u. Input tokens are taken to include cache reads and writes
// (as OpenAI reports them); providers that report them apart (Anthropic)
// normalise before this is applied.
func (p Price) Cost(u session.Usage) float64 {
	plain := max(u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens, 0)
	c := float64(plain)*p.Input + float64(u.OutputTokens)*p.Output
	cr, cw := p.CacheRead, p.CacheWrite
	if cr == 0 {
		cr = p.Input
	}
	if cw == 0 {
		cw = p.Input
	}
	c += float64(u.CacheReadTokens)*cr + float64(u.CacheWriteTokens)*cw
	return c / 1e6
}
