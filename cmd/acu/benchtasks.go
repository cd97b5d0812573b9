package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/acu-dev/acu/internal/config"
	"github.com/acu-dev/acu/internal/taskbench"
)

// runBenchTasks is `acu bench tasks`: the task suite on one engine.
func runBenchTasks(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "bench tasks", `[flags] [task id or tag ...]

Runs the desktop task suite (built in, or -dir) one task at a time, each on a fresh Xvfb, with one
of acu's task engines, and reports the checkers' verdicts: success rate, steps, wall time, model
time and cost per task and in total. The models are the engine's usual settings: ACU_TASK_* for
-engine run, ACU_AGENT_* for -engine agent, -provider and -model for -engine computer.
See docs/tasks.md.`)
	f := benchTaskFlags{
		engine:      fs.String("engine", "run", "run (the orchestrator), agent (the stateless vision loop) or computer (a vendor's computer-use model)"),
		provider:    fs.String("provider", "anthropic", "-engine computer: anthropic, openai or uitars"),
		model:       fs.String("model", "", "-engine computer: the model (default per provider)"),
		baseURL:     fs.String("base-url", "", "-engine computer: the provider's endpoint"),
		dir:         fs.String("dir", "", "a directory of task files (*.json) instead of the built-in suite"),
		ci:          fs.Bool("ci", false, "only the tasks of the CI subset (the scripted model's)"),
		list:        fs.Bool("list", false, "list the tasks and exit"),
		jsonOut:     fs.String("json", "", "write the report as JSON to this file (- for stdout)"),
		work:        fs.String("work", "", "keep each task's directory (files, engine data) under this directory"),
		compare:     fs.Bool("compare", false, "compare two JSON reports: acu bench tasks -compare A.json B.json"),
		publish:     fs.Bool("publish", false, "fill the results section of -publish-file with this run (needs the engine's key or a local endpoint)"),
		publishFile: fs.String("publish-file", "docs/tasks.md", "the markdown file -publish fills"),
		verbose:     fs.Bool("v", false, "print the engines' output"),
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *f.compare {
		return compareReports(e, fs.Args())
	}
	tasks, err := loadTasks(*f.dir)
	if err != nil {
		return err
	}
	if tasks, err = taskbench.Select(tasks, fs.Args(), *f.ci); err != nil {
		return err
	}
	if *f.list {
		listTasks(e, tasks)
		return nil
	}
	c, err := loadConfig(e)
	if err != nil {
		return err
	}
	eng, label, keyed, err := f.benchEngine(c)
	if err != nil {
		return err
	}
	if *f.publish && !keyed {
		return &exitError{code: 2, msg: "acu bench tasks -publish: no model key or local endpoint is configured for -engine " + *f.engine +
			"; results are published only from a run with a real model (see docs/tasks.md)"}
	}
	return f.run(ctx, e, tasks, eng, label)
}

// benchTaskFlags are acu bench tasks' flags.
type benchTaskFlags struct {
	engine, provider, model, baseURL, dir, jsonOut, work, publishFile *string
	ci, list, compare, publish, verbose                               *bool
}

// compareReports prints how two JSON reports differ.
func compareReports(e *env, args []string) error {
	if len(args) != 2 {
		return &exitError{code: 2, msg: "acu bench tasks -compare: give two reports: -compare A.json B.json"}
	}
	a, err := taskbench.ReadReport(args[0])
	if err != nil {
		return err
	}
	b, err := taskbench.ReadReport(args[1])
	if err != nil {
		return err
	}
	taskbench.Compare(e.stdout, a, b)
	return nil
}

// listTasks prints a line per task.
func listTasks(e *env, tasks []taskbench.Task) {
	for _, t := range tasks {
		ci := ""
		if t.CI {
			ci = " [ci]"
		}
		fmt.Fprintf(e.stdout, "%-24s %s (%s)%s\n", t.ID, t.Title, strings.Join(t.Tags, ", "), ci)
	}
}

// benchEngine is the task engine -engine names, a label of its models, and
// whether a key or local endpoint is configured for it.
func (f benchTaskFlags) benchEngine(c *config.Config) (taskbench.Engine, string, bool, error) {
	switch *f.engine {
	case "run":
		tc := c.Task()
		key, _ := c.TaskAPIKey()
		label := fmt.Sprintf("fast %s, planner %s, verifier %s", tc.FastModel, tc.PlannerModel, tc.VerifierModel)
		return taskbench.Orchestrator{}, label, key.Set() || localURL(tc.BaseURL), nil
	case "agent":
		ac := c.Agent()
		return taskbench.Agent{}, ac.Model, ac.APIKey.Set() || localURL(ac.APIURL), nil
	case "computer":
		def, ok := computerDefaults[*f.provider]
		if !ok {
			return nil, "", false, &exitError{code: 2, msg: "acu bench tasks: -provider must be anthropic, openai or uitars"}
		}
		key, _ := c.ComputerAPIKey(*f.provider)
		base := firstOf(*f.baseURL, c.Computer().BaseURL)
		label := *f.provider + " " + firstOf(*f.model, c.Computer().Model, def.model)
		return taskbench.Computer{Provider: *f.provider, Model: *f.model, BaseURL: *f.baseURL}, label,
			key.Set() || (base != "" && localURL(base)), nil
	}
	return nil, "", false, &exitError{code: 2, msg: fmt.Sprintf("acu bench tasks: -engine %q: use run, agent or computer", *f.engine)}
}

// run runs tasks with eng, prints the report and writes or publishes it.
func (f benchTaskFlags) run(ctx context.Context, e *env, tasks []taskbench.Task, eng taskbench.Engine, label string) error {
	bin, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the acu binary the engines run: %w", err)
	}
	o := taskbench.Options{Bin: bin, Engine: eng, Model: label, WorkDir: *f.work,
		Progress: func(r taskbench.TaskResult) {
			verdict := "FAIL"
			switch {
			case r.Skipped != "":
				verdict = "SKIP"
			case r.Success:
				verdict = "pass"
			}
			fmt.Fprintf(e.stderr, "%s %-24s %3d steps %6.1f s  %s\n", verdict, r.ID, r.Steps, r.WallSeconds, firstOf(r.Skipped, r.Error, r.Check))
		}}
	if *f.verbose {
		o.Log = e.stderr
	}
	fmt.Fprintf(e.stderr, "%d tasks, engine %s (%s)\n", len(tasks), eng.Name(), label)
	rep, runErr := taskbench.Run(ctx, tasks, o)
	if rep == nil {
		return runErr
	}
	rep.Markdown(e.stdout)
	if *f.jsonOut != "" {
		if err := writeReport(*f.jsonOut, e, rep); err != nil {
			return err
		}
	}
	if *f.publish && runErr == nil {
		if err := taskbench.Publish(*f.publishFile, rep); err != nil {
			return fmt.Errorf("publish to %s: %w", *f.publishFile, err)
		}
		fmt.Fprintf(e.stderr, "published to %s\n", *f.publishFile)
	}
	return runErr
}

func loadTasks(dir string) ([]taskbench.Task, error) {
	if dir == "" {
		return taskbench.Builtin()
	}
	return taskbench.Load(dir)
}

func writeReport(path string, e *env, rep *taskbench.Report) error {
	if path == "-" {
		return rep.WriteJSON(e.stdout)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
