// Package privacy is what acu never shows: the windows of
// ACU_EXCLUDE_WINDOWS. One rule decides it for every read of the desktop,
// pixels (the capture hub blacks the windows out) and structure and text
// alike (window lists, element maps, the relay's active window): a window
// is excluded when its title, class or instance, or an accessible
// element's application or window name, contains one of the words,
// case-insensitively.
package privacy

import "strings"

// Filter decides exclusion. The zero value and nil exclude nothing.
type Filter struct{ words []string }

// New returns the filter of the comma-separated setting's words (empty
// ones dropped).
func New(words []string) *Filter {
	f := &Filter{}
	for _, w := range words {
		if w = strings.ToLower(strings.TrimSpace(w)); w != "" {
			f.words = append(f.words, w)
		}
	}
	return f
}

// Empty reports whether f excludes nothing.
func (f *Filter) Empty() bool { return f == nil || len(f.words) == 0 }

// Words are the lower-cased words.
func (f *Filter) Words() []string {
	if f == nil {
		return nil
	}
	return f.words
}

// Excludes reports whether any of names (a window's title, class and
// instance; an element's application and window) contains a word.
func (f *Filter) Excludes(names ...string) bool {
	if f.Empty() {
		return false
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		n = strings.ToLower(n)
		for _, w := range f.words {
			if strings.Contains(n, w) {
				return true
			}
		}
	}
	return false
}
