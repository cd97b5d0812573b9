// Package smartwaitbench measures the wait engine end to end on real Xvfb
// displays, a real SQLite store, the real notification dispatcher (webhook
// to a loopback server) and an OpenAI-compatible fake judge of fixed
// latency: detection latency, judge calls per change, and many concurrent
// waits. Figures and commands: docs/perf/smartwait.md.
package smartwaitbench
