package a11yjudge

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Check is what a predicate asks of its subject.
type Check int

// Checks.
const (
	Open         Check = iota + 1 // a window or dialog is showing; a control exists and is showing
	Gone                          // no showing window or control matches
	Focused                       // a window is the active one; a control has the keyboard focus
	Enabled                       // a control is enabled (sensitive)
	Disabled                      // a control is present and not enabled
	Checked                       // a check box, radio or toggle is checked
	Unchecked                     // it is present and not checked
	Selected                      // an item, tab or row is selected
	Unselected                    // it is present and not selected
	Value                         // a progress bar's or slider's value compared with Number
	TextEquals                    // a text field's value is Text
	TextContains                  // a text field's value contains Text
	Rows                          // a list or table has a number of rows compared with Number
)

var checkNames = map[Check]string{
	Open: "open", Gone: "gone", Focused: "focused", Enabled: "enabled", Disabled: "disabled",
	Checked: "checked", Unchecked: "unchecked", Selected: "selected", Unselected: "unselected",
	Value: "value", TextEquals: "text equals", TextContains: "text contains", Rows: "rows",
}

func (c Check) String() string { return checkNames[c] }

// Cmp compares a value or a count with Number.
type Cmp int

// Comparisons.
const (
	AtLeast Cmp = iota + 1
	AtMost
	Above
	Below
	Exactly
)

var cmpNames = map[Cmp]string{AtLeast: ">=", AtMost: "<=", Above: ">", Below: "<", Exactly: "="}

func (c Cmp) String() string { return cmpNames[c] }

func (c Cmp) holds(x, n float64) bool {
	const eps = 1e-9
	switch c {
	case AtLeast:
		return x >= n-eps
	case AtMost:
		return x <= n+eps
	case Above:
		return x > n+eps
	case Below:
		return x < n-eps
	case Exactly:
		return x >= n-eps && x <= n+eps
	}
	return false
}

// Predicate is one structural condition.
type Predicate struct {
	// Noun is the subject's kind as written: "dialog", "button",
	// "progress bar".
	Noun string
	// Window is set when the subject is a window or dialog.
	Window bool
	// Name is the subject's name, lower case ("" for none: "a dialog",
	// "the progress bar"). Quoted names match controls exactly and window
	// titles as a part; unquoted ones (the Install button) match a name
	// that is or contains those words.
	Name   string
	Quoted bool
	// In is the enclosing window's title the subject must be in ("" any).
	In     string
	Check  Check
	Cmp    Cmp
	Number float64
	// Percent: Number is a percentage of the value's range.
	Percent bool
	Text    string
}

// String is the predicate in a canonical form, for explanations.
func (p Predicate) String() string {
	var b strings.Builder
	b.WriteString(p.Noun)
	if p.Name != "" {
		fmt.Fprintf(&b, " %q", p.Name)
	}
	if p.In != "" {
		fmt.Fprintf(&b, " in %q", p.In)
	}
	b.WriteString(" ")
	switch p.Check {
	case Value, Rows:
		fmt.Fprintf(&b, "%s %s %s", p.Check, p.Cmp, strconv.FormatFloat(p.Number, 'f', -1, 64))
		if p.Percent {
			b.WriteString("%")
		}
	case TextEquals, TextContains:
		fmt.Fprintf(&b, "%s %q", p.Check, p.Text)
	default:
		b.WriteString(p.Check.String())
	}
	return b.String()
}

// Part is one clause of a condition.
type Part struct {
	Text string     // the clause as written
	Pred *Predicate // nil: not structural (for the OCR or vision judge)
}

// Plan is a condition split into its clauses: every one must hold.
type Plan struct {
	Condition string
	Parts     []Part
}

// Structural reports whether any part is decided from the tree.
func (p Plan) Structural() bool {
	for _, pt := range p.Parts {
		if pt.Pred != nil {
			return true
		}
	}
	return false
}

