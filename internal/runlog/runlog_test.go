package runlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var fixed = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func writeRun(t *testing.T, base string, layout Layout) *Dir {
	t.Helper()
	d, err := Create(Options{Base: base, Layout: layout, LogToFile: true, Now: func() time.Time { return fixed }})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	for turn := 1; turn <= 2; turn++ {
		rec := RawRecord{Turn: turn, Observation: "obs", BBoxes: []map[string]int{}, Actions: []map[string]any{{"name": "click", "x1": 500, "y1": 500}}, VLMText: `{"observation":"obs"}`}
		if err := d.WriteRaw(rec, []byte("raw png")); err != nil {
			t.Fatal(err)
		}
		if err := d.WriteAnnotated(turn, []byte("annotated png")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.Log().Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestFlatLayout(t *testing.T) {
	base := t.TempDir()
	d := writeRun(t, base, Flat)
	if got, want := d.Path(), filepath.Join(base, "run_0001"); got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
	for _, f := range []string{"turn_0001_raw.png", "turn_0001_annotated.png", "turn_0002_raw.png", "turn_0002_annotated.png", "turns.jsonl", "main.log"} {
		if _, err := os.Stat(filepath.Join(d.Path(), f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	lines := readLines(t, filepath.Join(d.Path(), "turns.jsonl"))
	if len(lines) != 4 {
		t.Fatalf("turns.jsonl has %d lines, want 4 (two per turn)", len(lines))
	}
	// The seed's record shapes.
	var raw map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"turn", "stage", "observation", "bboxes", "actions", "raw_png"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("raw record lacks %q: %s", k, lines[0])
		}
	}
	if raw["stage"] != "raw" || raw["raw_png"] != "turn_0001_raw.png" {
		t.Errorf("raw record = %s", lines[0])
	}
	var ann map[string]any
	_ = json.Unmarshal([]byte(lines[1]), &ann)
	if ann["stage"] != "annotated" || ann["annotated_png"] != "turn_0001_annotated.png" || ann["turn"] != 1.0 {
		t.Errorf("annotated record = %s", lines[1])
	}
	// A second run gets the next number.
	d2 := writeRun(t, base, Flat)
	if filepath.Base(d2.Path()) != "run_0002" {
		t.Errorf("second run = %s, want run_0002", d2.Path())
	}
}

func TestTurnDirsLayout(t *testing.T) {
	d := writeRun(t, t.TempDir(), TurnDirs)
	for _, f := range []string{"turn_0001/vlm_output.json", "turn_0001/screenshot_raw.png", "turn_0001/screenshot_annotated.png", "turn_0002/vlm_output.json", "turns.jsonl"} {
		if _, err := os.Stat(filepath.Join(d.Path(), f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	lines := readLines(t, filepath.Join(d.Path(), "turns.jsonl"))
	if len(lines) != 4 || !strings.Contains(lines[0], `"raw_png":"turn_0001/screenshot_raw.png"`) {
		t.Errorf("turns.jsonl = %q", lines)
	}
	// Legacy directories without turns.jsonl load too.
	os.Remove(filepath.Join(d.Path(), "turns.jsonl"))
	turns, err := Load(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || turns[0].Observation != "obs" || turns[1].AnnotatedPNG != filepath.Join("turn_0002", "screenshot_annotated.png") {
		t.Errorf("Load(turn dirs) = %+v", turns)
	}
}

func TestLoadAndPrint(t *testing.T) {
	d := writeRun(t, t.TempDir(), Flat)
	// A crash mid-write leaves a partial line; Load ignores it.
	f, _ := os.OpenFile(filepath.Join(d.Path(), "turns.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"turn":3,"stage":"ra`)
	f.Close()
	turns, err := Load(d.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || turns[0].RawPNG != "turn_0001_raw.png" || turns[0].AnnotatedPNG != "turn_0001_annotated.png" || turns[1].VLMText == "" {
		t.Fatalf("Load = %+v", turns)
	}
	var buf bytes.Buffer
	Print(&buf, d.Path(), turns)
	for _, want := range []string{"2 turns", "== turn 1", "observation: obs", "action 1: click x1=500 y1=500", "turn_0002_annotated.png"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("Print output lacks %q:\n%s", want, buf.String())
		}
	}
	srv := httptest.NewServer(Handler(d.Path()))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body := new(bytes.Buffer)
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(body.String(), `src="files/turn_0002_raw.png"`) {
		t.Errorf("review page lacks the images:\n%s", body)
	}
	resp, err = http.Get(srv.URL + "/files/turn_0001_raw.png")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("GET image: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if _, err := Load(t.TempDir()); err == nil {
		t.Errorf("Load(empty dir) succeeded, want an error")
	}
}

func TestParseLayout(t *testing.T) {
	for in, want := range map[string]Layout{"flat": Flat, "TURN_DIRS": TurnDirs, "": Flat} {
		if got, err := ParseLayout(in); err != nil || got != want {
			t.Errorf("ParseLayout(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseLayout("tree"); err == nil {
		t.Errorf("ParseLayout(tree) succeeded")
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"turn":1,"stage":"raw","observation":"x","actions":[],"raw_png":"a.png"}` + "\n" + `{"turn":1,"stage":"annotated","annotated_png":"b.png"}`))
	f.Add([]byte("garbage\n{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "turns.jsonl"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Load(dir)
	})
}

// Run logs hold a screenshot of every turn: only their owner may read
// them, whatever the umask allows.
func TestPrivateModes(t *testing.T) {
	for _, layout := range []Layout{Flat, TurnDirs} {
		base := filepath.Join(t.TempDir(), "runs")
		writeRun(t, base, layout)
		err := filepath.Walk(base, func(p string, fi os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			want := os.FileMode(0o600)
			if fi.IsDir() {
				want = 0o700
			}
			if got := fi.Mode().Perm(); got != want {
				t.Errorf("%s (layout %v): mode %04o, want %04o", p, layout, got, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
