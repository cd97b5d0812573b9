package elements

import (
	"fmt"
	"image"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acu-dev/acu/internal/atspi"
	"github.com/acu-dev/acu/internal/frame"
)

// Source says where an element was found.
type Source uint8

// Element sources.
const (
	FromTree Source = 1 << iota // the accessibility tree
	FromOCR                     // Tesseract
	FromBoth = FromTree | FromOCR
)

// MarshalText makes sources read "tree", "ocr" or "tree+ocr" in JSON.
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

func (s Source) String() string {
	switch s {
	case FromTree:
		return "tree"
	case FromOCR:
		return "ocr"
	case FromBoth:
		return "tree+ocr"
	}
	return "none"
}

// Element types: the vocabulary of the map's text form and of ids.
const (
	TypeButton   = "button"
	TypeInput    = "input"
	TypeCheckbox = "checkbox"
	TypeRadio    = "radio"
	TypeLink     = "link"
	TypeMenu     = "menu"
	TypeMenuItem = "menuitem"
	TypeTab      = "tab"
	TypeCombo    = "combo"
	TypeItem     = "item"
	TypeSlider   = "slider"
	TypeLabel    = "label"
	TypeWindow   = "window"
	TypeImage    = "image"
	TypeText     = "text" // OCR text the tree does not expose
	TypeControl  = "control"
)

// idPrefix maps each type to its id prefix (btn_save, txt_search_2).
var idPrefix = map[string]string{
	TypeButton: "btn", TypeInput: "txt", TypeCheckbox: "chk", TypeRadio: "rad", TypeLink: "lnk",
	TypeMenu: "menu", TypeMenuItem: "mi", TypeTab: "tab", TypeCombo: "cmb", TypeItem: "item",
	TypeSlider: "sld", TypeLabel: "lbl", TypeWindow: "win", TypeImage: "img", TypeText: "ocr",
	TypeControl: "ctl",
}

// roleType maps AT-SPI role names to element types. Roles not listed are
// kept only when they offer an action or editable text.
var roleType = map[string]string{
	"push button": TypeButton, "toggle button": TypeButton, "button": TypeButton,
	"text": TypeInput, "entry": TypeInput, "password text": TypeInput, "spin button": TypeInput,
	"check box": TypeCheckbox, "check menu item": TypeCheckbox, "switch": TypeCheckbox,
	"radio button": TypeRadio, "radio menu item": TypeRadio,
	"link": TypeLink,
	"menu": TypeMenu, "menu bar": TypeMenu,
	"menu item": TypeMenuItem,
	"page tab":  TypeTab,
	"combo box": TypeCombo,
	"list item": TypeItem, "table cell": TypeItem, "tree item": TypeItem,
	"slider": TypeSlider, "scroll bar": TypeSlider,
	"label": TypeLabel, "static": TypeLabel, "heading": TypeLabel, "paragraph": TypeLabel,
	"caption": TypeLabel, "status bar": TypeLabel, "tool tip": TypeLabel,
	"frame": TypeWindow, "dialog": TypeWindow, "window": TypeWindow, "alert": TypeWindow,
	"file chooser": TypeWindow,
	"image":        TypeImage, "icon": TypeImage,
}

// Element is one thing on screen the orchestrator can read or act on.
type Element struct {
	ID     string          `json:"id"`               // stable semantic id: btn_ok, txt_search_2
	Type   string          `json:"type"`             // TypeButton, TypeInput, ...
	Text   string          `json:"text,omitempty"`   // accessible name, or recognized text
	Value  string          `json:"value,omitempty"`  // content of editable text
	Desc   string          `json:"desc,omitempty"`   // accessible description
	Role   string          `json:"role,omitempty"`   // AT-SPI role name; empty for OCR text
	Box    image.Rectangle `json:"box"`              // screen pixels
	App    string          `json:"app,omitempty"`    // application name (tree elements)
	Window string          `json:"window,omitempty"` // enclosing window's name (tree elements)

	Clickable bool `json:"clickable,omitempty"`
	Editable  bool `json:"editable,omitempty"`
	Focused   bool `json:"focused,omitempty"`
	Enabled   bool `json:"enabled,omitempty"`
	Checked   bool `json:"checked,omitempty"`
	Showing   bool `json:"showing,omitempty"`
	Active    bool `json:"active,omitempty"` // the active window (windows only)

	Actions []string     `json:"actions,omitempty"` // AT-SPI action names, in index order
	Source  Source       `json:"source"`            // tree, OCR or both
	Conf    float64      `json:"conf,omitempty"`    // OCR confidence 0..100 (OCR and merged elements)
	Ref     atspi.Ref    `json:"-"`                 // the accessible object (zero for OCR text)
	ifaces  atspi.Ifaces // AT-SPI interfaces offered
}

