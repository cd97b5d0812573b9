package notify

import (
	"strings"
	"testing"
)

func TestBuild(t *testing.T) {
	ns, err := Build([]string{"webhook", "exec"}, ExecOptions{CLI: "sh"}, WebhookOptions{URL: "http://127.0.0.1:18789/hooks/wake"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 2 || ns[0].Name() != "webhook" || ns[1].Name() != "exec" {
		t.Fatalf("Build() = %v, want webhook then exec", ns)
	}
	if err := Check(ns); err != nil {
		t.Errorf("Check() = %v, want nil (sh exists)", err)
	}
	if ns, err := Build(nil, ExecOptions{}, WebhookOptions{}); err != nil || len(ns) != 0 {
		t.Errorf("Build(nil) = %v, %v; want no notifiers", ns, err)
	}
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{[]string{"pager"}, `unknown notifier "pager"`},
		{[]string{"exec", "exec"}, "listed twice"},
		{[]string{"webhook"}, "not an absolute http"},
	} {
		if _, err := Build(tt.names, ExecOptions{}, WebhookOptions{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Build(%q) error = %v, want %q", tt.names, err, tt.want)
		}
	}
}

func TestCheckReportsMissingProgram(t *testing.T) {
	ns, err := Build([]string{"exec"}, ExecOptions{CLI: "acu-test-no-openclaw"}, WebhookOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(ns); err == nil || !strings.Contains(err.Error(), `"acu-test-no-openclaw" not found`) {
		t.Errorf("Check() = %v, want openclaw reported missing", err)
	}
}
