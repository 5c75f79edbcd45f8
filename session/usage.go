package session

import "fmt"

// Usage counts tokens (and, where known, money) spent by model calls. A
// session's Usage is the sum over the model_call chunks of its chain, so a
// prefix shared by two merged branches is counted once.
type Usage struct {
	InputTokens      int64 `json:"input_tokens,omitempty"`
	OutputTokens     int64 `json:"output_tokens,omitempty"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	ReasoningTokens  int64 `json:"reasoning_tokens,omitempty"`
	// CostUSD is the price of the call in US dollars, 0 when unknown.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Add returns the element-wise sum of u and o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens + o.ReasoningTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
	}
}

// Total is input plus output tokens (cache and reasoning tokens are
// breakdowns of those, as providers report them).
func (u Usage) Total() int64 { return u.InputTokens + u.OutputTokens }

// IsZero reports whether nothing was counted.
func (u Usage) IsZero() bool { return u == Usage{} }

func (u Usage) negative() bool {
	return u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 ||
		u.CacheWriteTokens < 0 || u.ReasoningTokens < 0 || u.CostUSD < 0
}

func (u Usage) String() string {
	s := fmt.Sprintf("in=%d out=%d", u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens != 0 || u.CacheWriteTokens != 0 {
		s += fmt.Sprintf(" cache_read=%d cache_write=%d", u.CacheReadTokens, u.CacheWriteTokens)
	}
	if u.ReasoningTokens != 0 {
		s += fmt.Sprintf(" reasoning=%d", u.ReasoningTokens)
	}
	if u.CostUSD != 0 {
		s += fmt.Sprintf(" cost=$%.6f", u.CostUSD)
	}
	return s
}
