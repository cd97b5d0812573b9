package runlog

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Layout is how a run directory stores its turns (the seed's LOG_LAYOUT).
type Layout string

const (
	// Flat keeps turn_0001_raw.png, turn_0001_annotated.png, ... and
	// turns.jsonl in the run directory.
	Flat Layout = "flat"
	// TurnDirs keeps turn_0001/vlm_output.json, screenshot_raw.png and
	// screenshot_annotated.png per turn (and turns.jsonl, pointing at them).
	TurnDirs Layout = "turn_dirs"
)

// ParseLayout checks a LOG_LAYOUT value.
func ParseLayout(s string) (Layout, error) {
	switch l := Layout(strings.ToLower(strings.TrimSpace(s))); l {
	case Flat, TurnDirs:
		return l, nil
	case "":
		return Flat, nil
	}
	return "", fmt.Errorf("log layout %q: want flat or turn_dirs", s)
}

// Options configures Create.
type Options struct {
	Base      string // RUNS_DIR: run_0001, run_0002, ... are made under it
	Layout    Layout // default Flat
	LogToFile bool   // open main.log in the run directory
	Now       func() time.Time
}

// Dir is one run directory being written. Its methods are safe for
// concurrent use.
type Dir struct {
	path   string
	layout Layout
	now    func() time.Time

	mu    sync.Mutex
	jsonl *os.File
	log   *os.File
}

// RawRecord is the first of a turn's two turns.jsonl records, written once
// the post-action screenshot is saved.
type RawRecord struct {
	Turn        int       `json:"turn"`
	Stage       string    `json:"stage"` // "raw"
	Observation string    `json:"observation"`
	BBoxes      any       `json:"bboxes"`
	Actions     any       `json:"actions"`
	RawPNG      string    `json:"raw_png"`
	Rejected    any       `json:"rejected,omitempty"`
	VLMText     string    `json:"vlm_text,omitempty"`
	At          time.Time `json:"at"`
}

// AnnotatedRecord is a turn's second record.
type AnnotatedRecord struct {
	Turn         int       `json:"turn"`
	Stage        string    `json:"stage"` // "annotated"
	AnnotatedPNG string    `json:"annotated_png"`
	At           time.Time `json:"at"`
}

// Create makes the next free run directory under opts.Base (run_0001, then
// run_0002, ...), opening turns.jsonl and, with LogToFile, main.log.
func Create(opts Options) (*Dir, error) {
	if opts.Layout == "" {
		opts.Layout = Flat
	}
	if _, err := ParseLayout(string(opts.Layout)); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(opts.Base, 0o700); err != nil {
		return nil, fmt.Errorf("create runs directory %s: %w", opts.Base, err)
	}
	n, err := lastRun(opts.Base)
	if err != nil {
		return nil, err
	}
	var path string
	for i := n + 1; ; i++ {
		path = filepath.Join(opts.Base, fmt.Sprintf("run_%04d", i))
		err := os.Mkdir(path, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create run directory %s: %w", path, err)
		}
	}
	d := &Dir{path: path, layout: opts.Layout, now: opts.Now}
	d.jsonl, err = os.OpenFile(filepath.Join(path, "turns.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open turns.jsonl in %s: %w", path, err)
	}
	if opts.LogToFile {
		d.log, err = os.OpenFile(filepath.Join(path, "main.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			d.jsonl.Close()
			return nil, fmt.Errorf("open main.log in %s: %w", path, err)
		}
	}
	return d, nil
}

func lastRun(base string) (int, error) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return 0, fmt.Errorf("list runs directory %s: %w", base, err)
	}
	last := 0
	for _, e := range ents {
		if n, ok := strings.CutPrefix(e.Name(), "run_"); ok && e.IsDir() {
			if v, err := strconv.Atoi(n); err == nil && v > last {
				last = v
			}
		}
	}
	return last, nil
}

// Path returns the run directory.
func (d *Dir) Path() string { return d.path }

// Layout returns the directory's layout.
func (d *Dir) Layout() Layout { return d.layout }

// Log returns main.log for a log handler, or nil when LogToFile is off.
func (d *Dir) Log() io.Writer {
	if d.log == nil {
		return nil
	}
	return d.log
}

// RawName and AnnotatedName return a turn's image paths relative to the run
// directory.
func (d *Dir) RawName(turn int) string {
	if d.layout == TurnDirs {
		return filepath.Join(turnDir(turn), "screenshot_raw.png")
	}
	return fmt.Sprintf("turn_%04d_raw.png", turn)
}

// AnnotatedName is the annotated image's path relative to the run directory.
func (d *Dir) AnnotatedName(turn int) string {
	if d.layout == TurnDirs {
		return filepath.Join(turnDir(turn), "screenshot_annotated.png")
	}
	return fmt.Sprintf("turn_%04d_annotated.png", turn)
}

func turnDir(turn int) string { return fmt.Sprintf("turn_%04d", turn) }

