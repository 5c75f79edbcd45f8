package session

import "strings"

// ExtraResumes is the lineage extra of a session that continues the
// sessions of interrupted attempts of the same step: a resumed run's agent
// derives a new session, which replays what the attempts before it
// recorded, so what they did (a memory write, say) is its doing too. The
// value lists their ids, nearest first, separated by commas.
const ExtraResumes = "resumes"

// Resumes is the sessions of the interrupted attempts this session
// continues (ExtraResumes), nearest first; none for a session made in one
// go.
func (l Lineage) Resumes() []ID {
	v := l.Extras[ExtraResumes]
	if v == "" {
		return nil
	}
	parts := strings.Split(v, ",")
	ids := make([]ID, 0, len(parts))
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			ids = append(ids, ID(p))
		}
	}
	return ids
}

// ResumesExtras is the lineage extras of a session that continues the
// attempts ids (nil for none): the value of ExtraResumes.
func ResumesExtras(ids []ID) map[string]string {
	if len(ids) == 0 {
		return nil
	}
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = string(id)
	}
	return map[string]string{ExtraResumes: strings.Join(parts, ",")}
}
