package policy

import "errors"

var (
	// ErrInvalid: a policy file does not decode, or a rule of it does not
	// compile; the error names the file and the rule.
	ErrInvalid = errors.New("policy: invalid policy file")
	// ErrDenied: a policy denied an action (the error of a run that ends
	// because its model call was denied).
	ErrDenied = errors.New("policy: denied")
)
