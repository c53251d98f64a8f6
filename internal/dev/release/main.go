// Command release builds orch-hook's release (README, "Releasing"): static
// binaries for every release platform, reproducible byte for byte from the
// same source and toolchain, their SHA256SUMS, the plugin archive a
// marketplace `archive` source installs, and that marketplace entry. It
// also keeps hooks/release.sha256, the committed checksums the plugin's
// bootstrap verifies a downloaded binary against, and -check rebuilds the
// binaries and compares them with it (make ci).
//
//	go run ./internal/dev/release -version 0.2.0 -out dist      # make release
//	go run ./internal/dev/release -check                        # make release-check
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/orch-hook/orch-hook/internal/bootstrap"
)

// Platforms are the release targets, as GOOS/GOARCH.
var Platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// ChecksumsFile is the committed list of the release binaries' SHA-256, one
// "<hex>  v<version>/<binary>" line each: the path is where the binary lies
// under the download base URL.
const ChecksumsFile = "hooks/release.sha256"

// DefaultBase is where the release's files are published (GitHub release
// assets live under <base>/v<version>/).
const DefaultBase = "https://github.com/orch-hook/orch-hook/releases/download"

// BuildTags and the link flags are the ones `make build` uses.
const BuildTags = "urfave_cli_no_docs"

// BinaryName is the release name of the binary for one platform; the plugin
// bootstrap computes the same name from uname.
func BinaryName(platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	name := "orch-hook-" + goos + "-" + goarch
	if goos == "windows" {
		name += ".exe"
	}
	return name
}

// ArchiveName is the plugin archive of a version.
// Claude Code's archive source takes a zip only (a tar.gz fails to
// install with "invalid zip data"), with the plugin at its top.
func ArchiveName(version string) string { return "orch-hook-plugin-v" + version + ".zip" }

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("release", flag.ContinueOnError)
	version := flags.String("version", "", "the version to release (must be .claude-plugin/plugin.json's)")
	out := flags.String("out", "dist", "where the release goes (a v<version>/ directory is made in it)")
	base := flags.String("base", DefaultBase, "the URL the release's files are published under (the marketplace entry points at <base>/v<version>/<archive>)")
	check := flags.Bool("check", false, "rebuild the binaries and compare them with "+ChecksumsFile+"; write nothing")
	checksumsOnly := flags.Bool("checksums-only", false, "build the binaries and rewrite "+ChecksumsFile+"; no archive")
	allowDirty := flags.Bool("allow-dirty", false, "archive the work tree even where it differs from the commit (tests)")
	pin := flags.Bool("pin", false, "rewrite "+ChecksumsFile+" with the binaries' checksums (commit it: the bootstrap verifies downloads against it)")
	root := flags.String("root", ".", "the repository root")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	want, err := bootstrap.PluginVersion(*root)
	if err != nil {
		return err
	}
	if *version == "" {
		*version = want
	}
	if !bootstrap.ValidVersion(*version) {
		return fmt.Errorf("version %q is not x.y.z", *version)
	}
	if *version != want {
		return fmt.Errorf("VERSION=%s but .claude-plugin/plugin.json says %s: set the version there, run make generate, then make release", *version, want)
	}
	toolchain, err := goToolchain(*root)
	if err != nil {
		return err
	}
	if *check {
		return checkRelease(*root, *version, toolchain, stdout)
	}
	return release(*root, *version, toolchain, *out, *base, *checksumsOnly, *pin || *checksumsOnly, *allowDirty, stdout)
}

// goToolchain is the toolchain go.mod pins: its go line (go drops a
// toolchain line equal to it), as a GOTOOLCHAIN value such as go1.26.8.
func goToolchain(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	var goLine, toolchain string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && fields[0] == "go" {
			goLine = "go" + fields[1]
		}
		if len(fields) == 2 && fields[0] == "toolchain" {
			toolchain = fields[1]
		}
	}
	if toolchain != "" {
		return toolchain, nil
	}
	if strings.Count(goLine, ".") != 2 {
		return "", fmt.Errorf("go.mod's go line %q does not name a toolchain release (go 1.x.y)", goLine)
	}
	return goLine, nil
}

// build compiles one platform's binary into dir and returns its path. The
// environment is pinned so the bytes depend only on the source and the
// toolchain: no cgo, the baseline instruction sets, no inherited GOFLAGS.
func build(root, version, toolchain, platform, dir string) (string, error) {
	goos, goarch, _ := strings.Cut(platform, "/")
	out := filepath.Join(dir, BinaryName(platform))
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-tags", BuildTags,
		"-ldflags", "-s -w -X main.version="+version, "-o", abs, "./cmd/orch-hook")
	cmd.Dir = root
	cmd.Env = buildEnv(os.Environ(), goos, goarch, toolchain)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", platform, err, b)
	}
	info, err := buildinfo.ReadFile(abs)
	if err != nil {
		return "", err
	}
	if info.GoVersion != toolchain {
		return "", fmt.Errorf("%s was built with %s, not %s (go.mod)", out, info.GoVersion, toolchain)
	}
	return abs, nil
}