// Predicates are the structural parts' predicates, in order.
func (p Plan) Predicates() []Predicate {
	var out []Predicate
	for _, pt := range p.Parts {
		if pt.Pred != nil {
			out = append(out, *pt.Pred)
		}
	}
	return out
}

// Rest is the condition the tree cannot decide: the other clauses joined
// with "and", in order; "" when every part is structural.
func (p Plan) Rest() string {
	var rest []string
	for _, pt := range p.Parts {
		if pt.Pred == nil {
			rest = append(rest, pt.Text)
		}
	}
	return strings.Join(rest, " and ")
}

// Parse splits condition into its clauses and maps each it can to a
// predicate. The whole condition is tried as one clause first, then its
// parts split on "and" outside quotes; a condition with no structural
// part is one part, as written, for the other judges. A condition with
// "or" outside quotes is never structural: the judges combine parts with
// "and" only.
func Parse(condition string) Plan {
	condition = strings.TrimSpace(condition)
	plan := Plan{Condition: condition}
	masked, _ := mask(condition)
	hasOr := orRE().MatchString(masked)
	clauses := splitAnd(condition)
	if p, ok := parseClause(condition); ok {
		// A name holding "and" ("the Save and Close button") is the
		// whole condition's unless the split on "and" gives conditions
		// that each stand alone.
		if !hasOr && hasWord(p.Name, "and") && len(clauses) > 1 && allClauses(clauses) {
			return splitPlan(plan, clauses)
		}
		plan.Parts = []Part{{Text: condition, Pred: &p}}
		return plan
	}
	if hasOr {
		plan.Parts = []Part{{Text: condition}}
		return plan
	}
	clauses = rejoin(clauses)
	if len(clauses) > 1 {
		if sp := splitPlan(plan, clauses); sp.Structural() {
			return sp
		}
	}
	plan.Parts = []Part{{Text: condition}}
	return plan
}

// splitPlan is plan with one part per clause.
func splitPlan(plan Plan, clauses []string) Plan {
	for _, c := range clauses {
		pt := Part{Text: c}
		if p, ok := parseClause(c); ok {
			pt.Pred = &p
		}
		plan.Parts = append(plan.Parts, pt)
	}
	return plan
}

// allClauses reports whether each clause is one the grammar claims.
func allClauses(clauses []string) bool {
	for _, c := range clauses {
		if _, ok := parseClause(c); !ok {
			return false
		}
	}
	return true
}

// rejoin puts back the "and" of a name the split cut: a clause the
// grammar does not claim ("the Save") is joined to the next when the two
// make one it claims ("the Save and Close button is enabled").
func rejoin(clauses []string) []string {
	out := make([]string, 0, len(clauses))
	for i := 0; i < len(clauses); i++ {
		c := clauses[i]
		for i+1 < len(clauses) {
			if _, ok := parseClause(c); ok {
				break
			}
			joined := c + " and " + clauses[i+1]
			if _, ok := parseClause(joined); !ok {
				break
			}
			c = joined
			i++
		}
		out = append(out, c)
	}
	return out
}

func hasWord(s, w string) bool { return slices.Contains(strings.Fields(s), w) }

// quote matches the quotes the OCR judge knows: "...", “...”, ‘...’,
// `...` and '...' (the last only after a space or at the start).
var quoteRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`"([^"]+)"|“([^”]+)”|‘([^’]+)’|` + "`([^`]+)`" + `|(?:^|[\s(])'([^']+)'`)
})

var orRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\bor\b`) })

// mask replaces each quoted phrase with a placeholder "\x01N\x02" and
// returns the phrases.
func mask(s string) (string, []string) {
	var (
		b      strings.Builder
		quoted []string
		last   int
	)
	for _, m := range quoteRE().FindAllStringSubmatchIndex(s, -1) {
		for g := 1; g < len(m)/2; g++ {
			if m[2*g] < 0 {
				continue
			}
			start := m[0]
			if g == 5 && s[start] != '\'' { // the space or parenthesis before '
				b.WriteString(s[last : start+1])
			} else {
				b.WriteString(s[last:start])
			}
			fmt.Fprintf(&b, "\x01%d\x02", len(quoted))
			quoted = append(quoted, s[m[2*g]:m[2*g+1]])
			last = m[1]
			break
		}
	}
	b.WriteString(s[last:])
	return b.String(), quoted
}

// splitAnd splits s on " and " (and ", and") outside quotes.
func splitAnd(s string) []string {
	masked, quoted := mask(s)
	parts := andRE().Split(masked, -1)
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		out = append(out, unmask(p, quoted))
	}
	return out
}

var andRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\s*,?\s+and\s+`) })

var placeholderRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x01(\\d+)\x02") })

// unmask puts the quoted phrases back, in double quotes.
func unmask(s string, quoted []string) string {
	return placeholderRE().ReplaceAllStringFunc(s, func(m string) string {
		i, _ := strconv.Atoi(m[1 : len(m)-1])
		return `"` + quoted[i] + `"`
	})
}

// noun is one kind of subject the grammar names.
type noun struct {
	words  []string // as written, singular
	roles  []string // AT-SPI role names it accepts
	window bool
	kind   string // what a clause about it may ask: "window", "control", "value", "text", "list"
}

// nouns is the grammar's vocabulary of subjects. Roles are AT-SPI role
// names, as internal/elements maps them to element types.
var nouns = []noun{
	{[]string{"window", "app window", "application window"}, windowRoles, true, "window"},
	{[]string{"dialog", "dialog box", "dialogue", "popup", "pop-up", "message box", "alert"}, []string{"dialog", "alert", "file chooser"}, true, "window"},
	{[]string{"button", "push button", "toggle button"}, []string{"push button", "toggle button", "button"}, false, "control"},
	{[]string{"checkbox", "check box", "check button", "toggle", "switch", "tick box"}, []string{"check box", "check menu item", "toggle button", "switch"}, false, "control"},
	{[]string{"radio button", "radio", "option button"}, []string{"radio button", "radio menu item"}, false, "control"},
	{[]string{"link", "hyperlink"}, []string{"link"}, false, "control"},
	{[]string{"menu item", "menuitem"}, []string{"menu item", "check menu item", "radio menu item"}, false, "control"},
	{[]string{"menu"}, []string{"menu"}, false, "control"},
	{[]string{"tab", "page tab"}, []string{"page tab"}, false, "control"},
	{[]string{"combo box", "combobox", "dropdown", "drop-down", "drop down", "select box"}, []string{"combo box"}, false, "control"},
	{[]string{"label", "heading"}, []string{"label", "heading", "static", "caption"}, false, "control"},
	{[]string{"image", "icon"}, []string{"image", "icon"}, false, "control"},
	{[]string{"status bar", "statusbar"}, []string{"status bar"}, false, "control"},
	{[]string{"row", "list item", "item", "entry row", "tree item", "table row"}, []string{"list item", "table row", "tree item"}, false, "control"},
	{[]string{"progress bar", "progressbar", "progress", "progress indicator", "level bar", "meter"}, []string{"progress bar", "level bar", "meter"}, false, "value"},
	{[]string{"slider", "scale"}, []string{"slider"}, false, "value"},
	{[]string{"spin button", "spinbox", "spin box"}, []string{"spin button"}, false, "value"},
	{[]string{"text field", "field", "text box", "textbox", "entry", "input", "input field", "edit box", "search box", "search field", "password field", "text area", "text input"}, []string{"text", "entry", "password text", "spin button", "terminal"}, false, "text"},
	{[]string{"list", "list box", "listbox", "table", "tree", "tree view", "grid"}, []string{"list", "list box", "table", "tree", "tree table", "grid"}, false, "list"},
}

var windowRoles = []string{"frame", "window", "dialog", "alert", "file chooser"}

func nounOf(word string) (noun, bool) {
	for _, n := range nouns {
		if slices.Contains(n.words, word) {
			return n, true
		}
	}
	return noun{}, false
}

