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

// writeHTML renders d as a self-contained HTML page.
func writeHTML(w io.Writer, d *DossierData) error {
	p := dossierPage{DossierData: d, Note: d.GraphNote}
	if d.GraphSVG != "" {
		if svg, ok := inlineSVG(d.GraphSVG); ok {
			p.SVG = svg
		} else {
			p.Note = "The Graphviz drawing was left out (it was not plain SVG): the lineage graph is shown as DOT text."
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

// inlineSVG prepares Graphviz output for embedding in HTML: it drops the
// XML prolog, doctype, comments and namespace declarations (HTML needs
// none, and they would be the page's only URLs). It refuses SVG that could
// run script or load anything, which Graphviz never writes for our graphs.
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
	// Graphviz escapes every label it writes, and the check above refuses
	// active content.
	return template.HTML(s), true
}

// diffLine is one line of a unified diff with its CSS class.
type diffLine struct {
	Class, Text string
}

// diffLines classifies the lines of a unified diff for colouring.
func diffLines(diff string) []diffLine {
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	out := make([]diffLine, 0, len(lines))
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
		out = append(out, diffLine{c, l})
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
	"env": func(m map[string]string) string {
		parts := make([]string, 0, len(m))
		for k, v := range m {
			parts = append(parts, k+"="+v)
		}
		slices.Sort(parts)
		return strings.Join(parts, " ")
	},
}

var dossierTemplate = template.Must(template.New("dossier").Funcs(dossierFuncs).Parse(dossierHTML))
