package tool

import (
	"path"
	"strings"
)

// Access is how a call uses a resource.
type Access uint8

const (
	// Read shares the resource with other reads.
	Read Access = iota + 1
	// Write excludes every other use of the resource, and of paths above
	// and below it.
	Write
	// Exclusive excludes every other use of the resource and every path:
	// commands and code, which may touch anything in their sandbox.
	Exclusive
)

// Resource is something a call touches: a workspace path ("path:" keys),
// or any other named thing. Exclusive resources conflict with every
// resource of the same sandbox.
type Resource struct {
	Access Access
	// Key is "path:<clean relative path>" for files, or a tool's own name.
	Key string
}

// PathRead and PathWrite are resources on a workspace path.
func PathRead(p string) Resource  { return Resource{Access: Read, Key: "path:" + cleanPath(p)} }
func PathWrite(p string) Resource { return Resource{Access: Write, Key: "path:" + cleanPath(p)} }

// SandboxExclusive is the resource of commands and code.
func SandboxExclusive() Resource { return Resource{Access: Exclusive, Key: "sandbox"} }

func cleanPath(p string) string {
	c := path.Clean("/" + p)
	return strings.TrimPrefix(c, "/")
}

// Conflict reports whether calls holding a and b may not run at once.
func Conflict(a, b Resource) bool {
	if a.Access == Exclusive || b.Access == Exclusive {
		return true
	}
	if a.Access == Read && b.Access == Read {
		return false
	}
	// A write conflicts with the same key, and for paths with ancestors and
	// descendants.
	if a.Key == b.Key {
		return true
	}
	pa, oka := strings.CutPrefix(a.Key, "path:")
	pb, okb := strings.CutPrefix(b.Key, "path:")
	if !oka || !okb {
		return false
	}
	return within(pa, pb) || within(pb, pa)
}

// within reports whether p is dir or below it ("" is the workspace root).
func within(p, dir string) bool {
	return dir == "" || dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// ConflictAny reports whether any of as conflicts with any of bs.
func ConflictAny(as, bs []Resource) bool {
	for _, a := range as {
		for _, b := range bs {
			if Conflict(a, b) {
				return true
			}
		}
	}
	return false
}
