/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/manifests"
	"github.com/coomia-dip/kubectl-onto/pkg/kube"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
	"github.com/coomia-dip/kubectl-onto/pkg/release"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
	"github.com/coomia-dip/kubectl-onto/pkg/rendercache"
	"github.com/coomia-dip/kubectl-onto/pkg/spec"
)

// GlobalOptions are the flags every command shares: kubectl's connection flags, the
// release catalog and verbosity. Commands embed a pointer to the one instance the root
// command owns.
type GlobalOptions struct {
	ConfigFlags *genericclioptions.ConfigFlags
	// ReleasesDir adds release catalog entries from a directory.
	ReleasesDir string
	// Verbosity of debug logs on stderr; 0 is quiet.
	Verbosity int
	// ConfigFile is the viper config file; empty uses the default location when present.
	ConfigFile string

	genericiooptions.IOStreams
	getenv func(string) string

	validatorOnce sync.Once
	validator     *spec.Validator
	validatorErr  error

	clientsOnce sync.Once
	clients     *kube.Clients
	clientsErr  error
	// clientShare is how many platforms use the clients at once (--parallel with
	// several platforms); they get that many times one run's rate limits. Set it
	// before the first Clients.
	clientShare int
}

// Catalog loads the release catalog: the shipped one plus ReleasesDir.
func (g *GlobalOptions) Catalog() (*release.Catalog, error) {
	return release.Load(manifests.FS, manifests.ReleasesDir, g.ReleasesDir)
}

// Validator returns the offline validator, built once per process because compiling
// the schema and CEL rules is the costly part of validation.
func (g *GlobalOptions) Validator() (*spec.Validator, error) {
	g.validatorOnce.Do(func() {
		catalog, err := g.Catalog()
		if err != nil {
			g.validatorErr = err
			return
		}
		g.validator, g.validatorErr = spec.NewValidator(catalog)
		if c := g.cache(); c != nil && g.validatorErr == nil {
			g.validator.Memo = c
		}
	})
	return g.validator, g.validatorErr
}

// RenderCacheEnv turns the render cache off when set to "off".
const RenderCacheEnv = envPrefix + "RENDER_CACHE"

// cache is the render cache under kubectl's --cache-dir (onto-render/); nil when
// ONTO_RENDER_CACHE=off or it cannot be set up. It keeps renders and the
// documents the validator found valid.
func (g *GlobalOptions) cache() *rendercache.Cache {
	if (g.getenv != nil && envValue(g.getenv, RenderCacheEnv) == "off") || g.ConfigFlags == nil || g.ConfigFlags.CacheDir == nil || *g.ConfigFlags.CacheDir == "" {
		return nil
	}
	c, err := rendercache.New(filepath.Join(*g.ConfigFlags.CacheDir, "onto-render"))
	if err != nil {
		return nil
	}
	return c
}

// renderer is how this process renders a platform read from a file: through the
// cache, so a run on an unchanged platform skips the kustomize builds; nil
// (render.Render) without one.
func (g *GlobalOptions) renderer() func(*v1alpha1.OntoPlatform, render.Options) ([]render.Plane, error) {
	if c := g.cache(); c != nil {
		return c.Render
	}
	return nil
}

// Terminal returns the output styles for out.
func (g *GlobalOptions) Terminal(out io.Writer) *printers.Terminal {
	return printers.NewTerminal(out, g.getenv)
}

// Logger writes debug logs to ErrOut when -v is given, and nothing otherwise.
func (g *GlobalOptions) Logger() *slog.Logger {
	level := slog.LevelWarn
	if g.Verbosity > 0 {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(g.ErrOut, &slog.HandlerOptions{Level: level}))
}

// klogHandler is where client-go's klog lines go: nowhere by default, the debug log
// with -v.
func (g *GlobalOptions) klogHandler() slog.Handler {
	if g.Verbosity <= 0 {
		return slog.DiscardHandler
	}
	return g.Logger().Handler()
}

