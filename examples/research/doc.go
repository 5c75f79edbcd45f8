// Package research is the MLAgentBench-like evidence example: an agent
// runs machine-learning experiments in a sandbox, and the session keeps
// everything a reviewer of the experiment needs.
//
// The task is a k-nearest-neighbour classifier of machine faults from three
// sensor readings (data/machines.csv, 80 rows, embedded in the binary). The
// experiment is a POSIX sh + awk program (data/experiment.sh), so it runs in
// any sandbox with a shell, bubblewrap's included, without Python.
//
// The workflow, registered as "research":
//
//	recall       memory: recall what earlier runs learnt about this task
//	experiments  loop, at most 3 times:
//	               selector next-experiment: baseline | reuse-best | scale-features | vary-k
//	                 brief (a user message naming the attempt's configuration)
//	                 agent experimenter: load_dataset, run_command sh experiment.sh K SCALE N
//	               validator val-accuracy: the attempt's metric >= 0.90
//	remember     memory: remember the best configuration, citing its evidence
//
// What the run shows:
//
//   - Input materials: the load_dataset tool result records the files it
//     put in the workspace, with their content hashes (workspace effects).
//   - Experiment state in the workspace: every attempt writes
//     results/attempt-N.json, recorded as an effect of its run_command call;
//     the metrics are in the tool result itself (val_accuracy=...).
//   - Decisions: the selector reads the recorded results (and the recalled
//     memory) and chooses the next experiment in Go; the decision chunk says
//     why ("the feature spreads differ 552x, so rpm dominates every
//     distance: standardise the features before tuning k").
//   - Validation: each attempt is judged by a flow.Validator; the first run's
//     baseline is rejected (0.60 < 0.90), the standardised attempt approved.
//   - Memory with provenance: the best configuration is remembered with the
//     tool_result chunk that measured it and the approval that accepted it
//     as evidence. A second run recalls it, and the selector's decision cites
//     the memory and its writer: memory.Explain answers why it was there.
//
// The memory steps are replay-aware: under replay.Run they serve the
// recorded memory chunk instead of querying memory again, so a run replays
// exactly even after later runs changed what memory holds.
package research
