package runlog

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
)

// Print writes a readable account of a run's turns: the observation, the
// actions and the image paths of each.
func Print(w io.Writer, dir string, turns []Turn) {
	fmt.Fprintf(w, "run %s: %d turns\n", dir, len(turns))
	for _, t := range turns {
		fmt.Fprintf(w, "\n== turn %d", t.Turn)
		if !t.At.IsZero() {
			fmt.Fprintf(w, " (%s)", t.At.UTC().Format("2006-01-02 15:04:05Z"))
		}
		fmt.Fprintln(w)
		if t.Observation != "" {
			fmt.Fprintf(w, "observation: %s\n", t.Observation)
		}
		if len(t.Actions) > 0 && string(t.Actions) != "null" && string(t.Actions) != "[]" {
			var acts []map[string]any
			if json.Unmarshal(t.Actions, &acts) == nil {
				for i, a := range acts {
					fmt.Fprintf(w, "action %d: %s\n", i+1, actionLine(a))
				}
			}
		}
		if len(t.Rejected) > 0 && string(t.Rejected) != "null" {
			fmt.Fprintf(w, "rejected: %s\n", t.Rejected)
		}
		if len(t.BBoxes) > 0 && string(t.BBoxes) != "null" && string(t.BBoxes) != "[]" {
			fmt.Fprintf(w, "bboxes: %s\n", t.BBoxes)
		}
		if t.RawPNG != "" {
			fmt.Fprintf(w, "raw: %s\n", filepath.Join(dir, t.RawPNG))
		}
		if t.AnnotatedPNG != "" {
			fmt.Fprintf(w, "annotated: %s\n", filepath.Join(dir, t.AnnotatedPNG))
		}
	}
}

func actionLine(a map[string]any) string {
	var b strings.Builder
	fmt.Fprint(&b, a["name"])
	for _, k := range []string{"x1", "y1", "x2", "y2", "dx", "dy", "text", "keys"} {
		if v, ok := a[k]; ok {
			fmt.Fprintf(&b, " %s=%v", k, v)
		}
	}
	return b.String()
}

// page is parsed on first use, not at every acu start-up.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("replay").Parse(pageHTML))
})

const pageHTML = `<!doctype html>
<html><head><meta charset="utf-8"><title>acu agent replay {{.Dir}}</title>
<style>body{font:14px system-ui,sans-serif;margin:1em;background:#111;color:#ddd}
.turn{border-top:1px solid #444;padding:.5em 0}img{max-width:48%;margin-right:1%;border:1px solid #333}
pre{white-space:pre-wrap;background:#1b1b1b;padding:.5em}</style></head><body>
<h1>Run {{.Dir}} ({{len .Turns}} turns)</h1>
{{range .Turns}}<div class="turn" id="t{{.Turn}}"><h2>Turn {{.Turn}}</h2>
<p>{{.Observation}}</p><pre>{{printf "%s" .Actions}}</pre>
{{if .RawPNG}}<img alt="raw" src="files/{{.RawPNG}}">{{end}}{{if .AnnotatedPNG}}<img alt="annotated" src="files/{{.AnnotatedPNG}}">{{end}}
</div>{{end}}</body></html>`

// Handler serves a review page of a run directory: every turn with its
// observation, actions and both images. Mount it behind the caller's
// listener protections; it serves files from dir only.
func Handler(dir string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /files/", http.StripPrefix("/files/", http.FileServer(http.Dir(dir))))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		turns, err := Load(dir)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'unsafe-inline'")
		_ = page().Execute(w, struct {
			Dir   string
			Turns []Turn
		}{dir, turns})
	})
	return mux
}
