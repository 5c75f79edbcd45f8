package export

import (
	"reflect"
)

// envGroup is one distinct sandbox setup among a dossier's placements:
// backend, image, environment variables, secret names, network, limits
// and remote provider. A run that places several sandboxes alike (one per
// branch, each with its own directory) shows that setup once.
type envGroup struct {
	// Label names the group in the placements table: "A", "B", ...
	Label string
	// Env is the group's first placement; its Dir, SandboxID, TreeHash,
	// ClonedFrom and Node belong to that placement alone.
	Env Environment
	// Uses are the chunk indexes of the group's placements.
	Uses []int
}

// placementRow is one placement with the label of its setup.
type placementRow struct {
	Environment
	Group string
}

// groupEnvs groups placements by setup, in order of first appearance,
// and labels each placement with its group.
func groupEnvs(envs []Environment) ([]envGroup, []placementRow) {
	var groups []envGroup
	rows := make([]placementRow, 0, len(envs))
	for _, e := range envs {
		k := -1
		for i, g := range groups {
			if sameSetup(g.Env, e) {
				k = i
				break
			}
		}
		if k < 0 {
			groups = append(groups, envGroup{Label: groupLabel(len(groups)), Env: e})
			k = len(groups) - 1
		}
		groups[k].Uses = append(groups[k].Uses, e.Index)
		rows = append(rows, placementRow{Environment: e, Group: groups[k].Label})
	}
	return groups, rows
}

// sameSetup reports whether two placements set their sandbox up alike:
// everything but the directory and what the sandbox recorded once open.
func sameSetup(a, b Environment) bool {
	sa, sb := a.Spec, b.Spec
	sa.Dir, sb.Dir = "", ""
	return a.Backend == b.Backend && a.Image == b.Image && sa.Equal(sb) && reflect.DeepEqual(a.Remote, b.Remote)
}

// groupLabel is "A".."Z", then "AA", "AB", ...
func groupLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return groupLabel(i/26-1) + groupLabel(i%26)
}
