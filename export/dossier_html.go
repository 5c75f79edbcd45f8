package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/openrath/rath/session"
)

// dossierPage is what the HTML template renders: the data plus the graph
// drawing, vetted for inline use.
type dossierPage struct {
	*DossierData
	SVG  template.HTML
	Note string
}

// WriteDossierHTML renders d as the self-contained HTML page Dossier writes
// (inline CSS, JavaScript and SVG; no network).
func WriteDossierHTML(w io.Writer, d *DossierData) error {
	p := dossierPage{DossierData: d, Note: d.GraphNote}
	if d.GraphSVG != "" {
		if svg, ok := inlineSVG(d.GraphSVG); ok {
			p.SVG = svg
		} else {
			p.Note = "The lineage drawing was left out (it was not plain SVG): the lineage graph is shown as DOT text."
		}
	}
	if err := dossierTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("export: render dossier of %s: %w", d.Session.ID, err)
	}
	return nil
}

var (
	svgComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	svgXMLNS   = regexp.MustCompile(`\s+xmlns(:\w+)?="[^"]*"`)
	svgActive  = regexp.MustCompile(`(?i)<\s*(script|foreignobject|iframe|object|embed)|javascript:|\son\w+\s*=|href\s*=`)
)

// inlineSVG prepares SVG (ours or Graphviz's) for embedding in HTML: it
// drops the XML prolog, doctype, comments and namespace declarations (HTML
// needs none, and they would be the page's only URLs). It refuses SVG that
// could run script or load anything, which neither writes for our graphs.
func inlineSVG(svg string) (template.HTML, bool) {
	i := strings.Index(svg, "<svg")
	if i < 0 {
		return "", false
	}
	s := svgComment.ReplaceAllString(svg[i:], "")
	s = svgXMLNS.ReplaceAllString(s, "")
	if svgActive.MatchString(s) {
		return "", false
	}
	// Both drawings escape every label they write, and the check above
	// refuses active content.
	return template.HTML(s), true
}

// diffLine is one line of a unified diff: its CSS class (add, del, ctx,
// hunk, file), its marker ("+", "-", " " or the whole line for headers)
// and the code after the marker, split into syntax tokens.
type diffLine struct {
	Class, Marker string
	Tokens        []token
}

// diffLines classifies the lines of a unified diff of file for colouring:
// the line's kind, and within code lines the syntax of file's language
// (by extension; plain text for one the tokeniser does not know).
func diffLines(file, diff string) []diffLine {
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	out := make([]diffLine, 0, len(lines))
	lg := langOf(file)
	for _, l := range lines {
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			c = "file"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		if c == "file" || c == "hunk" || l == "" {
			out = append(out, diffLine{Class: c, Marker: l})
			continue
		}
		d := diffLine{Class: c, Marker: l[:1]}
		if lg != nil {
			d.Tokens = lg.tokens(l[1:])
		} else {
			d.Tokens = []token{{"", l[1:]}}
		}
		out = append(out, d)
	}
	return out
}

// pretty indents JSON arguments for reading; anything else is shown as is.
func pretty(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

var dossierFuncs = template.FuncMap{
	"short": func(id session.ChunkID) string { return id.Short() },
	"sid":   shortID,
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05.000Z")
	},
	"dur": func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return d.Round(time.Microsecond).String()
	},
	"diff":   diffLines,
	"pretty": pretty,
	"usage":  func(u session.Usage) string { return u.String() },
	"cost": func(u session.Usage) string {
		if u.CostUSD == 0 {
			return "—"
		}
		return fmt.Sprintf("$%.4f", u.CostUSD)
	},
	"exit": func(p *int) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprint(*p)
	},
	"join": func(ss []string) string { return strings.Join(ss, ", ") },
	"ids": func(ids []session.ChunkID) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			out[i] = id.Short()
		}
		return out
	},
	"envlist": func(m map[string]string) []string {
		parts := make([]string, 0, len(m))
		for k, v := range m {
			parts = append(parts, k+"="+v)
		}
		slices.Sort(parts)
		return parts
	},
	"envgroups": func(envs []Environment) envTables {
		g, r := groupEnvs(envs)
		return envTables{Groups: g, Rows: r}
	},
}

// envTables is what the environment section shows: each setup once, and
// every placement with its setup's label.
type envTables struct {
	Groups []envGroup
	Rows   []placementRow
}

var dossierTemplate = template.Must(template.New("dossier").Funcs(dossierFuncs).Parse(dossierHTML))
