package runctx

// StepsLabel is the store label on a workflow run's input session holding
// the number of model calls the run recorded, written when the run ends
// (so that a listing of runs reads it from the run's labels instead of
// loading its sessions).
const StepsLabel = "rath.run.steps"