// Center returns the centre of the element's box.
func (e *Element) Center() image.Point {
	return image.Pt((e.Box.Min.X+e.Box.Max.X)/2, (e.Box.Min.Y+e.Box.Max.Y)/2)
}

// HasEditableText reports whether text can be set through AT-SPI.
func (e *Element) HasEditableText() bool { return e.ifaces.Has(atspi.IfEditableText) }

// Map is the element map of one iteration.
type Map struct {
	Elements  []Element // showing and on-screen first, then reading order
	Iteration int       // 1 for the first Extract of an Extractor
	Screen    image.Rectangle
	Frame     *frame.Frame // the settled frame the map was read with (nil without capture)
	Settled   bool         // two identical consecutive frames were seen
	At        time.Time
	Timings   Timings
	// Dropped counts elements left out by the cap.
	Dropped int
	// TreeErr is set when the accessibility tree could not be read and the
	// map holds OCR text only.
	TreeErr error
	index   map[string]int
}

// Timings says where an extraction spent its time.
type Timings struct {
	Settle, Tree, OCR, Total time.Duration
	TreeNodes                int // accessible objects read
}

// With returns a copy of m in which e replaces the element of its id (one
// looked at again since m was read), for acting on it without changing m,
// which others may share. m must hold e's id.
func (m *Map) With(e Element) *Map {
	if _, ok := m.Get(e.ID); !ok {
		return m
	}
	c := *m
	c.Elements = append([]Element(nil), m.Elements...)
	c.Elements[m.index[e.ID]] = e
	return &c
}

// Get returns the element with id. Maps from Extract are indexed and safe
// to share; a Map built by hand is indexed on its first Get, so call Get
// once before sharing it.
func (m *Map) Get(id string) (*Element, bool) {
	if m == nil {
		return nil, false
	}
	if m.index == nil {
		m.reindex()
	}
	i, ok := m.index[id]
	if !ok {
		return nil, false
	}
	return &m.Elements[i], true
}

func (m *Map) reindex() {
	m.index = make(map[string]int, len(m.Elements))
	for i := range m.Elements {
		m.index[m.Elements[i].ID] = i
	}
}

// Text renders the map compactly for a prompt: one element a line, grouped
// by window, with the centre and size in screen pixels and the flags that
// matter.
//
//	# zenity: Acu Entry
//	[win_acu_entry] window "Acu Entry" (640,359 194x119) active
//	[lbl_your_name] label "Your name:" (640,321 168x17)
//	[txt_1] input value="" (640,353 168x34) focused editable
//	[btn_ok] button "OK" (687,395 86x34) click
func (m *Map) Text() string {
	if m == nil || len(m.Elements) == 0 {
		return "(no elements)\n"
	}
	var b strings.Builder
	b.Grow(len(m.Elements) * 64)
	group := "\x00"
	for i := range m.Elements {
		e := &m.Elements[i]
		g := ""
		if e.Source&FromTree != 0 {
			g = e.App
			if e.Window != "" {
				g += ": " + e.Window
			}
		}
		if g != group {
			group = g
			if g == "" {
				b.WriteString("# screen text (OCR)\n")
			} else {
				b.WriteString("# ")
				b.WriteString(g)
				b.WriteByte('\n')
			}
		}
		writeElement(&b, e)
		b.WriteByte('\n')
	}
	if m.Dropped > 0 {
		fmt.Fprintf(&b, "(%d more elements not shown)\n", m.Dropped)
	}
	return b.String()
}

