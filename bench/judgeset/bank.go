package main

// pairs are phrases and their near misses: one word or number differs.
var pairs = [][2]string{
	{"Status: Connected", "Status: Disconnected"},
	{"Step 3 of 5", "Step 2 of 5"},
	{"api-02 Healthy", "api-01 Healthy"},
	{"Order ships Thursday", "Order ships Tuesday"},
	{"Frames: 240 of 240", "Frames: 239 of 240"},
	{"Build succeeded", "Build failed"},
	{"Upload complete", "Upload incomplete"},
	{"Saved 12 files", "Saved 13 files"},
	{"Version 2.4.1 installed", "Version 2.4.7 installed"},
	{"Payment accepted", "Payment declined"},
	{"3 errors found", "0 errors found"},
	{"Sync paused", "Sync resumed"},
	{"Invoice 4521 paid", "Invoice 4527 paid"},
	{"Welcome back, Alice", "Welcome back, Alicia"},
	{"Tests passed: 118", "Tests passed: 116"},
	{"Battery 85%", "Battery 55%"},
	{"Export finished", "Export cancelled"},
	{"Server is running", "Server is stopped"},
	{"Disk usage 42 GB", "Disk usage 47 GB"},
	{"Backup verified", "Backup unverified"},
	{"Door locked", "Door unlocked"},
	{"Queue empty", "Queue full"},
	{"Room 214 booked", "Room 241 booked"},
	{"Signal strong", "Signal weak"},
	{"Checkout ready", "Checkout pending"},
	{"Tracking 7Q4X9", "Tracking 7Q4X8"},
	{"Login successful", "Login unsuccessful"},
	{"Deploy to staging", "Deploy to production"},
}

// thirds change one word of a pair (same index), a word both its
// phrases hold, so a screen showing either can be asked about the phrase
// with that word changed (a near miss: one word differs). The "near"
// screens ask them; the first screens do not.
var thirds = [][2]string{
	{"Status", "State"}, {"of 5", "of 6"}, {"Healthy", "Degraded"}, {"Order", "Parcel"}, {"of 240", "of 250"},
	{"Build", "Deploy"}, {"Upload", "Download"}, {"files", "folders"}, {"installed", "removed"}, {"Payment", "Refund"},
	{"errors", "warnings"}, {"Sync", "Backup"}, {"paid", "overdue"}, {"back", "home"}, {"Tests", "Checks"},
	{"Battery", "Signal"}, {"Export", "Import"}, {"Server", "Worker"}, {"Disk", "Swap"}, {"Backup", "Restore"},
	{"Door", "Gate"}, {"Queue", "Cache"}, {"Room", "Desk"}, {"Signal", "Battery"}, {"Checkout", "Payment"},
	{"Tracking", "Order"}, {"Login", "Logout"}, {"Deploy", "Release"},
}

// extras are words put after a phrase shown: the screen shows only part of
// the phrase asked (a near miss: one word more).
var extras = []string{"again", "today", "twice", "now", "here", "later"}

// prefixes are words put before a phrase shown, for the same reason.
var prefixes = []string{"Nightly", "Remote", "Local", "Auto", "Main", "Backup"}

// numbers are what galculator's display shows; their near misses differ in
// one digit (or have one digit more).
var numbers = []string{"4521.75", "86400", "3.14159", "2048", "73905", "0.0625", "299792", "1234.5", "6021", "987.65", "31337", "512.25"}