// stopWords may not be part of an unquoted name: a phrase with one is no
// "the <Name> <noun>" the grammar claims.
var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "be": true, "been": true,
	"has": true, "have": true, "of": true, "with": true, "that": true, "which": true, "in": true, "on": true,
	"at": true, "to": true, "for": true, "from": true, "and": true, "or": true, "not": true, "no": true,
	"any": true, "all": true, "some": true, "this": true, "these": true, "those": true, "it": true,
	"its": true, "there": true, "by": true, "my": true, "your": true, "our": true, "their": true,
	"when": true, "until": true, "if": true, "then": true, "every": true, "each": true, "both": true,
}

// joiners may stand between two words of an unquoted name: "the Save
// and Close button", "the Terms of Service dialog".
var joiners = map[string]bool{"and": true, "of": true}

// notOwners are words after which "of" names a property or a part, not
// part of a name: "the value of Volume slider", "the list of files".
var notOwners = map[string]bool{
	"value": true, "text": true, "title": true, "name": true, "label": true, "state": true, "content": true,
	"contents": true, "number": true, "count": true, "top": true, "bottom": true, "end": true, "rest": true, "part": true,
}

// nameWords reports whether words make an unquoted name: no stop word but
// a joiner between two words; at most four words besides joiners; no
// noun of the grammar beside an "and" (that is two subjects: "the Save
// dialog and Export dialog"); no "of" after a property word.
func nameWords(words []string) bool {
	n := 0
	for i, w := range words {
		if strings.Contains(w, "\x01") {
			return false
		}
		if joiners[w] {
			if i == 0 || i == len(words)-1 || joiners[words[i-1]] {
				return false
			}
			if w == "and" && (isNounWord(words[i-1]) || isNounWord(words[i+1])) {
				return false
			}
			if w == "of" && (notOwners[words[i-1]] || isNounWord(words[i-1])) {
				return false
			}
			continue
		}
		if stopWords[w] {
			return false
		}
		n++
	}
	return n <= 4
}

// isNounWord reports whether w is a word of one of the grammar's nouns.
func isNounWord(w string) bool {
	for _, n := range nouns {
		for _, nw := range n.words {
			if slices.Contains(strings.Fields(nw), w) {
				return true
			}
		}
	}
	return false
}

// The grammar's regular expressions work on a lower-cased clause whose
// quoted phrases are placeholders (\x01N\x02).
var grammar = sync.OnceValue(func() *clauseGrammar {
	var words []string
	for _, n := range nouns {
		words = append(words, n.words...)
	}
	// Longest first, so "progress bar" wins over "progress".
	slices.SortFunc(words, func(a, b string) int { return len(b) - len(a) })
	for i, w := range words {
		words[i] = regexp.QuoteMeta(w)
	}
	nounAlt := `(?P<noun>` + strings.Join(words, "|") + `)`
	q := "\x01(?P<%s>\\d+)\x02"
	// Up to four words, and up to five with "and" or "of" between two
	// of them (nameWords checks).
	w := `[\p{L}\p{N}][\p{L}\p{N}.+#&'_-]*`
	name := `(?P<name>` + w + `(?:\s+` + w + `){0,3}|` + w + `(?:\s+` + w + `){0,2}\s+(?:and|of)\s+` + w + `(?:\s+` + w + `){0,2})`
	in := `(?:\s+(?:in|inside|within|on)\s+(?:the\s+)?(?:(?:window|dialog)\s+` + fmt.Sprintf(q, "inq") + `|` + fmt.Sprintf(q, "inq2") + `\s+(?:window|dialog)|(?P<inname>[\p{L}\p{N}][\p{L}\p{N}.+_-]*(?:\s+[\p{L}\p{N}][\p{L}\p{N}.+_-]*){0,2})\s+(?:window|dialog)))?`
	art := `(?:(?:the|a|an)\s+)?`
	subjects := []string{
		// the button "Install", the dialog titled "Export"
		art + nounAlt + `\s+(?:(?:named|called|titled|labelled|labeled|entitled)\s+|with\s+(?:the\s+)?(?:title|name|label|text)\s+)?` + fmt.Sprintf(q, "q"),
		// the "Install" button
		art + fmt.Sprintf(q, "q") + `\s+` + nounAlt,
		// the Install button, the Save As dialog
		art + `(?:` + name + `\s+)?` + nounAlt,
	}
	g := &clauseGrammar{}
	for _, s := range subjects {
		subj := s + in
		for _, t := range tails {
			g.rules = append(g.rules, rule{re: regexp.MustCompile(`^` + subj + `\s+(?:` + t.re + `)$`), tail: t})
			if t.prefix != "" {
				g.rules = append(g.rules, rule{re: regexp.MustCompile(`^` + t.prefix + `\s+` + subj + `$`), tail: t})
			}
		}
	}
	return g
})

