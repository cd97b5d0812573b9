package config

// The values of ACU_LAUNCH_ARGV: the token scope launching a command line
// (POST /v1/apps/launch with argv, the launch_app tool's argv) needs.
const (
	LaunchArgvAdmin = "admin"
	LaunchArgvAct   = "act"
)

func init() {
	settings = append(settings,
		safety(enum("ACU_LAUNCH_ARGV", "", LaunchArgvAdmin, []string{LaunchArgvAdmin, LaunchArgvAct},
			"token scope needed to launch a command line (POST /v1/apps/launch with argv): admin, or act to let act tokens run any program; launching a desktop entry needs act either way",
			func(c *Config) *string { return &c.LaunchArgv })))
}
