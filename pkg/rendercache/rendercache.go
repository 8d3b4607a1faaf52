/*
Copyright 2026 The kubectl-onto Authors.

Licensed under the Apache License, Version 2.0.
*/

// Package rendercache keeps renders on disk, so that a command run again on an
// unchanged platform (a plan in CI, the apply after a plan, doctor) reads the objects
// instead of building them with kustomize: the render is most of the CPU time of such
// a run. Render is pure, so a render is a function of its inputs: the platform, the
// render options and the code doing the rendering. The key is a hash of all three, the
// last one being this executable (its path, size and modification time: a rebuild
// or an upgrade of the plugin is another key). Whatever goes wrong with the cache (a
// file unreadable, corrupt or from elsewhere) is a miss, and the render runs as
// without one.
package rendercache

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/coomia-dip/kubectl-onto/api/v1alpha1"
	"github.com/coomia-dip/kubectl-onto/pkg/buildinfo"
	"github.com/coomia-dip/kubectl-onto/pkg/render"
)

// DefaultMaxEntries is how many files a cache directory keeps: enough for the render
// and the validated document of each platform of a 100-tenant fleet, so a plan of all
// of them hits (a production platform's render is about 0.5 MB, a tenant's less).
const DefaultMaxEntries = 256

// Cache is a directory of renders, and of other results of this build kept by Put
// (the validator's documents found valid).
type Cache struct {
	// Dir holds one file per render; it is created (0700) on the first store.
	Dir string
	// Code identifies the renderer: renders of another build never match.
	Code string
	// MaxEntries bounds the files kept; DefaultMaxEntries when 0.
	MaxEntries int
	// Renderer renders on a miss; render.Render when nil.
	Renderer func(*v1alpha1.OntoPlatform, render.Options) ([]render.Plane, error)
}

// New is a cache in dir for renders by this executable.
func New(dir string) (*Cache, error) {
	code, err := executableIdentity()
	if err != nil {
		return nil, err
	}
	return &Cache{Dir: dir, Code: code}, nil
}

// executableIdentity names this build of the plugin: its version, and the path, size
// and modification time of its executable, which every rebuild changes.
func executableIdentity() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("render cache: find the executable: %w", err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", fmt.Errorf("render cache: %w", err)
	}
	return fmt.Sprintf("%s %s %d %d", buildinfo.Version, exe, fi.Size(), fi.ModTime().UnixNano()), nil
}

// entry is what a cache file holds: the key's inputs are not stored, only their hash
// (the file's name) and the planes.
type entry struct {
	Planes []render.Plane `json:"planes"`
}

// Render returns the render of p with opts: from the cache when it holds one made from
// the same inputs by this build, else rendered and stored. A failed render is not
// stored; a failed store is not an error (the render is returned all the same).
func (c *Cache) Render(p *v1alpha1.OntoPlatform, opts render.Options) ([]render.Plane, error) {
	key, err := c.key(p, opts)
	if err != nil {
		return c.render(p, opts)
	}
	if planes, ok := c.load(key); ok {
		return planes, nil
	}
	planes, err := c.render(p, opts)
	if err != nil {
		return nil, err
	}
	c.store(key, planes)
	return planes, nil
}

func (c *Cache) render(p *v1alpha1.OntoPlatform, opts render.Options) ([]render.Plane, error) {
	if c.Renderer != nil {
		return c.Renderer(p, opts)
	}
	return render.Render(p, opts)
}

// key hashes everything a render reads. The platform is hashed whole, status and
// metadata included: a field render does not read only costs a miss.
func (c *Cache) key(p *v1alpha1.OntoPlatform, opts render.Options) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "kubectl-onto render cache v1\n%s\n", c.Code)
	enc := json.NewEncoder(h)
	if err := enc.Encode(p); err != nil {
		return "", err
	}
	if err := enc.Encode(opts); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Get returns the bytes stored under key by Put in this build, for other results that
// are a function of their inputs and this build (pkg/spec's validated documents): key
// names the inputs, the file name hashes it with the build.
func (c *Cache) Get(key string) ([]byte, bool) {
	data, err := os.ReadFile(c.path(c.blobName(key)))
	if err != nil || len(data) == 0 {
		return nil, false
	}
	return data, true
}

// Put stores data under key, as store does a render; a failed store is a miss later.
func (c *Cache) Put(key string, data []byte) {
	c.write(c.blobName(key), data)
}

func (c *Cache) blobName(key string) string {
	sum := sha256.Sum256([]byte("kubectl-onto cache blob v1\n" + c.Code + "\n" + key))
	return hex.EncodeToString(sum[:])
}

// tempPrefix names the files a store writes before renaming them into place.
const tempPrefix = ".render-"

func (c *Cache) path(key string) string { return filepath.Join(c.Dir, key+".json") }

// load reads the render stored under key. apimachinery's JSON decoding gives integers
// as int64, as a render does.
func (c *Cache) load(key string) ([]render.Plane, bool) {
	data, err := os.ReadFile(c.path(key))
	if err != nil {
		return nil, false
	}
	var e entry
	if err := utiljson.Unmarshal(data, &e); err != nil || len(e.Planes) == 0 {
		return nil, false
	}
	for _, pl := range e.Planes {
		for _, o := range pl.Objects {
			if o == nil || o.Object == nil {
				return nil, false
			}
		}
	}
	return e.Planes, true
}

// store writes the render under key, whole or not at all (a temporary file renamed),
// readable by its owner only, then drops the oldest entries beyond MaxEntries.
func (c *Cache) store(key string, planes []render.Plane) {
	data, err := json.Marshal(entry{Planes: planes})
	if err != nil {
		return
	}
	c.write(key, data)
}

// write stores data under key, whole or not at all (a temporary file renamed), then
// prunes.
func (c *Cache) write(key string, data []byte) {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(c.Dir, tempPrefix+"*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), c.path(key)) != nil {
		_ = os.Remove(tmp.Name())
		return
	}
	c.prune()
}

// staleTemp is the age past which a temporary file is one a killed run left behind.
const staleTemp = 10 * time.Minute

// prune keeps the MaxEntries most recently written entries (renders and Put's), and
// drops the temporary files of stores that never finished (a run killed while writing).
func (c *Cache) prune() {
	max := c.MaxEntries
	if max <= 0 {
		max = DefaultMaxEntries
	}
	dirents, err := os.ReadDir(c.Dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		mod  int64
	}
	var files []file
	for _, d := range dirents {
		if strings.HasPrefix(d.Name(), tempPrefix) {
			if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) > staleTemp {
				_ = os.Remove(filepath.Join(c.Dir, d.Name()))
			}
			continue
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".json") {
			continue
		}
		if fi, err := d.Info(); err == nil {
			files = append(files, file{d.Name(), fi.ModTime().UnixNano()})
		}
	}
	if len(files) <= max {
		return
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(b.mod, a.mod) })
	for _, f := range files[max:] {
		_ = os.Remove(filepath.Join(c.Dir, f.name))
	}
}