type clauseGrammar struct{ rules []rule }

type rule struct {
	re   *regexp.Regexp
	tail tail
}

// tail is what a clause says of its subject: a regular expression after
// the subject (and, for some, a form before it: "there is a ..."), the
// check, and the kinds of subject it applies to.
type tail struct {
	re     string
	prefix string
	check  Check
	kinds  []string
	// cmp, number: set from the match's "cmp", "num" and "pct" groups
	// when the check compares.
}

const (
	isRE    = `(?:is|are|has been|have been|was|becomes|has become|gets|is now|are now)`
	notRE   = `(?:is not|isn't|are not|aren't|is no longer|are no longer|was not)`
	showRE  = `(?:open|opened|shown|showing|visible|displayed|present|up|on screen|there|on the screen)`
	cmpRE   = `(?P<cmp>reaches|reached|hits|hit|gets to|got to|is at|is at least|is at most|is over|is above|is more than|is greater than|exceeds|is below|is under|is less than|is lower than|equals|is equal to|is|=|>=|<=|>|<)`
	numRE   = `(?P<num>\d+(?:\.\d+)?)\s*(?P<pct>%|percent|per cent)?`
	countRE = `(?P<cmp>at least|more than|over|at most|fewer than|less than|under|exactly|only)?\s*(?P<num>\d+)\s+(?:rows?|items?|entries|entry|lines?|elements?|children|results?|files?)`
)

