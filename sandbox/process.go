package sandbox

// DefaultPath is the PATH commands get.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// MaxOutput caps how much of each of stdout and stderr a Result keeps; the
// rest is still streamed to Command.Stdout/Stderr.
const MaxOutput = 16 << 20
