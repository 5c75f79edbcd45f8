package runctx

// StartLabel is the store label on a workflow run's input session holding
// the id of the input's head chunk when the run began (flow.Run sets it).
// A module may commit what it adds onto the input session itself (a
// checkout note, say), so the stored input can be longer than the input the
// run was given: a resume starts from this head, and what the modules added
// after it is served from the record as the run repeats it.
const StartLabel = "rath.run.start"
