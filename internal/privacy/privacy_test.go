package privacy

import "testing"

func TestExcludes(t *testing.T) {
	f := New([]string{" Acu Secret ", "", "KEEPASS"})
	for _, c := range []struct {
		names []string
		want  bool
	}{
		{[]string{"acu secret - notes"}, true},
		{[]string{"notes", "KeePassXC"}, true},
		{[]string{"notes", "xterm", ""}, false},
		{nil, false},
	} {
		if got := f.Excludes(c.names...); got != c.want {
			t.Errorf("Excludes(%q) = %v, want %v", c.names, got, c.want)
		}
	}
	var none *Filter
	if none.Excludes("anything") || !none.Empty() || !New(nil).Empty() {
		t.Errorf("a nil or empty filter excludes")
	}
}
