/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

package testimages

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coomia-dip/kubectl-onto/internal/image"
)

// The Debian packages of the backing-service images are pinned in debian.lock, one
// "image package=version" a line: the same lock gives the same files. -lock rewrites
// it from the archive's candidates (apt-get update first): each image's root packages
// and, recursively, the library packages they depend on.

//go:embed debian.lock
var debianLock string

// debianRoots are the packages of each image whose programs it runs; the libraries
// they need are found from the packages' Depends. busybox-static gives sh and the
// tools the pods' scripts use, bash the postgres scripts' shell, tzdata the time
// zones Debian's postgres reads from /usr/share/zoneinfo.
var debianRoots = map[string][]string{
	"redis":    {"redis-server", "redis-tools", "redis-sentinel", "busybox-static"},
	"postgres": {"postgresql-15", "postgresql-client-15", "bash", "busybox-static", "tzdata"},
}

// debianSkip are dependencies left out: LLVM (90 MB) serves only postgres's JIT,
// whose plugin the image leaves out too (jit is then off, as the server reports).
var debianSkip = map[string]bool{"libllvm14": true}

// isLibraryPackage: the dependencies followed are libraries (and zlib1g); the others
// (adduser, postgresql-common with perl, tzdata, debconf, ...) serve a Debian system's
// installation, not the programs.
func isLibraryPackage(name string) bool {
	return (strings.HasPrefix(name, "lib") || name == "zlib1g") && !debianSkip[name]
}

// Pin is one package at one version.
type Pin struct{ Package, Version string }

func (p Pin) String() string { return p.Package + "=" + p.Version }

