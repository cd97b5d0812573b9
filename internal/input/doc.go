// Package input is acu's hands: it moves and clicks the pointer and presses
// keys on an X display through the XTEST extension.
//
// Where it sits: the agent loop, the orchestrator and `acu act` turn model or
// user output into an Action and call (*Device).Do. Every coordinate they
// pass is normalized, 0..1000 within the working area (CAPTURE_CROP of the
// full screen, see AreaFromCrop); the Device maps it to screen pixels at the
// last moment and clamps it into the area, so a crop sandboxes the agent's
// pointer as well as its view.
//
// Keyboard: the core keyboard mapping is read once per Device
// (GetKeyboardMapping) and indexed keysym -> (keycode, shift). Key chords are
// parsed from strings like "ctrl+shift+t"; text is typed character by
// character, with Shift where the keymap puts the character on level 2. A
// character the keymap lacks (é, € on a US layout) is typed by remapping a
// spare keycode (one with no keysym) with ChangeKeyboardMapping and tapping
// it. Clients look the mapping up lazily, when they handle the key, so a
// mapping is kept across a burst and changed or restored only once the
// client proved it read the last key using it (the read proof the gate
// sets: its answer to a ping), or RemapHold after it for a client that
// cannot prove it; unused mappings are restored after RemapIdle.
//
// UserClock follows the user's input by the server's clock (XInput2 raw
// events, read on a raw connection of its own since xgb cannot read
// XInput2's long events), telling acu's own XTest input by the markers the
// gate brackets it with; it reads the slave devices' own raw events, which
// the server sends in order with the markers even while a window manager's
// grab holds the pointer's (the master's) events back.
//
// What it does not do: open or own the device's X connection (internal/display does;
// its event loop must drain the MappingNotify events a remap produces), read
// configuration (Options come from cmd/acu), capture the screen, or decide
// what to do (the agent loop does).
package input
