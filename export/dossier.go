package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openrath/rath/session"
	"github.com/openrath/rath/store"
)

// Dossier file names inside the dossier directory.
const (
	DossierHTMLFile = "index.html"
	DossierJSONFile = "dossier.json"
)

// Dossier writes the evidence dossier of session id into dir (created):
// index.html, self-contained (inline CSS/JS/SVG, no network, opens from
// disk), and dossier.json (the DossierData). It returns the index.html path.
// Each file is written whole or not at all: it is renamed into place.
func Dossier(ctx context.Context, st store.Store, id session.ID, dir string) (string, error) {
	d, err := BuildDossier(ctx, st, id)
	if err != nil {
		return "", err
	}
	var js, page bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return "", fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	if err := WriteDossierHTML(&page, d); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, DossierJSONFile), js.Bytes()); err != nil {
		return "", fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	path := filepath.Join(dir, DossierHTMLFile)
	if err := writeFileAtomic(path, page.Bytes()); err != nil {
		return "", fmt.Errorf("export: dossier of %s: %w", id, err)
	}
	return path, nil
}

// writeFileAtomic writes data to a temporary file beside path and renames
// it into place, so a reader never sees half a file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ReadDossier reads the dossier.json of a dossier folder written by Dossier.
func ReadDossier(dir string) (*DossierData, error) {
	raw, err := os.ReadFile(filepath.Join(dir, DossierJSONFile))
	if err != nil {
		return nil, fmt.Errorf("export: read dossier: %w", err)
	}
	var d DossierData
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("export: read dossier %s: %w", dir, err)
	}
	return &d, nil
}
