package secret

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
)

// Resolver turns references into values. Resolve is given only references
// whose Resolver is the name it is registered under. Its errors should
// wrap ErrNotFound when there is no value, and must not hold the value;
// Resolvers.Resolve prefixes them with the reference.
type Resolver interface {
	Resolve(ctx context.Context, ref Ref) (Value, error)
}

// ResolverFunc is a function as a Resolver.
type ResolverFunc func(ctx context.Context, ref Ref) (Value, error)

// Resolve implements Resolver.
func (f ResolverFunc) Resolve(ctx context.Context, ref Ref) (Value, error) { return f(ctx, ref) }

// Observer is told of every resolution a Resolvers makes: the context it
// was made in, the reference, and its error (nil when it succeeded) —
// never the value. The CLI and the server record these in the audit log.
// Observers are called synchronously, after the resolution and before
// Resolve returns, and must be safe for concurrent use.
type Observer func(ctx context.Context, ref Ref, err error)

// Resolvers is a registry of resolvers by name. The zero value is not
// usable; NewResolvers makes one. It is safe for concurrent use.
type Resolvers struct {
	mu        sync.RWMutex
	byName    map[string]Resolver
	observers []observer
	next      int
}

type observer struct {
	id int
	o  Observer
}

// NewResolvers returns a registry holding the built-in resolvers: env
// (the process's environment) and file.
func NewResolvers() *Resolvers {
	return &Resolvers{
		byName: map[string]Resolver{Env: EnvResolver{}, File: FileResolver{}},
	}
}

var std = NewResolvers()

// Default is the process's registry, which Register, Resolve,
// ResolveString and Observe use.
func Default() *Resolvers { return std }

// Register adds r to the registry under name (1 to 64 of a-z, 0-9, - and
// _, starting with a letter). A name already registered, or a bad one, is
// an error.
func (rs *Resolvers) Register(name string, r Resolver) error {
	if err := checkResolverName(name); err != nil {
		return fmt.Errorf("secret: register %q: %s", name, err)
	}
	if r == nil {
		return fmt.Errorf("secret: register %q: a nil resolver", name)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, dup := rs.byName[name]; dup {
		return fmt.Errorf("secret: resolver %q registered twice", name)
	}
	rs.byName[name] = r
	return nil
}

// Names lists the registered resolvers' names.
func (rs *Resolvers) Names() []string {
	rs.mu.RLock()
	defer rs.mu.RUnlock()
	out := make([]string, 0, len(rs.byName))
	for n := range rs.byName {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Observe adds an observer of every resolution; the function it returns
// removes it.
func (rs *Resolvers) Observe(o Observer) (remove func()) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	id := rs.next
	rs.next++
	rs.observers = append(rs.observers, observer{id, o})
	return func() {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rs.observers = slices.DeleteFunc(slices.Clone(rs.observers), func(ob observer) bool { return ob.id == id })
	}
}

// Resolve resolves ref with the resolver it names and tells the observers.
// Errors begin with the reference, and wrap ErrUnknownResolver, or the
// resolver's error (ErrNotFound when it has no value; an empty value is
// ErrNotFound too).
func (rs *Resolvers) Resolve(ctx context.Context, ref Ref) (Value, error) {
	v, err := rs.resolve(ctx, ref)
	rs.mu.RLock()
	obs := rs.observers // never changed in place
	rs.mu.RUnlock()
	for _, ob := range obs {
		ob.o(ctx, ref, err)
	}
	return v, err
}

func (rs *Resolvers) resolve(ctx context.Context, ref Ref) (Value, error) {
	if err := ref.check(); err != nil {
		return Value{}, fmt.Errorf("%w: %s", ErrBadRef, err)
	}
	rs.mu.RLock()
	r := rs.byName[ref.Resolver]
	rs.mu.RUnlock()
	if r == nil {
		return Value{}, fmt.Errorf("%s: %w %q (registered: %s)", ref, ErrUnknownResolver, ref.Resolver, strings.Join(rs.Names(), ", "))
	}
	if err := ctx.Err(); err != nil {
		return Value{}, fmt.Errorf("%s: %w", ref, err)
	}
	v, err := r.Resolve(ctx, ref)
	if err != nil {
		return Value{}, fmt.Errorf("%s: %w", ref, err)
	}
	if v.IsZero() {
		return Value{}, fmt.Errorf("%s: %w: the resolver gave an empty value", ref, ErrNotFound)
	}
	return NewValue(v.Reveal(), ref), nil
}

// ResolveString resolves s if it is a reference (IsRef), and returns it as
// a Value if it is not (a value given literally, which no observer is told
// of). An empty s is the zero Value. A string that begins with "secret:"
// but is not a well-formed reference is an error wrapping ErrBadRef.
func (rs *Resolvers) ResolveString(ctx context.Context, s string) (Value, error) {
	if s == "" {
		return Value{}, nil
	}
	if !IsRef(s) {
		return NewValue(s, Ref{}), nil
	}
	ref, err := Parse(s)
	if err != nil {
		return Value{}, err
	}
	return rs.Resolve(ctx, ref)
}

// Register adds r to Default under name; it panics if the name is bad or
// taken (call it from an init).
func Register(name string, r Resolver) {
	if err := std.Register(name, r); err != nil {
		panic(err)
	}
}

// Resolve resolves ref with Default.
func Resolve(ctx context.Context, ref Ref) (Value, error) { return std.Resolve(ctx, ref) }

// ResolveString resolves s with Default if it is a reference, and returns
// it as a Value if it is not (see Resolvers.ResolveString).
func ResolveString(ctx context.Context, s string) (Value, error) { return std.ResolveString(ctx, s) }

// Observe adds an observer of Default's resolutions; the function it
// returns removes it.
func Observe(o Observer) (remove func()) { return std.Observe(o) }

type purposeKey struct{}

// WithPurpose returns ctx saying what the secrets resolved in it are for
// ("model openai", "mcp server github"), for observers to record.
func WithPurpose(ctx context.Context, purpose string) context.Context {
	return context.WithValue(ctx, purposeKey{}, purpose)
}

// Purpose is what ctx says its secrets are for ("" if nothing).
func Purpose(ctx context.Context) string {
	p, _ := ctx.Value(purposeKey{}).(string)
	return p
}

// EnvResolver resolves secret://env/NAME from the environment.
type EnvResolver struct {
	// Lookup reads a variable (os.LookupEnv if nil).
	Lookup func(name string) (string, bool)
}

// Resolve implements Resolver. An unset or empty variable is an error
// wrapping ErrNotFound.
func (e EnvResolver) Resolve(_ context.Context, ref Ref) (Value, error) {
	lookup := e.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	v, ok := lookup(ref.Name)
	switch {
	case !ok:
		return Value{}, fmt.Errorf("%w: the environment variable %s is not set", ErrNotFound, ref.Name)
	case v == "":
		return Value{}, fmt.Errorf("%w: the environment variable %s is empty", ErrNotFound, ref.Name)
	}
	return NewValue(v, ref), nil
}
