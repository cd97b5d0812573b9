// Package atspi is a small AT-SPI2 client on D-Bus: it finds a desktop
// session's accessibility bus (org.a11y.Bus.GetAddress on the session bus,
// one accessibility bus per X display), walks the applications' accessible
// trees, and invokes the Action, EditableText and Component interfaces.
//
// Where it sits: internal/elements reads Tree to build the element map the
// task orchestrator shows its models, and calls DoAction, SetText and
// GrabFocus to execute semantic steps. Tests start a private session bus,
// the accessibility bus and GTK programs with package atspitest.
//
// Listen registers for AT-SPI events (windows created and destroyed,
// states, names, values, text, children) and delivers them; TreeOf walks
// the applications an event touched. internal/a11yjudge keeps a tree up to
// date with them to decide wait conditions.
//
// What it does not do: read the environment (the session bus address comes
// in Options), cache trees between walks, or decide which nodes matter
// (internal/elements and internal/a11yjudge do).
package atspi
