// Command k8scheck decodes every object of a Kubernetes manifest strictly
// into Kubernetes' own Go types: an unknown or misspelt field, a wrong type
// or an unknown kind fails it. It is what scripts/container-test.sh runs on
// container/kubernetes.yaml, since no cluster can be started on the
// project's machines to apply it. It is its own module so that acu's go.mod
// does not carry Kubernetes' API types.
//
//	go run . ../kubernetes.yaml
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: k8scheck MANIFEST.yaml")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8scheck:", err)
		os.Exit(1)
	}
	n, err := check(data)
	if err != nil {
		fmt.Fprintf(os.Stderr, "k8scheck: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	fmt.Printf("k8scheck: %d objects decode strictly\n", n)
}

// check decodes each YAML document of data into the type its apiVersion
// and kind name, and returns how many it decoded.
func check(data []byte) (int, error) {
	n := 0
	for i, doc := range bytes.Split(data, []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return n, fmt.Errorf("document %d: %w", i+1, err)
		}
		var obj any
		switch head.APIVersion + " " + head.Kind {
		case "apps/v1 StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "apps/v1 Deployment":
			obj = &appsv1.Deployment{}
		case "v1 Service":
			obj = &corev1.Service{}
		case "v1 Secret":
			obj = &corev1.Secret{}
		case "v1 ConfigMap":
			obj = &corev1.ConfigMap{}
		case "v1 PersistentVolumeClaim":
			obj = &corev1.PersistentVolumeClaim{}
		default:
			return n, fmt.Errorf("document %d: kind %q of %q is not one this check knows", i+1, head.Kind, head.APIVersion)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return n, fmt.Errorf("document %d (%s): %w", i+1, head.Kind, err)
		}
		n++
	}
	return n, nil
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, line := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
