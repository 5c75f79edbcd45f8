// Package customtool shows a tool of your own, made from a typed Go
// function with tool.Func, and what happens when a model calls it with
// bad arguments.
//
// Calculator is a compound-interest calculator. Its argument type,
// InterestArgs, is a struct: tool.Func infers the JSON schema the model
// sees from it — property names from the json tags, descriptions from the
// jsonschema tags, every field without omitempty required, no other
// properties allowed — and validates each call's arguments against that
// schema before the function runs. Arguments that are not JSON, miss a
// required field, have the wrong type or an unknown property never reach
// the function: the call gets an error result of kind invalid_arguments
// whose message says what is wrong, the model sees it, and the loop goes
// on. The function adds the checks a schema cannot express (a positive
// principal, a sensible number of years) and reports them the same way,
// with tool.Errorf(session.ToolErrInvalidArgs, ...).
//
// The offline model plays one that gets the arguments wrong at first: it
// sends the principal as a string "$10,000" and names the rate "rate".
// It reads the invalid_arguments result, calls again with the schema's
// names and types, and answers from the tool's result. The session keeps
// both attempts as tool_result chunks, the failed one with its error.
//
//	go run ./cmd/rath run custom-tool
//	go run ./cmd/rath show <the printed id>
package customtool
