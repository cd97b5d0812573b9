package config

// RelayConfig holds the relay feature's settings. Its settings are appended
// to the table by this file's init.
type RelayConfig struct{}
