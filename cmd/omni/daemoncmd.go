package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnictx/omni/internal/daemon"
)

// daemonStopTimeout is how long `omni daemon --stop` waits for the lock.
const daemonStopTimeout = 10 * time.Second

// daemonConfig is this process's daemon configuration: $OMNI_HOME, this
// build's version, OMNI_KEEP_SECRETS=1, OMNI_NO_DAEMON and the cluster
// settings (OMNI_NATS_URL, ..., else $OMNI_HOME/cluster.json;
// daemon.WithCluster).
func daemonConfig() daemon.Config { return configOf(omniHome()) }

// configOf is daemonConfig for another home.
func configOf(home string) daemon.Config {
	return daemon.WithRetention(daemon.WithCluster(daemon.Config{Home: home, Version: version,
		KeepSecrets: os.Getenv("OMNI_KEEP_SECRETS") == "1", InProcess: os.Getenv("OMNI_NO_DAEMON") != ""}, os.LookupEnv), os.LookupEnv)
}

// newClient returns the daemon client of this process (daemonConfig).
func newClient() *daemon.Client { return daemon.NewClient(daemonConfig()) }

// homeLogf returns the logger of home's omni.log (daemon.Logf).
func homeLogf(home string) func(string, ...any) { return daemon.Logf(home) }

// projectOf returns the project hooks record for dir (daemon.ProjectOf).
func projectOf(dir string) string { return daemon.ProjectOf(dir) }

// newDaemonCmd returns `omni daemon [--stop] [--idle DURATION]`.
func newDaemonCmd(newHandler func(daemon.Config) daemon.HandlerFactory) *cobra.Command {
	var stop bool
	var idle time.Duration
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the background daemon that owns the event store",
		Long: `Run the omni daemon of $OMNI_HOME in the foreground.

Hooks start it on demand (detached, logging to $OMNI_HOME/daemon.log), so
there is rarely a reason to run it by hand. One daemon owns the store; a
second one exits at once with status 0. It exits after --idle without a
request (default 10m; OMNI_DAEMON_IDLE sets it when --idle is not given),
when $OMNI_HOME is removed, or on SIGTERM/SIGINT.

With --stop, ask the running daemon to stop and wait until it has; prints
"stopped" or "no daemon running" on stderr.

Exit codes: 0 on a clean stop (or when another daemon owns the store);
2 on error (a bad flag or OMNI_DAEMON_IDLE, a store that cannot be opened
or served).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			cfg := daemonConfig()
			cfg.Replace = os.Getenv(daemon.ReplaceEnv) == "1"
			if stop {
				running, err := daemon.NewClient(cfg).Stop(ctx, daemonStopTimeout)
				if err != nil {
					return err
				}
				if running {
					fmt.Fprintln(cmd.ErrOrStderr(), "stopped")
				} else {
					fmt.Fprintln(cmd.ErrOrStderr(), "no daemon running")
				}
				return nil
			}
			if cmd.Flags().Changed("idle") && idle <= 0 {
				return usageErr("omni daemon: --idle %s: want a positive duration such as 10m", idle)
			}
			if !cmd.Flags().Changed("idle") {
				if v := os.Getenv("OMNI_DAEMON_IDLE"); v != "" {
					d, err := time.ParseDuration(v)
					if err != nil || d <= 0 {
						return fmt.Errorf("OMNI_DAEMON_IDLE=%q: want a positive duration such as 10m", v)
					}
					idle = d
				}
			}
			factory := daemon.HandlerFactory(daemon.NoHandler)
			if newHandler != nil {
				factory = newHandler(cfg)
			}
			logger := log.New(cmd.ErrOrStderr(), "", log.LstdFlags|log.Lmicroseconds)
			return daemon.Run(ctx, cfg, idle, logger.Printf, factory)
		},
	}
	cmd.Flags().BoolVar(&stop, "stop", false, "stop the running daemon and wait until it has exited")
	cmd.Flags().DurationVar(&idle, "idle", daemon.DefaultIdle, "exit after this long without a request")
	return cmd
}
