package config

// AgentConfig holds the agent feature's settings. Its settings are appended
// to the table by this file's init.
type AgentConfig struct{}