// String renders one element as in Map.Text.
func (e *Element) String() string {
	var b strings.Builder
	writeElement(&b, e)
	return b.String()
}

func writeElement(b *strings.Builder, e *Element) {
	b.WriteByte('[')
	b.WriteString(e.ID)
	b.WriteString("] ")
	b.WriteString(e.Type)
	if e.Text != "" {
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(clip(e.Text, 60)))
	}
	if e.Editable || e.Value != "" {
		b.WriteString(" value=")
		b.WriteString(strconv.Quote(clip(e.Value, 60)))
	}
	c := e.Center()
	fmt.Fprintf(b, " (%d,%d %dx%d)", c.X, c.Y, e.Box.Dx(), e.Box.Dy())
	if e.Clickable {
		b.WriteString(" click")
	}
	if e.Editable {
		b.WriteString(" editable")
	}
	if e.Focused {
		b.WriteString(" focused")
	}
	if e.Checked {
		b.WriteString(" checked")
	}
	if e.Active {
		b.WriteString(" active")
	}
	if e.Source&FromTree != 0 && !e.Enabled {
		b.WriteString(" disabled")
	}
	if e.Source&FromTree != 0 && !e.Showing {
		b.WriteString(" hidden")
	}
	if e.Desc != "" && e.Desc != e.Text {
		b.WriteString(" desc=")
		b.WriteString(strconv.Quote(clip(e.Desc, 40)))
	}
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// fromNode converts an accessible object into an element; ok is false for
// objects that are neither readable nor actionable (unnamed containers,
// applications).
func fromNode(n *atspi.Node) (Element, bool) {
	if n.Role == "application" || n.Bounds.Empty() && n.Depth > 0 && !n.States.Has(atspi.StateShowing) {
		return Element{}, false
	}
	typ, known := roleType[n.Role]
	editable := n.Ifaces.Has(atspi.IfEditableText) && n.States.Has(atspi.StateEditable)
	actionable := len(n.Actions) > 0
	if !known {
		switch {
		case editable:
			typ = TypeInput
		case actionable:
			typ = TypeControl
		default:
			return Element{}, false
		}
	}
	text := strings.TrimSpace(n.Name)
	value := ""
	if editable || typ == TypeInput {
		value = n.Text
	} else if text == "" {
		text = strings.TrimSpace(n.Text)
	}
	if text == "" && !editable && !actionable && typ != TypeInput {
		return Element{}, false // unnamed, inert: layout containers, decorations
	}
	st := n.States
	e := Element{
		Type:      typ,
		Text:      text,
		Value:     value,
		Desc:      strings.TrimSpace(n.Description),
		Role:      n.Role,
		Box:       n.Bounds,
		App:       n.App,
		Window:    n.Window,
		Clickable: actionable || typ == TypeButton || typ == TypeCheckbox || typ == TypeRadio || typ == TypeLink || typ == TypeMenuItem || typ == TypeTab,
		Editable:  editable,
		Focused:   st.Has(atspi.StateFocused),
		Enabled:   st.Has(atspi.StateEnabled) || st.Has(atspi.StateSensitive),
		Checked:   st.Has(atspi.StateChecked),
		Showing:   st.Has(atspi.StateShowing),
		Actions:   n.Actions,
		Source:    FromTree,
		Ref:       n.Ref,
		ifaces:    n.Ifaces,
	}
	if typ == TypeWindow {
		e.Clickable = false
		e.Active = st.Has(atspi.StateActive)
	}
	return e, true
}

// Only returns the part of m in the window named window (its window
// element and the elements whose Window it is), for an agent that works in
// that window; ids are m's, so a step planned on it runs on m.
func (m *Map) Only(window string) *Map {
	out := &Map{Iteration: m.Iteration, Screen: m.Screen, Frame: m.Frame, Settled: m.Settled, At: m.At, TreeErr: m.TreeErr}
	for _, e := range m.Elements {
		if e.Window == window || (e.Type == TypeWindow && e.Text == window) {
			out.Elements = append(out.Elements, e)
		}
	}
	return out
}
