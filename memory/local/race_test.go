//go:build race

package local

// raceDetector: the race detector slows this pure-Go SQLite some
// fifteenfold, so the largest tests shrink their data (never below what
// exercises the same code).
const raceDetector = true