// debianPins are the lock's pins of an image, in the lock's order.
func debianPins(img string) ([]Pin, error) {
	var out []Pin
	for i, line := range strings.Split(debianLock, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, pin, ok := strings.Cut(line, " ")
		pkg, ver, ok2 := strings.Cut(pin, "=")
		if !ok || !ok2 {
			return nil, fmt.Errorf("debian.lock:%d: want \"image package=version\"", i+1)
		}
		if name == img {
			out = append(out, Pin{pkg, ver})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("debian.lock pins nothing for %s", img)
	}
	return out, nil
}

// debFilePattern matches apt's file name of a pinned package (the epoch's colon
// escaped; the architecture amd64, or all for a package without code).
func debFilePattern(p Pin) string {
	return p.Package + "_" + strings.ReplaceAll(p.Version, ":", "%3a") + "_*.deb"
}

// debFile is the cached .deb of p, "" when there is none.
func debFile(dir string, p Pin) string {
	m, _ := filepath.Glob(filepath.Join(dir, debFilePattern(p)))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// fetchDebs returns the .deb file of each pin, downloaded by apt-get into dir once.
func fetchDebs(ctx context.Context, dir string, pins []Pin, stderr io.Writer) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var missing []string
	for _, p := range pins {
		if f := debFile(dir, p); f != "" {
			out[p.Package] = f
		} else {
			missing = append(missing, p.String())
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	tmp, err := os.MkdirTemp(dir, "download-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "apt-get", append([]string{"download", "-q"}, missing...)...)
	cmd.Dir = tmp
	var msgs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msgs, &msgs
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("apt-get download %s: %w\n%s\n(a pin of internal/testimages/debian.lock the archive no longer has: run apt-get update, then go run ./hack/testimages -lock)",
			strings.Join(missing, " "), err, msgs.Bytes())
	}
	for _, p := range pins {
		if out[p.Package] != "" {
			continue
		}
		f := debFile(tmp, p)
		if f == "" {
			return nil, fmt.Errorf("apt-get download left no %s", debFilePattern(p))
		}
		if err := os.Rename(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			return nil, err
		}
		out[p.Package] = filepath.Join(dir, filepath.Base(f))
	}
	if stderr != nil {
		fmt.Fprintf(stderr, "downloaded %d Debian packages into %s\n", len(missing), dir)
	}
	return out, nil
}

// ResolveDebian finds the candidate versions of an image's root packages and, through
// their Depends and Pre-Depends (the first of alternatives), of the library packages
// they need, downloading each into dir to read its fields.
func ResolveDebian(ctx context.Context, dir, img string) ([]Pin, error) {
	roots, ok := debianRoots[img]
	if !ok {
		return nil, fmt.Errorf("no Debian image %s", img)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	seen := map[string]Pin{}
	todo := slices.Clone(roots)
	for len(todo) > 0 {
		pkg := todo[0]
		todo = todo[1:]
		if _, ok := seen[pkg]; ok {
			continue
		}
		out, err := exec.CommandContext(ctx, "apt-cache", "policy", pkg).Output()
		if err != nil {
			return nil, fmt.Errorf("apt-cache policy %s: %w", pkg, err)
		}
		var ver string
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate: "); ok {
				ver = v
			}
		}
		if ver == "" || ver == "(none)" {
			return nil, fmt.Errorf("%s: no candidate version (apt-get update?)", pkg)
		}
		p := Pin{pkg, ver}
		seen[pkg] = p
		debs, err := fetchDebs(ctx, dir, []Pin{p}, nil)
		if err != nil {
			return nil, err
		}
		for _, field := range []string{"Pre-Depends", "Depends"} {
			out, err := exec.CommandContext(ctx, "dpkg-deb", "--field", debs[pkg], field).Output()
			if err != nil {
				return nil, fmt.Errorf("dpkg-deb --field %s %s: %w", debs[pkg], field, err)
			}
			for _, dep := range strings.Split(string(out), ",") {
				dep, _, _ = strings.Cut(dep, "|")
				dep, _, _ = strings.Cut(strings.TrimSpace(dep), " ")
				dep, _, _ = strings.Cut(dep, ":")
				if dep != "" && isLibraryPackage(dep) {
					todo = append(todo, dep)
				}
			}
		}
	}
	pins := slices.Collect(maps.Values(seen))
	slices.SortFunc(pins, func(a, b Pin) int { return strings.Compare(a.Package, b.Package) })
	return pins, nil
}

// WriteDebianLock writes the lock of every Debian image, resolved now, to path.
func WriteDebianLock(ctx context.Context, dir, path string) error {
	var b strings.Builder
	b.WriteString("# The Debian packages of the test images, \"image package=version\": written by\n")
	b.WriteString("# go run ./hack/testimages -lock (after apt-get update), read by the image build.\n")
	for _, img := range slices.Sorted(maps.Keys(debianRoots)) {
		pins, err := ResolveDebian(ctx, dir, img)
		if err != nil {
			return fmt.Errorf("%s: %w", img, err)
		}
		for _, p := range pins {
			fmt.Fprintf(&b, "%s %s\n", img, p)
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// debianDropped are paths of the packages the images leave out: documentation,
// translations, and what only an installed Debian system uses.
var debianDropped = []string{
	"usr/share/doc/", "usr/share/man/", "usr/share/info/", "usr/share/lintian/", "usr/share/locale/",
	"usr/share/bug/", "usr/share/doc-base/", "usr/share/bash-completion/", "usr/share/menu/",
	"etc/init.d/", "etc/logrotate.d/", "etc/default/", "lib/systemd/", "usr/lib/systemd/",
	"etc/systemd/", "usr/lib/tmpfiles.d/", "etc/apparmor.d/",
	// postgres's JIT plugin (it needs libLLVM, left out) and its LLVM bitcode.
	"usr/lib/postgresql/15/lib/llvmjit.so", "usr/lib/postgresql/15/lib/llvmjit_types.bc", "usr/lib/postgresql/15/lib/bitcode/",
}

// usrMerged maps a path of a package into the merged /usr, as Debian 12 systems have
// it: /bin, /sbin, /lib and /lib64 are links into /usr.
func usrMerged(name string) string {
	for _, d := range []string{"bin", "sbin", "lib", "lib64"} {
		if name == d || strings.HasPrefix(name, d+"/") {
			return "usr/" + name
		}
	}
	return name
}

// extractDeb reads the files of a .deb (dpkg-deb --fsys-tarfile) into files: root's,
// mode bits kept but setuid and setgid, hard links as copies, names in the merged
// /usr, dropped paths left out.
func extractDeb(ctx context.Context, deb string, files map[string]image.File) error {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", deb)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(bufio.NewReaderSize(out, 1<<20))
	var readErr error
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
		name := strings.TrimPrefix(path.Clean(h.Name), "./")
		if name == "." || name == "" {
			continue
		}
		name = usrMerged(name)
		if dropped(name) {
			continue
		}
		mode := h.Mode & 0o1777
		switch h.Typeflag {
		case tar.TypeDir:
			name += "/"
			if _, ok := files[name]; !ok {
				files[name] = image.File{Name: name, Mode: mode}
			}
		case tar.TypeSymlink:
			files[name] = image.File{Name: name, Mode: 0o777, Symlink: h.Linkname}
		case tar.TypeLink:
			target := usrMerged(strings.TrimPrefix(path.Clean(h.Linkname), "./"))
			t, ok := files[target]
			if !ok {
				readErr = fmt.Errorf("%s: hard link %s to %s, not seen before it", deb, name, target)
				break
			}
			t.Name, t.Mode = name, mode
			files[name] = t
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				readErr = err
				break
			}
			files[name] = image.File{Name: name, Mode: mode, Data: data}
		}
		if readErr != nil {
			break
		}
	}
	_, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("dpkg-deb --fsys-tarfile %s: %w\n%s", deb, err, stderr.Bytes())
	}
	return readErr
}

func dropped(name string) bool {
	for _, d := range debianDropped {
		if name == strings.TrimSuffix(d, "/") || strings.HasPrefix(name, d) {
			return true
		}
	}
	return false
}

// addParents adds the missing parent directories of every file (0755, root's).
func addParents(files map[string]image.File) {
	for name := range maps.Clone(files) {
		dir := path.Dir(strings.TrimSuffix(name, "/"))
		for dir != "." && dir != "/" {
			if _, ok := files[dir+"/"]; !ok {
				files[dir+"/"] = image.File{Name: dir + "/", Mode: 0o755}
			}
			dir = path.Dir(dir)
		}
	}
}

// resolve follows symbolic links of the image's tree to the file name names (a path
// in the image), at most 40 deep; "" when it leads nowhere.
func resolve(files map[string]image.File, name string) string {
	for range 40 {
		if f, ok := files[name]; ok {
			if f.Symlink == "" {
				return name
			}
			name = linkTarget(name, f.Symlink)
			continue
		}
		// A link among the parents (lib -> usr/lib).
		parts := strings.Split(name, "/")
		moved := false
		for i := 1; i < len(parts) && !moved; i++ {
			parent := strings.Join(parts[:i], "/")
			if p, ok := files[parent]; ok && p.Symlink != "" {
				name = path.Join(linkTarget(parent, p.Symlink), strings.Join(parts[i:], "/"))
				moved = true
			}
		}
		if !moved {
			return ""
		}
	}
	return ""
}

// linkTarget is the path a link at name to target points to.
func linkTarget(name, target string) string {
	if path.IsAbs(target) {
		return strings.TrimPrefix(path.Clean(target), "/")
	}
	return path.Join(path.Dir(name), target)
}

// libraryDirs are where the dynamic linker of Debian's glibc looks without an
// ld.so.cache, in the merged /usr.
var libraryDirs = []string{"usr/lib/x86_64-linux-gnu", "usr/lib"}

// checkLibraries checks that every shared library each ELF file of the tree needs
// (DT_NEEDED) is in the tree, in the library directories or the file's RUNPATH: a
// missing one would fail only when the program starts in a pod.
func checkLibraries(files map[string]image.File) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(files)) {
		f := files[name]
		if f.Symlink != "" || !bytes.HasPrefix(f.Data, []byte("\x7fELF")) {
			continue
		}
		ef, err := elf.NewFile(bytes.NewReader(f.Data))
		if err != nil {
			continue
		}
		needed, err := ef.ImportedLibraries()
		if err != nil {
			ef.Close()
			continue
		}
		dirs := slices.Clone(libraryDirs)
		for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
			rp, _ := ef.DynString(tag)
			for _, r := range rp {
				for _, d := range strings.Split(r, ":") {
					d = strings.ReplaceAll(d, "$ORIGIN", "/"+path.Dir(name))
					dirs = append(dirs, strings.TrimPrefix(path.Clean(d), "/"))
				}
			}
		}
		ef.Close()
		for _, lib := range needed {
			found := false
			for _, d := range dirs {
				if resolve(files, path.Join(d, lib)) != "" {
					found = true
					break
				}
			}
			if !found {
				errs = append(errs, fmt.Errorf("/%s needs %s, which no package of the image has", name, lib))
			}
		}
	}
	return errors.Join(errs...)
}
