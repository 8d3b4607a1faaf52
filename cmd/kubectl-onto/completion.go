/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package main

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/printers"
)

// Shell completion. cobra's hidden __complete command answers the shells, and
// `kubectl onto` through the kubectl_complete-onto script kubectl runs from PATH (see
// hack/kubectl_complete-onto). What a flag's value or a positional argument may be is
// decided here, from the built command tree, so the command files keep only their flags.

const (
	// completionTimeout bounds every cluster lookup of a completion: the shell waits for
	// it, and a slow or unreachable cluster must cost a pause, not a hang.
	completionTimeout = 4 * time.Second
	// outputFormatsAnnotation, on an -o flag, lists the formats its command accepts
	// (OutputFlags.AddFlags sets it).
	outputFormatsAnnotation = "kubectl-onto/output-formats"
)

// fileFlagExtensions are the file flags and the extensions their completion offers;
// directories are always offered too.
func fileFlagExtensions() map[string][]string {
	return map[string][]string{
		"filename": {"yaml", "yml", "json"},
		"patch":    {"yaml", "yml", "json"},
		"config":   {"yaml", "yml", "json"},
		"plan":     {"json"},
		"fleet":    {"yaml", "yml"},
	}
}

// registerCompletions walks the command tree under root and registers the completion
// of every flag value it knows and of positional platform NAMEs. A command that
// registered its own completion keeps it.
func registerCompletions(root *cobra.Command, g *GlobalOptions) {
	walkCommands(root, func(cmd *cobra.Command) {
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) { registerFlagCompletion(cmd, f, g) })
		if cmd.HasSubCommands() || cmd.ValidArgsFunction != nil || len(cmd.ValidArgs) > 0 {
			return
		}
		switch {
		case firstArg(cmd) == "NAME":
			cmd.ValidArgsFunction = g.completePlatformNames
		case firstArg(cmd) == "FILE":
			cmd.ValidArgsFunction = completePlatformFile
		case cmd.Args != nil && cmd.Args(cmd, []string{"x"}) != nil:
			// No positional arguments: offer nothing rather than the shell's files.
			cmd.ValidArgsFunction = cobra.NoFileCompletions
		}
	})
}

func walkCommands(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		walkCommands(c, fn)
	}
}

// firstArg is the placeholder of cmd's first positional argument in its Use, without
// brackets: "NAME" for "status [NAME]" and "rollback NAME [REVISION]", "FILE" for
// "init [FILE]"; "" for "apply -f FILE", where FILE is a flag's value. NAME is a
// platform's name, FILE a platform file.
func firstArg(cmd *cobra.Command) string {
	words := strings.Fields(cmd.Use)
	for i := 1; i < len(words); i++ {
		w := strings.Trim(words[i], "[].")
		switch {
		case strings.HasPrefix(w, "-"):
			i++ // the flag's value
		case w != "" && strings.ToUpper(w) == w:
			return w
		}
	}
	return ""
}

// completePlatformFile offers the YAML and JSON files (and directories) for a FILE
// argument.
func completePlatformFile(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return fileFlagExtensions()["filename"], cobra.ShellCompDirectiveFilterFileExt
}

// registerFlagCompletion registers the completion of f's value on cmd, by the flag's
// name, which is the same on every command that has it.
func registerFlagCompletion(cmd *cobra.Command, f *pflag.Flag, g *GlobalOptions) {
	if _, ok := cmd.GetFlagCompletionFunc(f.Name); ok {
		return
	}
	if exts, ok := fileFlagExtensions()[f.Name]; ok {
		_ = cmd.MarkFlagFilename(f.Name, exts...)
		return
	}
	var fn cobra.CompletionFunc
	switch f.Name {
	case "releases":
		_ = cmd.MarkFlagDirname(f.Name)
		return
	case "plane":
		var planes []string
		for _, p := range v1alpha1.Planes() {
			planes = append(planes, string(p))
		}
		fn = fixedCompletions(planes)
	case "profile":
		fn = fixedCompletions(initProfiles())
	case "output":
		fn = outputCompletions(flagValues(f))
	case "to", "platform-version":
		fn = g.completeVersions
	case "namespace", "platform-namespace":
		fn = g.completeNamespaces
	case "context":
		fn = g.completeKubeconfig(func(c *clientcmdapi.Config) []string { return mapKeys(c.Contexts) })
	case "cluster":
		fn = g.completeKubeconfig(func(c *clientcmdapi.Config) []string { return mapKeys(c.Clusters) })
	case "user":
		fn = g.completeKubeconfig(func(c *clientcmdapi.Config) []string { return mapKeys(c.AuthInfos) })
	default:
		switch {
		case f.Value.Type() != "string" && f.Value.Type() != "stringArray":
			// Durations, numbers, booleans: no file is ever a value.
			fn = cobra.NoFileCompletions
		case len(flagValues(f)) > 0:
			fn = fixedCompletions(flagValues(f))
		default:
			// Anything else (paths of certificates, names, URLs) keeps cobra's default,
			// the shell's file completion.
			return
		}
	}
	_ = cmd.RegisterFlagCompletionFunc(f.Name, fn)
}

