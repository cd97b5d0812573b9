package config

import "github.com/acu-dev/acu/internal/secret"

// ComputerConfig holds `acu computer`'s endpoint settings; the provider,
// budgets and sizes are its flags. Its settings are appended to the table
// by this file's init.
type ComputerConfig struct {
	BaseURL string
	APIKey  secret.String
	Model   string
}

// Computer returns c's computer-use settings.
func (c *Config) Computer() *ComputerConfig { return &c.computer }

// ComputerAPIKey is the key of a computer-use provider: ACU_COMPUTER_API_KEY,
// else ANTHROPIC_API_KEY or OPENAI_API_KEY by provider, and the name of the
// variable it came from.
func (c *Config) ComputerAPIKey(provider string) (secret.String, string) {
	if k := c.Computer().APIKey; k != "" {
		return k, "ACU_COMPUTER_API_KEY"
	}
	switch provider {
	case "anthropic":
		return c.AnthropicAPIKey, "ANTHROPIC_API_KEY"
	case "openai":
		return c.OpenAIAPIKey, "OPENAI_API_KEY"
	}
	return "", "ACU_COMPUTER_API_KEY"
}

func init() {
	cc := func(c *Config) *ComputerConfig { return c.Computer() }
	settings = append(settings,
		str("ACU_COMPUTER_BASE_URL", "", "", "a URL (up to and including /v1 for openai and uitars)",
			"endpoint of `acu computer`'s model (default the vendor's; UI-TARS: any OpenAI-compatible server)", func(c *Config) *string { return &cc(c).BaseURL }),
		secretStr("ACU_COMPUTER_API_KEY", "", "key of `acu computer`'s model endpoint (default ANTHROPIC_API_KEY or OPENAI_API_KEY by provider)",
			func(c *Config) *secret.String { return &cc(c).APIKey }),
		str("ACU_COMPUTER_MODEL", "", "", "a model id", "`acu computer`'s model (default per provider: claude-sonnet-4-5, computer-use-preview, ui-tars-1.5-7b)",
			func(c *Config) *string { return &cc(c).Model }),
	)
}