// buildEnv is env with every setting that changes the binary pinned:
// GOENV=off ignores the user's `go env -w` file (which can set GOFIPS140 or
// GO111MODULE), GOWORK=off a go.work above the checkout.
func buildEnv(env []string, goos, goarch, toolchain string) []string {
	pinned := []string{"CGO_ENABLED=0", "GOOS=" + goos, "GOARCH=" + goarch,
		"GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=", "GOEXPERIMENT=", "GOTOOLCHAIN=" + toolchain,
		"GOENV=off", "GOWORK=off", "GOFIPS140=off", "GO111MODULE=on"}
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.ContainsFunc(pinned, func(p string) bool { return strings.HasPrefix(p, k+"=") }) {
			out = append(out, kv)
		}
	}
	return append(out, pinned...)
}

func sha256File(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// buildAll builds every platform into dir and returns each binary's sum.
func buildAll(root, version, toolchain, dir string, stdout io.Writer) (map[string]string, error) {
	sums := map[string]string{}
	for _, p := range Platforms {
		bin, err := build(root, version, toolchain, p, dir)
		if err != nil {
			return nil, err
		}
		sum, err := sha256File(bin)
		if err != nil {
			return nil, err
		}
		sums[BinaryName(p)] = sum
		fmt.Fprintf(stdout, "%s  %s\n", sum, BinaryName(p))
	}
	return sums, nil
}

// checksumLines renders sums sorted by name, each name prefixed.
func checksumLines(sums map[string]string, prefix string) []byte {
	names := make([]string, 0, len(sums))
	for n := range sums {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "%s  %s%s\n", sums[n], prefix, n)
	}
	return b.Bytes()
}

func checkRelease(root, version, toolchain string, stdout io.Writer) error {
	committed, err := os.ReadFile(filepath.Join(root, ChecksumsFile))
	if err != nil {
		return fmt.Errorf("%s: %v (make release VERSION=%s writes it)", ChecksumsFile, err, version)
	}
	dir, err := os.MkdirTemp("", "orch-hook-release-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sums, err := buildAll(root, version, toolchain, dir, io.Discard)
	if err != nil {
		return err
	}
	rebuilt := checksumLines(sums, "v"+version+"/")
	if !bytes.Equal(rebuilt, committed) {
		return fmt.Errorf("%s does not match the binaries this source builds with %s:\ncommitted:\n%srebuilt:\n%srun make release VERSION=%s (or make checksums) and commit %s",
			ChecksumsFile, toolchain, committed, rebuilt, version, ChecksumsFile)
	}
	fmt.Fprintf(stdout, "%s matches the %d binaries rebuilt with %s\n", ChecksumsFile, len(sums), toolchain)
	return nil
}

func release(root, version, toolchain, out, base string, checksumsOnly, pin, allowDirty bool, stdout io.Writer) error {
	dir := filepath.Join(out, "v"+version)
	if checksumsOnly {
		tmp, err := os.MkdirTemp("", "orch-hook-checksums-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sums, err := buildAll(root, version, toolchain, dir, stdout)
	if err != nil {
		return err
	}
	pins := checksumLines(sums, "v"+version+"/")
	if pin {
		if err := os.WriteFile(filepath.Join(root, ChecksumsFile), pins, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", ChecksumsFile)
	}
	if checksumsOnly {
		return nil
	}
	files, err := pluginFiles(root, allowDirty)
	if err != nil {
		return err
	}
	// The archive pins its own binaries, whatever the work tree's file says.
	pinsFile := filepath.Join(dir, ".release.sha256")
	if err := os.WriteFile(pinsFile, pins, 0o644); err != nil {
		return err
	}
	defer os.Remove(pinsFile)
	files = slices.DeleteFunc(files, func(f archiveFile) bool { return f.name == ChecksumsFile })
	files = append(files, archiveFile{name: ChecksumsFile, src: pinsFile, mode: 0o644})
	for _, p := range Platforms {
		files = append(files, archiveFile{name: "bin/" + BinaryName(p), src: filepath.Join(dir, BinaryName(p)), mode: 0o755})
	}
	archive := filepath.Join(dir, ArchiveName(version))
	if err := writeArchive(archive, files); err != nil {
		return err
	}
	archiveSum, err := sha256File(archive)
	if err != nil {
		return err
	}
	sums[ArchiveName(version)] = archiveSum
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), checksumLines(sums, ""), 0o644); err != nil {
		return err
	}
	entry, err := marketplaceEntry(root, version, strings.TrimSuffix(base, "/")+"/v"+version+"/"+ArchiveName(version), archiveSum)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "marketplace.json"), entry, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s  %s\nwrote %s (SHA256SUMS, marketplace.json, the archive and %d binaries)\n", archiveSum, ArchiveName(version), dir, len(Platforms))
	return nil
}

// archiveFile is one entry of the plugin archive.
type archiveFile struct {
	name string // slash path inside the archive
	src  string // file on disk
	mode int64
}

// pluginFiles are the repository's tracked files a plugin needs: the
// plugin proper (manifest, commands, agents, hooks, the bootstrap) and the
// Go source, so a platform without a release binary can still build one.
// Tests, test data and CI files are left out. Modes come from git's index
// (not the file system, which core.fileMode=false or a copy can change);
// contents from the work tree, which must then be the commit's unless
// allowDirty (a test's release of work in progress).
func pluginFiles(root string, allowDirty bool) ([]archiveFile, error) {
	cmd := exec.Command("git", "ls-files", "-s", "-z")
	cmd.Dir = root
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files (a release is made from a git checkout): %v", err)
	}
	var files []archiveFile
	for _, rec := range strings.Split(strings.TrimRight(string(b), "\x00"), "\x00") {
		// "<mode> <object> <stage>\t<path>"
		meta, name, ok := strings.Cut(rec, "\t")
		if !ok || excluded(name) {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			return nil, fmt.Errorf("%s is tracked but %v", name, err)
		}
		mode := int64(0o644)
		if strings.HasPrefix(meta, "100755 ") {
			mode = 0o755
		}
		files = append(files, archiveFile{name: name, src: filepath.Join(root, name), mode: mode})
	}
	if allowDirty {
		return files, nil
	}
	st := exec.Command("git", "status", "--porcelain", "--untracked-files=no")
	st.Dir = root
	dirty, err := st.Output()
	if err != nil {
		return nil, fmt.Errorf("git status: %v", err)
	}
	var changed []string
	for _, line := range strings.Split(strings.TrimRight(string(dirty), "\n"), "\n") {
		if len(line) > 3 && !excluded(line[3:]) {
			changed = append(changed, line[3:])
		}
	}
	if len(changed) > 0 {
		return nil, fmt.Errorf("the work tree differs from the commit in %s: commit them first (a release's archive is the commit's files)", strings.Join(changed, ", "))
	}
	return files, nil
}

