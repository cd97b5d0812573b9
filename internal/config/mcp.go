package config

// MCPConfig holds settings of acu's MCP server (the daemon's /mcp and
// `acu mcp`). Its settings are appended to the table by this file's init.
type MCPConfig struct {
	// Conformance adds the MCP conformance suite's test fixtures (tools,
	// test:// resources, prompts, completion) to the MCP server, so the
	// suite can run against the real binary. Off by default; never on in
	// production: the fixtures answer any caller with canned content.
	Conformance bool
}

// MCP returns c's MCP server settings.
func (c *Config) MCP() *MCPConfig { return &c.mcp }

// ConformanceWarning is what acu logs at start while ACU_MCP_CONFORMANCE
// is on.
const ConformanceWarning = "ACU_MCP_CONFORMANCE is on: the MCP server offers the conformance suite's test fixtures (test_* tools, test:// resources, test_* prompts); for running the suite only, never in production"

func init() {
	settings = append(settings,
		boolean("ACU_MCP_CONFORMANCE", "", "false", "add the MCP conformance suite's test fixtures (test_* tools, test:// resources and templates, test_* prompts, completion) to the MCP server, for running the suite against acu; never in production (warned at start)",
			func(c *Config) *bool { return &c.MCP().Conformance }),
	)
}
