//go:build !race

package local

// raceDetector: see race_test.go.
const raceDetector = false