var tails = []tail{
	{re: isRE + `\s+` + showRE + `|(?:opens|appears|shows up|pops up|has opened|has appeared|is opened|comes up|exists|is there)`, prefix: `there\s+is`, check: Open, kinds: []string{"window", "control", "value", "text", "list"}},
	{re: isRE + `\s+(?:gone|closed|hidden|dismissed|invisible)|` + notRE + `\s+` + showRE + `|(?:closes|disappears|goes away|went away|has closed|has disappeared|vanishes|has vanished|has gone|does not exist|doesn't exist|no longer exists)`, prefix: `there\s+is\s+no`, check: Gone, kinds: []string{"window", "control", "value", "text", "list"}},
	{re: isRE + `\s+(?:focused|in focus|in front|the active window|active|in the foreground)|(?:has|gets|got|receives|gains) (?:the )?(?:keyboard )?focus`, check: Focused, kinds: []string{"window", "control", "value", "text", "list"}},
	{re: isRE + `\s+(?:enabled|sensitive|clickable|available|active)|` + isRE + `\s+(?:not|no longer)\s+(?:disabled|greyed out|grayed out|insensitive)`, check: Enabled, kinds: []string{"control", "value", "text", "list"}},
	{re: isRE + `\s+(?:disabled|insensitive|greyed out|grayed out|unavailable|not clickable|inactive)|` + notRE + `\s+(?:enabled|sensitive|clickable|available)`, check: Disabled, kinds: []string{"control", "value", "text", "list"}},
	{re: isRE + `\s+(?:checked|ticked|toggled on|switched on|on|pressed)`, check: Checked, kinds: []string{"control"}},
	{re: isRE + `\s+(?:unchecked|unticked|cleared|toggled off|switched off|off)|` + notRE + `\s+(?:checked|ticked|pressed)`, check: Unchecked, kinds: []string{"control"}},
	{re: isRE + `\s+(?:selected|highlighted|chosen|current)`, check: Selected, kinds: []string{"control"}},
	{re: isRE + `\s+(?:unselected|deselected)|` + notRE + `\s+(?:selected|highlighted)`, check: Unselected, kinds: []string{"control"}},
	{re: isRE + `\s+(?:full|complete|completed|done|finished)`, check: Value, kinds: []string{"value"}},
	{re: `(?:value\s+)?` + cmpRE + `\s+` + numRE, check: Value, kinds: []string{"value"}},
	{re: `(?:'s\s+)?(?:value\s+|text\s+)?(?P<op>contains|includes|has|shows|displays)\s+(?:the\s+text\s+)?` + "\x01(?P<t>\\d+)\x02", check: TextContains, kinds: []string{"text"}},
	{re: `(?:'s\s+)?(?:value\s+|text\s+)?(?P<op>is|equals|reads|says|is set to|has the value|has the text)\s+` + "\x01(?P<t>\\d+)\x02", check: TextEquals, kinds: []string{"text"}},
	{re: isRE + `\s+(?:empty|blank|cleared)|has no text`, check: TextEquals, kinds: []string{"text"}},
	{re: `(?:has|contains|shows|lists)\s+` + countRE, check: Rows, kinds: []string{"list"}},
	{re: isRE + `\s+empty|has no (?:rows|items|entries)`, check: Rows, kinds: []string{"list"}},
}

var fullRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\b(?:full|complete|completed|done|finished)$`)
})

// leadRE strips what people put before a condition: "wait until", "until".
var leadRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(?:wait|waiting)\s+(?:until|for|till)\s+|until\s+|when\s+|once\s+)`)
})

// parseClause maps one clause to a predicate, or reports false.
func parseClause(clause string) (Predicate, bool) {
	masked, quoted := mask(strings.TrimSpace(clause))
	s := strings.ToLower(masked)
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimRight(s, ".!;")
	s = strings.TrimSpace(leadRE().ReplaceAllString(s, ""))
	s = strings.ReplaceAll(s, "’", "'")
	s = strings.ReplaceAll(s, "'s value", " value")
	s = strings.ReplaceAll(s, "'s text", " text")
	if s == "" {
		return Predicate{}, false
	}
	for _, r := range grammar().rules {
		m := r.re.FindStringSubmatch(s)
		if m == nil {
			continue
		}
		p, ok := build(r, m, quoted)
		if ok {
			return p, true
		}
	}
	return Predicate{}, false
}