// flagValues are the values a flag accepts, from its outputFormatsAnnotation or else
// from the first value list in its usage ("none|client|server: ..."), the way flags
// document their values; nil when neither names any.
func flagValues(f *pflag.Flag) []string {
	if vs := f.Annotations[outputFormatsAnnotation]; len(vs) > 0 {
		return vs
	}
	for _, w := range strings.Fields(f.Usage) {
		values := strings.Split(strings.TrimRight(w, ":,;.)"), "|")
		if len(values) > 1 && !slices.ContainsFunc(values, func(v string) bool { return !isValueWord(v) }) {
			return values
		}
	}
	return nil
}

// isValueWord reports whether s looks like a flag value: lower-case letters, digits and
// dashes, starting with a letter.
func isValueWord(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// fixedCompletions offers the values that start with what is typed.
func fixedCompletions(values []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return withPrefix(values, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// outputCompletions offers the -o formats; jsonpath as "jsonpath=", where the template
// follows without a space.
func outputCompletions(formats []string) cobra.CompletionFunc {
	values := make([]string, len(formats))
	for i, f := range formats {
		values[i] = f
		if printers.Format(f) == printers.FormatJSONPath {
			values[i] = f + "="
		}
	}
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		out := withPrefix(values, toComplete)
		d := cobra.ShellCompDirectiveNoFileComp
		if len(out) > 0 && !slices.ContainsFunc(out, func(v string) bool { return !strings.HasSuffix(v, "=") }) {
			d |= cobra.ShellCompDirectiveNoSpace
		}
		return out, d
	}
}

func withPrefix(values []string, prefix string) []cobra.Completion {
	var out []cobra.Completion
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// completeVersions offers the platform versions of the release catalog (--releases
// included), oldest first.
func (g *GlobalOptions) completeVersions(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	catalog, err := g.Catalog()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(catalog.Versions(), toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completeKubeconfig offers names from the kubeconfig (--kubeconfig, else KUBECONFIG or
// ~/.kube/config), as kubectl completes --context, --cluster and --user.
func (g *GlobalOptions) completeKubeconfig(names func(*clientcmdapi.Config) []string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cfg, err := g.ConfigFlags.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return withPrefix(names(&cfg), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeNamespaces offers the cluster's namespaces. Like every cluster lookup of a
// completion it is best effort: no cluster, no permission or no answer within
// completionTimeout offers nothing, silently.
func (g *GlobalOptions) completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ctx, cancel := completionContext(cmd)
	defer cancel()
	clients, err := g.Clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := clients.Kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(list.Items))
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	slices.Sort(names)
	return withPrefix(names, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// completePlatformNames offers the OntoPlatforms of the namespace (-n, else the
// kubeconfig's), described by their version and phase, for the one NAME a command takes.
func (g *GlobalOptions) completePlatformNames(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := completionContext(cmd)
	defer cancel()
	ns, err := g.currentNamespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	clients, err := g.Clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := clients.Dynamic.Resource(platformGVR()).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, p := range list.Items {
		if strings.HasPrefix(p.GetName(), toComplete) {
			out = append(out, cobra.CompletionWithDesc(p.GetName(), platformSummary(&p)))
		}
	}
	slices.Sort(out)
	return out, cobra.ShellCompDirectiveNoFileComp
}

// platformSummary is a platform's completion description: "1.6.0, Running".
func platformSummary(p *unstructured.Unstructured) string {
	var parts []string
	if v, _, _ := unstructured.NestedString(p.Object, "spec", "version"); v != "" {
		parts = append(parts, v)
	}
	if phase, _, _ := unstructured.NestedString(p.Object, "status", "phase"); phase != "" {
		parts = append(parts, phase)
	}
	return strings.Join(parts, ", ")
}

func platformGVR() schema.GroupVersionResource {
	return v1alpha1.GroupVersion.WithResource("ontoplatforms")
}

// completionContext is the command's context (cancelled by Ctrl-C) bounded by
// completionTimeout.
func completionContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, completionTimeout)
}
