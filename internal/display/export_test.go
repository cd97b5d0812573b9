package display

// XIDRange exposes the XC-MISC range function to tests.
var XIDRange = xidRange