func build(r rule, m []string, quoted []string) (Predicate, bool) {
	group := func(name string) string {
		if i := r.re.SubexpIndex(name); i >= 0 && i < len(m) {
			return m[i]
		}
		return ""
	}
	qtext := func(name string) (string, bool) {
		g := group(name)
		if g == "" {
			return "", false
		}
		i, err := strconv.Atoi(g)
		if err != nil || i >= len(quoted) {
			return "", false
		}
		return quoted[i], true
	}
	n, ok := nounOf(group("noun"))
	if !ok || !slices.Contains(r.tail.kinds, n.kind) {
		return Predicate{}, false
	}
	p := Predicate{Noun: group("noun"), Window: n.window, Check: r.tail.check}
	if q, ok := qtext("q"); ok {
		p.Name, p.Quoted = strings.ToLower(strings.TrimSpace(q)), true
	} else if nm := group("name"); nm != "" {
		if !nameWords(strings.Fields(nm)) {
			return Predicate{}, false
		}
		p.Name = nm
	}
	if q, ok := qtext("inq"); ok {
		p.In = strings.ToLower(q)
	} else if q, ok := qtext("inq2"); ok {
		p.In = strings.ToLower(q)
	} else if nm := group("inname"); nm != "" {
		for _, w := range strings.Fields(nm) {
			if stopWords[w] {
				return Predicate{}, false
			}
		}
		p.In = nm
	}
	if p.Window && p.In != "" {
		return Predicate{}, false // a window in a window: not a phrase the grammar knows
	}
	// A nameless window is only "a dialog": "the window is open" names none.
	if p.Window && p.Name == "" && n.words[0] == "window" {
		return Predicate{}, false
	}
	// A nameless control is claimed only where the kind says which one:
	// a value, a text field, a list (the only one of its kind on screen).
	if !p.Window && p.Name == "" && n.kind == "control" {
		return Predicate{}, false
	}
	switch r.tail.check {
	case Value:
		if fullRE().MatchString(m[0]) && group("num") == "" {
			p.Cmp, p.Number, p.Percent = AtLeast, 100, true
			break
		}
		v, err := strconv.ParseFloat(group("num"), 64)
		if err != nil {
			return Predicate{}, false
		}
		p.Number, p.Percent = v, group("pct") != ""
		switch group("cmp") {
		case "reaches", "reached", "hits", "hit", "gets to", "got to", "is at least", ">=":
			p.Cmp = AtLeast
		case "is at most", "<=":
			p.Cmp = AtMost
		case "is over", "is above", "is more than", "is greater than", "exceeds", ">":
			p.Cmp = Above
		case "is below", "is under", "is less than", "is lower than", "<":
			p.Cmp = Below
		default: // is, is at, equals, =, of
			p.Cmp = Exactly
		}
		if p.Percent && (p.Number < 0 || p.Number > 100) {
			return Predicate{}, false
		}
	case TextEquals, TextContains:
		if t, ok := qtext("t"); ok {
			p.Text = t
		} else {
			p.Text = "" // is empty
		}
	case Rows:
		if group("num") == "" { // is empty
			p.Cmp, p.Number = Exactly, 0
			break
		}
		v, err := strconv.Atoi(group("num"))
		if err != nil {
			return Predicate{}, false
		}
		p.Number = float64(v)
		switch group("cmp") {
		case "at least":
			p.Cmp = AtLeast
		case "more than", "over":
			p.Cmp = Above
		case "at most":
			p.Cmp = AtMost
		case "fewer than", "less than", "under":
			p.Cmp = Below
		default:
			p.Cmp = Exactly
		}
	}
	return p, true
}

// textWords are the words a condition about quoted text only is made of,
// besides its quotes: `"Done" is visible`, `the terminal shows "OK" and
// "Saved"`, `"Loading" is gone`.
var textWords = map[string]bool{
	"the": true, "a": true, "screen": true, "terminal": true, "window": true, "page": true, "app": true,
	"dialog": true, "editor": true, "browser": true, "shows": true, "show": true, "displays": true,
	"contains": true, "reads": true, "says": true, "is": true, "are": true, "visible": true, "shown": true,
	"displayed": true, "on": true, "present": true, "there": true, "gone": true, "no": true, "longer": true,
	"not": true, "hidden": true, "absent": true, "appears": true, "appear": true, "disappears": true,
	"disappear": true, "disappeared": true, "vanished": true, "and": true, "text": true, "both": true,
	"now": true, "has": true, "have": true, "been": true, "was": true,
}

// TextOnly reports whether condition is about quoted text only: a quoted
// phrase, and besides the quotes nothing but the words of "is visible",
// "the terminal shows", "is gone". The OCR judge decides such a condition
// fully; anything else in it (a colour, a layout) needs a vision model.
func TextOnly(condition string) bool {
	masked, quoted := mask(condition)
	if len(quoted) == 0 {
		return false
	}
	s := placeholderRE().ReplaceAllString(strings.ToLower(masked), " ")
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '\'') }) {
		if !textWords[w] {
			return false
		}
	}
	return true
}
