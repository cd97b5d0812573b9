package main

import (
	"context"
	"fmt"
	"os"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/schema"
	"github.com/compose-spec/compose-go/v2/tree"
	"github.com/compose-spec/compose-go/v2/types"
)

// loadOptions are the inputs `docker compose` takes from its command line
// and the shell: -f, --env-file, --profile, -p, and the environment.
type loadOptions struct {
	ConfigPaths []string // -f
	EnvFiles    []string // --env-file; none: the .env beside the compose file, if any
	Profiles    []string // --profile; none: COMPOSE_PROFILES
	ProjectName string   // -p; empty: compose's own default (name: or the directory)
	// Env is the environment compose interpolates from; nil means the
	// process's own (cli.WithOsEnv), as the real command has.
	Env []string
}

// load loads a compose file the way `docker compose up` of Docker Compose
// v5.7.1 (github.com/docker/compose/v5, which pins compose-go v2.16.2) does,
// with the same compose-go project options in the same order:
//
//   - cmd/compose/compose.go, (*ProjectOptions).WithServices: ToProject with
//     cli.WithoutEnvironmentResolution, then
//     project.WithServicesEnvironmentResolved(true);
//   - internal/projectloader/loader.go, buildProjectOptions:
//     WithWorkingDirectory, WithOsEnv, PWD when unset, WithEnvFiles,
//     WithDotEnv, WithConfigFileEnv, WithDefaultConfigPath, WithEnvFiles and
//     WithDotEnv again, WithDefaultProfiles, WithName, and the
//     unsupported-attribute check (internal/projectloader/
//     unsupported_attributes.go); then LoadProject (schema validation,
//     interpolation, normalization, path resolution, consistency checks,
//     profiles) and postProcessProject (a name is required, labels,
//     WithoutUnnecessaryResources).
//
// Left out: the git and OCI remote loaders (compose.yaml includes nothing
// remote) and the labels compose adds, which nothing here reads. What
// Docker Compose would only warn about (an attribute it does not honor
// outside Swarm) is returned for the caller to refuse.
func load(ctx context.Context, o loadOptions) (*types.Project, []loader.UnsupportedAttribute, error) {
	var unsupported []loader.UnsupportedAttribute
	fns := []cli.ProjectOptionsFn{
		cli.WithoutEnvironmentResolution,
		cli.WithWorkingDirectory(""), // --project-directory not given
	}
	env := o.Env
	if env == nil {
		fns = append(fns, cli.WithOsEnv)
		env = os.Environ()
	} else {
		fns = append(fns, cli.WithEnv(env))
	}
	if !hasVar(env, "PWD") {
		pwd, err := os.Getwd()
		if err != nil {
			return nil, nil, err
		}
		fns = append(fns, cli.WithEnv([]string{"PWD=" + pwd}))
	}
	fns = append(fns,
		cli.WithEnvFiles(o.EnvFiles...),
		cli.WithDotEnv,
		cli.WithConfigFileEnv,
		cli.WithDefaultConfigPath,
		cli.WithEnvFiles(o.EnvFiles...),
		cli.WithDotEnv,
		cli.WithDefaultProfiles(o.Profiles...),
		cli.WithName(o.ProjectName),
		cli.WithLoadOptions(
			loader.WithUnsupportedAttributesCheck(unsupportedPatterns, func(f []loader.UnsupportedAttribute) { unsupported = f }),
			loader.WithSupportedAttributes(supportedAttributePaths(), nil),
		),
	)
	popts, err := cli.NewProjectOptions(o.ConfigPaths, fns...)
	if err != nil {
		return nil, nil, err
	}
	p, err := popts.LoadProject(ctx)
	if err != nil {
		return nil, nil, err
	}
	if p.Name == "" {
		return nil, nil, fmt.Errorf("project name can't be empty. Use ProjectName option to set a valid name")
	}
	if p, err = p.WithServicesEnabled(); err != nil {
		return nil, nil, err
	}
	if p, err = p.WithSelectedServices(nil); err != nil {
		return nil, nil, err
	}
	p = p.WithoutUnnecessaryResources()
	if p, err = p.WithServicesEnvironmentResolved(true); err != nil {
		return nil, nil, err
	}
	return p, unsupported, nil
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if len(kv) > len(name) && kv[:len(name)+1] == name+"=" {
			return true
		}
	}
	return false
}

// swarmOnly are the attributes Docker Compose v5.7.1 never honors outside
// Swarm (presenceUnsupportedAttributes in its
// internal/projectloader/unsupported_attributes.go): the allowlist handed
// to compose-go is every attribute of the specification but these and
// what lies under them.
var swarmOnly = []tree.Path{
	tree.NewPath("services", "*", "deploy", "mode"),
	tree.NewPath("services", "*", "deploy", "labels"),
	tree.NewPath("services", "*", "deploy", "update_config"),
	tree.NewPath("services", "*", "deploy", "rollback_config"),
	tree.NewPath("services", "*", "deploy", "endpoint_mode"),
	tree.NewPath("services", "*", "deploy", "placement"),
	tree.NewPath("services", "*", "credential_spec"),
	tree.NewPath("configs", "*", "labels"),
	tree.NewPath("secrets", "*", "driver_opts"),
	tree.NewPath("secrets", "*", "labels"),
}

// unsupportedPatterns are its valueConditionalAttributes: values, not
// keys, that Docker ignores outside Swarm.
var unsupportedPatterns = []loader.UnsupportedAttributePattern{
	{Path: tree.NewPath("services", "*", "ports", "[]"), Detect: func(v any) bool {
		port, _ := v.(map[string]any)
		return port["mode"] == "host"
	}},
	{Path: tree.NewPath("services", "*", "volumes", "[]"), Detect: func(v any) bool {
		volume, _ := v.(map[string]any)
		return volume["type"] == "cluster"
	}},
}

func supportedAttributePaths() []tree.Path {
	all := schema.AttributePaths()
	supported := make([]tree.Path, 0, len(all))
	for _, path := range all {
		if !underAny(path, swarmOnly) {
			supported = append(supported, path)
		}
	}
	return supported
}

func underAny(path tree.Path, prefixes []tree.Path) bool {
	parts := path.Parts()
	for _, prefix := range prefixes {
		pp := prefix.Parts()
		if len(parts) >= len(pp) && tree.NewPath(parts[:len(pp)]...).Matches(prefix) {
			return true
		}
	}
	return false
}
