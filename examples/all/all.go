// Package all registers every example workflow with the runtime, so that
// `rath run NAME` can run it: import it for its side effects. Each group of
// examples adds its imports in its own file of this package.
package all