func excluded(name string) bool {
	if strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, ".ci/") || strings.HasPrefix(name, ".github/") ||
		strings.HasPrefix(name, "internal/dev/e2e/") || strings.HasPrefix(name, "internal/dev/procbench/") || name == ".gitignore" {
		return true
	}
	for _, part := range strings.Split(path.Dir(name), "/") {
		if part == "testdata" {
			return true
		}
	}
	return false
}

// archiveTime is every entry's modification time: a fixed one, so the
// archive's bytes depend only on its contents.
var archiveTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// writeArchive writes a zip of files, sorted by name, with one fixed time
// and the modes the files need (the binaries executable): the same files
// give the same bytes. Directories get entries of their own.
func writeArchive(dst string, files []archiveFile) error {
	dirs := map[string]bool{}
	for _, f := range files {
		for d := path.Dir(f.name); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	entries := append([]archiveFile{}, files...)
	for d := range dirs {
		entries = append(entries, archiveFile{name: d + "/", mode: 0o755})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range entries {
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: archiveTime}
		if strings.HasSuffix(f.name, "/") {
			hdr.Method = zip.Store
			hdr.SetMode(fs.ModeDir | 0o755)
			if _, err := zw.CreateHeader(hdr); err != nil {
				return err
			}
			continue
		}
		hdr.SetMode(fs.FileMode(f.mode))
		b, err := os.ReadFile(f.src)
		if err != nil {
			return err
		}
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(dst, buf.Bytes(), 0o644)
}

// marketplaceEntry is the release's marketplace.json: the repository's own
// marketplace with the plugin's source replaced by the archive, pinned by
// its SHA-256.
func marketplaceEntry(root, version, url, sum string) ([]byte, error) {
	b, err := os.ReadFile(filepath.Join(root, ".claude-plugin", "marketplace.json"))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf(".claude-plugin/marketplace.json: %v", err)
	}
	plugins, _ := m["plugins"].([]any)
	found := false
	for _, p := range plugins {
		entry, ok := p.(map[string]any)
		if !ok || entry["name"] != "orch-hook" {
			continue
		}
		entry["source"] = ArchiveSource(url, sum)
		entry["version"] = version
		found = true
	}
	if !found {
		return nil, fmt.Errorf(".claude-plugin/marketplace.json lists no plugin named orch-hook")
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// ArchiveSource is a marketplace plugin source for an archive at url.
func ArchiveSource(url, sum string) map[string]any {
	return map[string]any{"source": "archive", "url": url, "sha256": sum}
}
