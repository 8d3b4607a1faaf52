/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testimages

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/coomia-dip/kubectl-onto/internal/image"
)

//go:embed files/postgres-entrypoint.sh
var postgresEntrypoint []byte

// busyboxApplets are linked to busybox in /usr/bin, where no package put a program of
// the name: the shell and the tools the rendered pods' scripts and probes use.
var busyboxApplets = []string{
	"[", "ash", "awk", "basename", "cat", "chmod", "cp", "cut", "date", "dirname", "du", "echo", "env",
	"expr", "false", "find", "grep", "gunzip", "gzip", "head", "hostname", "id", "kill", "ln", "ls",
	"mkdir", "mktemp", "mv", "nc", "printf", "ps", "readlink", "rm", "sed", "seq", "sh", "sleep", "sort",
	"stat", "tail", "tee", "test", "timeout", "touch", "tr", "true", "uname", "uniq", "wc", "xargs", "zcat",
}

// debianPath is the PATH of the Debian images (postgres's programs are not in /usr/bin:
// Debian links them there through postgresql-common's perl wrapper, left out).
const debianPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// userFiles are /etc/passwd and /etc/group with root and one service user.
func userFiles(user string, uid int, home string) []image.File {
	return []image.File{
		{Name: "etc/passwd", Mode: 0o644, Data: fmt.Appendf(nil, "root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:%s:/bin/sh\n", user, uid, uid, user, home)},
		{Name: "etc/group", Mode: 0o644, Data: fmt.Appendf(nil, "root:x:0:\n%s:x:%d:\n", user, uid)},
	}
}

// debian assembles redis or postgres from the pinned packages, with busybox's tools,
// the merged-/usr links, its user and the directories its pods write (volumes in the
// pods: the root filesystem is read-only there).
func (b *Builder) debian(ctx context.Context, imgName string) ([]Tagged, error) {
	pins, err := debianPins(imgName)
	if err != nil {
		return nil, err
	}
	debs, err := fetchDebs(ctx, filepath.Join(b.CacheDir, "debs"), pins, b.Stderr)
	if err != nil {
		return nil, err
	}
	files := map[string]image.File{}
	for _, p := range pins {
		if err := extractDeb(ctx, debs[p.Package], files); err != nil {
			return nil, err
		}
	}
	// Debian's postinst scripts and maintainer config are not run: what they would
	// leave that the programs need is added here.
	for _, d := range []string{"bin", "sbin", "lib", "lib64"} {
		files[d] = image.File{Name: d, Mode: 0o777, Symlink: "usr/" + d}
	}
	for _, a := range busyboxApplets {
		if _, ok := files["usr/bin/"+a]; !ok {
			files["usr/bin/"+a] = image.File{Name: "usr/bin/" + a, Mode: 0o777, Symlink: "busybox"}
		}
	}
	add := func(fs ...image.File) {
		for _, f := range fs {
			files[f.Name] = f
		}
	}
	add(image.File{Name: "tmp/", Mode: 0o1777}, image.File{Name: "root/", Mode: 0o700})
	roots, err := image.CARoots()
	if err != nil {
		return nil, err
	}
	add(image.File{Name: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Data: roots})

	var cfg v1.Config
	tag := ""
	switch imgName {
	case "redis":
		// The official image's redis user is 999, which the rendered pods run as.
		add(userFiles("redis", 999, "/data")...)
		add(image.File{Name: "data/", Mode: 0o755, UID: 999, GID: 999}, image.File{Name: "etc/redis/", Mode: 0o755})
		tag = RedisTag
		cfg = v1.Config{
			User: "999:999", Cmd: []string{"redis-server"}, WorkingDir: "/data", Env: []string{"PATH=" + debianPath},
			ExposedPorts: map[string]struct{}{"6379/tcp": {}},
		}
	case "postgres":
		// As the official image: initdb writes a postgresql.conf that listens on every
		// address (the sample's default is localhost only).
		const sample = "usr/share/postgresql/15/postgresql.conf.sample"
		conf, ok := files[sample]
		if !ok || !bytes.Contains(conf.Data, []byte("#listen_addresses = 'localhost'")) {
			return nil, fmt.Errorf("%s: no listen_addresses line to change", sample)
		}
		conf.Data = bytes.Replace(conf.Data, []byte("#listen_addresses = 'localhost'"), []byte("listen_addresses = '*'"), 1)
		files[sample] = conf
		add(userFiles("postgres", 999, "/var/lib/postgresql")...)
		add(
			image.File{Name: "usr/local/", Mode: 0o755},
			image.File{Name: "usr/local/bin/", Mode: 0o755},
			image.File{Name: "usr/local/bin/docker-entrypoint.sh", Mode: 0o755, Data: postgresEntrypoint},
			image.File{Name: "docker-entrypoint-initdb.d/", Mode: 0o755},
			image.File{Name: "var/lib/postgresql/", Mode: 0o755, UID: 999, GID: 999},
			image.File{Name: "var/lib/postgresql/data/", Mode: 0o700, UID: 999, GID: 999},
			image.File{Name: "var/run/postgresql/", Mode: 0o3775, UID: 999, GID: 999},
		)
		tag = PostgresTag
		cfg = v1.Config{
			User: "999:999", Entrypoint: []string{"docker-entrypoint.sh"}, Cmd: []string{"postgres"},
			Env: []string{
				"PATH=" + debianPath + ":/usr/lib/postgresql/15/bin",
				"PGDATA=/var/lib/postgresql/data",
			},
			StopSignal:   "SIGINT",
			ExposedPorts: map[string]struct{}{"5432/tcp": {}},
		}
	}
	addParents(files)
	if err := checkLibraries(files); err != nil {
		return nil, err
	}
	var pkgs []string
	for _, p := range pins {
		pkgs = append(pkgs, p.String())
	}
	cfg.Labels = labels(imgName, tag)
	cfg.Labels["onto.test/debian-packages"] = strings.Join(pkgs, " ")
	img, err := oneLayerImage(slices.Collect(maps.Values(files)), "Debian 12 packages: "+strings.Join(pkgs, " "), cfg)
	if err != nil {
		return nil, err
	}
	return []Tagged{{Name: imgName, Tag: tag, Image: img}}, nil
}
