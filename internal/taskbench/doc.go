// Package taskbench is `acu bench tasks`: a suite of desktop tasks on real
// Linux applications, each declared as data (one JSON file a task: setup,
// prompt, limits, checker, teardown), run one by one on a fresh Xvfb with
// its own session and accessibility bus by one of acu's task engines (`acu
// run`, `acu agent`, `acu computer`, started as subprocesses of the acu
// binary), and judged by a checker that reads the application's own result:
// a process's stdout, a saved file, a command's output, or a Chromium
// page's state through the DevTools protocol. It reports success, steps,
// wall time, model time and cost per task and in total, as JSON and as a
// markdown table, and puts two reports side by side.
//
// The built-in suite is embedded (tasks/*.json); Load reads a user's
// directory of the same files.
//
// It does not run models or drive the desktop itself: the engines do.
package taskbench