// WriteRaw saves the turn's post-action screenshot (PNG bytes) and appends
// its raw record; with TurnDirs it also writes turn_NNNN/vlm_output.json.
// rec.Turn, Stage, RawPNG and At are filled in.
func (d *Dir) WriteRaw(rec RawRecord, png []byte) error {
	rec.Stage, rec.RawPNG = "raw", d.RawName(rec.Turn)
	if rec.At.IsZero() {
		rec.At = d.now().UTC()
	}
	if d.layout == TurnDirs {
		if err := os.MkdirAll(filepath.Join(d.path, turnDir(rec.Turn)), 0o700); err != nil {
			return fmt.Errorf("create turn directory: %w", err)
		}
		out := map[string]any{"turn": rec.Turn, "vlm_text": rec.VLMText, "observation": rec.Observation,
			"bboxes": rec.BBoxes, "actions": rec.Actions}
		if rec.Rejected != nil {
			out["rejected"] = rec.Rejected
		}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fmt.Errorf("encode vlm_output.json: %w", err)
		}
		if err := writeFile(filepath.Join(d.path, turnDir(rec.Turn), "vlm_output.json"), b); err != nil {
			return err
		}
	}
	if err := writeFile(filepath.Join(d.path, rec.RawPNG), png); err != nil {
		return err
	}
	return d.append(rec)
}

// WriteAnnotated saves the annotated screenshot and appends its record.
func (d *Dir) WriteAnnotated(turn int, png []byte) error {
	rec := AnnotatedRecord{Turn: turn, Stage: "annotated", AnnotatedPNG: d.AnnotatedName(turn), At: d.now().UTC()}
	if d.layout == TurnDirs {
		if err := os.MkdirAll(filepath.Join(d.path, turnDir(turn)), 0o700); err != nil {
			return fmt.Errorf("create turn directory: %w", err)
		}
	}
	if err := writeFile(filepath.Join(d.path, rec.AnnotatedPNG), png); err != nil {
		return err
	}
	return d.append(rec)
}

func writeFile(path string, b []byte) error {
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func (d *Dir) append(rec any) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode turns.jsonl record: %w", err)
	}
	b = append(b, '\n')
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.jsonl == nil {
		return fmt.Errorf("append to turns.jsonl in %s: run directory closed", d.path)
	}
	if _, err := d.jsonl.Write(b); err != nil {
		return fmt.Errorf("append to turns.jsonl in %s: %w", d.path, err)
	}
	return nil
}

// Close closes turns.jsonl and main.log.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	if d.jsonl != nil {
		errs = append(errs, d.jsonl.Close())
		d.jsonl = nil
	}
	if d.log != nil {
		errs = append(errs, d.log.Close())
		d.log = nil
	}
	return errors.Join(errs...)
}

// Turn is one turn read back from a run directory.
type Turn struct {
	Turn         int             `json:"turn"`
	Observation  string          `json:"observation"`
	BBoxes       json.RawMessage `json:"bboxes,omitempty"`
	Actions      json.RawMessage `json:"actions,omitempty"`
	Rejected     json.RawMessage `json:"rejected,omitempty"`
	VLMText      string          `json:"vlm_text,omitempty"`
	RawPNG       string          `json:"raw_png,omitempty"`       // relative to the run directory
	AnnotatedPNG string          `json:"annotated_png,omitempty"` // relative to the run directory
	At           time.Time       `json:"at,omitzero"`
}

// Load reads a run directory of either layout: turns.jsonl when present,
// else the turn_NNNN directories of the legacy layout. Turns come back in
// order; a truncated last line (a crash mid-write) is ignored.
func Load(dir string) ([]Turn, error) {
	f, err := os.Open(filepath.Join(dir, "turns.jsonl"))
	if errors.Is(err, fs.ErrNotExist) {
		return loadTurnDirs(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", dir, err)
	}
	defer f.Close()
	byTurn := map[int]*Turn{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var rec struct {
			Turn
			Stage string `json:"stage"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			continue
		}
		t := byTurn[rec.Turn.Turn]
		if t == nil {
			t = &Turn{Turn: rec.Turn.Turn}
			byTurn[rec.Turn.Turn] = t
		}
		switch rec.Stage {
		case "raw":
			ann := t.AnnotatedPNG
			*t = rec.Turn
			t.AnnotatedPNG = ann
		case "annotated":
			t.AnnotatedPNG = rec.AnnotatedPNG
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, "turns.jsonl"), err)
	}
	if len(byTurn) == 0 {
		if ts, err := loadTurnDirs(dir); err == nil && len(ts) > 0 {
			return ts, nil
		}
	}
	return sorted(byTurn), nil
}

func sorted(m map[int]*Turn) []Turn {
	out := make([]Turn, 0, len(m))
	for _, t := range m {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Turn < out[j].Turn })
	return out
}

func loadTurnDirs(dir string) ([]Turn, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", dir, err)
	}
	byTurn := map[int]*Turn{}
	for _, e := range ents {
		n, ok := strings.CutPrefix(e.Name(), "turn_")
		if !ok || !e.IsDir() {
			continue
		}
		num, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		t := &Turn{Turn: num}
		if b, err := os.ReadFile(filepath.Join(dir, e.Name(), "vlm_output.json")); err == nil {
			_ = json.Unmarshal(b, t)
			t.Turn = num
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "screenshot_raw.png")); err == nil {
			t.RawPNG = filepath.Join(e.Name(), "screenshot_raw.png")
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "screenshot_annotated.png")); err == nil {
			t.AnnotatedPNG = filepath.Join(e.Name(), "screenshot_annotated.png")
		}
		byTurn[num] = t
	}
	if len(byTurn) == 0 {
		return nil, fmt.Errorf("read run %s: no turns.jsonl and no turn_NNNN directories: is this a run directory?", dir)
	}
	return sorted(byTurn), nil
}
