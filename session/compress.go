package session

import "fmt"

// Compression is the body of a compress chunk. It hides the chunks from From
// to To (inclusive, by id) from the model's view and shows Summary in their
// place; durable-tier chunks in the range stay visible. Nothing is deleted:
// the originals stay in the chain and in the store.
type Compression struct {
	From    ChunkID `json:"from"`
	To      ChunkID `json:"to"`
	Count   int     `json:"count"`
	Summary string  `json:"summary"`
	// Model names the model that wrote the summary, if any.
	Model        string `json:"model,omitempty"`
	TokensBefore int64  `json:"tokens_before,omitempty"`
	TokensAfter  int64  `json:"tokens_after,omitempty"`
}

func (*Compression) Kind() Kind { return KindCompress }

func (c *Compression) validate() error {
	if err := c.From.Validate(); err != nil {
		return fmt.Errorf("compress from: %w", err)
	}
	if err := c.To.Validate(); err != nil {
		return fmt.Errorf("compress to: %w", err)
	}
	if c.Count < 1 {
		return fmt.Errorf("%w: compress covers %d chunks", ErrInvalid, c.Count)
	}
	return nil
}
