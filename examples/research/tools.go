package research

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"

	"github.com/openrath/rath/tool"
)

// The bundled input materials, and where load_dataset puts them in the
// workspace.
var (
	//go:embed data/machines.csv
	datasetCSV []byte
	//go:embed data/experiment.sh
	experimentScript []byte
)

const (
	datasetPath = "data/machines.csv"
	scriptPath  = "experiment.sh"
)

// LoadArgs are load_dataset's arguments: none.
type LoadArgs struct{}

// loadDataset is the tool that puts the bundled dataset and experiment
// script into the session's workspace. Its result names the files with
// their sizes and hashes; the agent records them as workspace effects.
func loadDataset() tool.Tool {
	t, err := tool.FuncWith("load_dataset", "Put the bundled dataset (data/machines.csv) and the experiment script (experiment.sh) into the workspace.",
		func(ctx context.Context, env tool.Env, _ LoadArgs) (string, error) {
			if env.Sandbox == nil {
				return "", tool.ErrNoSandbox
			}
			if err := env.Sandbox.WriteFile(ctx, datasetPath, datasetCSV); err != nil {
				return "", fmt.Errorf("load_dataset: %w", err)
			}
			if err := env.Sandbox.WriteFile(ctx, scriptPath, experimentScript); err != nil {
				return "", fmt.Errorf("load_dataset: %w", err)
			}
			rows := bytes.Count(datasetCSV, []byte("\n")) - 1
			header, _, _ := bytes.Cut(datasetCSV, []byte("\n"))
			return fmt.Sprintf("wrote %s (%d rows; columns %s; %s)\nwrote %s (k-nearest-neighbour classifier in sh + awk; %s)\n",
				datasetPath, rows, header, digest(datasetCSV), scriptPath, digest(experimentScript)), nil
		},
		tool.WithResources(func(LoadArgs) []tool.Resource {
			return []tool.Resource{tool.PathWrite(datasetPath), tool.PathWrite(scriptPath)}
		}),
		tool.Idempotent[LoadArgs]())
	if err != nil {
		panic(err) // LoadArgs is a plain struct: the schema always infers
	}
	return tool.InSandbox(t)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