// NewCmdRoot builds the `kubectl onto` command tree. getenv reads the environment
// (os.Getenv in main, a map in tests).
func NewCmdRoot(streams genericiooptions.IOStreams, getenv func(string) string) *cobra.Command {
	g := &GlobalOptions{
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		IOStreams:   streams,
		getenv:      getenv,
	}
	v := viper.New()
	cmd := &cobra.Command{
		Use:   "kubectl-onto",
		Short: "Install, upgrade, scale, roll back, report on and uninstall an OntoPlatform",
		Long: `kubectl onto manages a whole multi-service platform on Kubernetes from one
declarative OntoPlatform file: it validates and renders the file offline, plans the
change against the cluster with a server-side apply dry-run, applies it plane by plane
waiting for each to be healthy, upgrades it component by component behind canaries,
scales and rolls it back from recorded revisions, reports status from the live
workloads, and uninstalls it in reverse order, keeping its data.

Every flag can also come from the environment, as ONTO_<COMMAND>_<FLAG> for one
command (ONTO_APPLY_TIMEOUT) or ONTO_<FLAG> for all (ONTO_RELEASES), or from a config
file (--config, default $XDG_CONFIG_HOME/kubectl-onto/config.yaml) with top-level
keys for all commands and a section per command (apply: {timeout: 10m}). The command
line wins, then the environment, then the file, the per-command value before the
shared one; a shared -o a command does not have is ignored there.`,
		Example: `  # Write a starter file, check it, and see what it becomes
  kubectl onto init --profile production
  kubectl onto validate -f platform.yaml
  kubectl onto render -f platform.yaml --plane control`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl onto",
		},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := bindEnvAndConfig(cmd, v, g.ConfigFile, getenv); err != nil {
				return err
			}
			// client-go logs through klog: watch retries, "context canceled" on Ctrl-C,
			// discovery cache misses. For a user they are noise unless -v asks for them,
			// then they go where the tool's own debug lines go. klog's logger is
			// process-wide by design; this is the one place that sets it.
			klog.SetLogger(logr.FromSlogHandler(g.klogHandler()))
			return nil
		},
	}
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)

	flags := cmd.PersistentFlags()
	g.ConfigFlags.AddFlags(flags)
	flags.StringVar(&g.ReleasesDir, "releases", "", "Directory of extra release catalog entries (<version>.yaml), e.g. for an air-gapped registry")
	flags.IntVarP(&g.Verbosity, "verbosity", "v", 0, "Debug log level on stderr (0 is quiet)")
	flags.StringVar(&g.ConfigFile, "config", "", "Config file with flag defaults (default $XDG_CONFIG_HOME/kubectl-onto/config.yaml)")

	cmd.AddCommand(
		NewCmdVersion(g),
		NewCmdInit(g),
		NewCmdValidate(g),
		NewCmdRender(g),
		NewCmdPlan(g),
		NewCmdApply(g),
		NewCmdStatus(g),
		NewCmdUninstall(g),
		NewCmdUnlock(g),
		NewCmdHistory(g),
		NewCmdScale(g),
		NewCmdUpgrade(g),
		NewCmdRollback(g),
		NewCmdDoctor(g),
		NewCmdWatch(g),
	)
	registerCompletions(cmd, g)
	return cmd
}

// bindEnvAndConfig gives every flag the user did not set on the command line its value
// from, in this order: ONTO_<COMMAND>_<FLAG>, ONTO_<FLAG>, the config file's
// <command>: {<flag>: ...} section, its top-level <flag>. A shared value (the second
// and fourth) that this command cannot take, such as ONTO_OUTPUT=text for render whose
// formats are yaml and json, is skipped; a per-command value that is invalid is an
// error.
func bindEnvAndConfig(cmd *cobra.Command, v *viper.Viper, configFile string, getenv func(string) string) error {
	if configFile == "" {
		dir := getenv("XDG_CONFIG_HOME")
		if dir == "" {
			if home := getenv("HOME"); home != "" {
				dir = filepath.Join(home, ".config")
			}
		}
		if dir != "" {
			if p := filepath.Join(dir, "kubectl-onto", "config.yaml"); fileExists(p) {
				configFile = p
			}
		}
	}
	if configFile != "" {
		v.SetConfigFile(configFile)
		if err := v.ReadInConfig(); err != nil {
			return fmt.Errorf("read config file %s: %w", configFile, err)
		}
	}
	envName := func(parts ...string) string {
		return envPrefix + strings.ToUpper(strings.ReplaceAll(strings.Join(parts, "_"), "-", "_"))
	}
	command := cmd.Name()
	var errs []error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		type source struct {
			name, value string
			shared      bool
		}
		var sources []source
		if e := getenv(envName(command, f.Name)); e != "" {
			sources = append(sources, source{envName(command, f.Name), e, false})
		}
		if e := getenv(envName(f.Name)); e != "" {
			sources = append(sources, source{envName(f.Name), e, true})
		}
		if key := command + "." + f.Name; v.IsSet(key) {
			sources = append(sources, source{configFile + ": " + key, v.GetString(key), false})
		}
		// A top-level key that is a map is a command's section (apply's --plan vs the
		// plan: section), not a value.
		if _, section := v.Get(f.Name).(map[string]any); v.IsSet(f.Name) && !section {
			sources = append(sources, source{configFile + ": " + f.Name, v.GetString(f.Name), true})
		}
		for _, src := range sources {
			err := f.Value.Set(src.value)
			if err == nil {
				return
			}
			if _, perCommand := f.Value.(interface{ commandSpecific() }); src.shared && perCommand {
				continue
			}
			errs = append(errs, fmt.Errorf("%s: invalid value %q for --%s of %s: %w", src.name, src.value, f.Name, command, err))
			return
		}
	})
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
