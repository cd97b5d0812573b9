package main

import (
	"os"
	"strings"
	"testing"
)

func TestManifestDecodesStrictly(t *testing.T) {
	data, err := os.ReadFile("../kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n, err := check(data)
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Fatalf("decoded %d objects, want the 2 StatefulSets and 2 Services", n)
	}
}

func TestCheckRefuses(t *testing.T) {
	data, err := os.ReadFile("../kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"misspelt field": strings.Replace(string(data), "containerPort", "containrPort", 1),
		"wrong type":     strings.Replace(string(data), "containerPort: 18790", "containerPort: api", 1),
		"unknown kind":   string(data) + "\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n",
	} {
		if bad == string(data) {
			t.Fatalf("%s: the replacement did not apply; update the test", name)
		}
		if _, err := check([]byte(bad)); err == nil {
			t.Errorf("%s: check accepted it", name)
		}
	}
}
