package config

// TaskConfig holds the task feature's settings. Its settings are appended
// to the table by this file's init.
type TaskConfig struct{}
