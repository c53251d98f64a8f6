package state

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// tstConfineDirs returns a resolved project root and a resolved directory
// outside it.
func tstConfineDirs(t *testing.T) (root, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside = filepath.Join(base, "project"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func tstSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

func tstConfineIs(t *testing.T, root, path, want string, wantInside bool) {
	t.Helper()
	got, inside := Confine(root, path)
	if got != want || inside != wantInside {
		t.Errorf("Confine(%q, %q) = %q, %v; want %q, %v", root, path, got, inside, want, wantInside)
	}
}

func TestConfinePlainFileInside(t *testing.T) {
	root, _ := tstConfineDirs(t)
	f := filepath.Join(root, "a.txt")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tstConfineIs(t, root, f, f, true)
	tstConfineIs(t, root, "a.txt", f, true)
	tstConfineIs(t, root, "./sub/../a.txt", f, true)
	tstConfineIs(t, root, root, root, true)
	tstConfineIs(t, root, "../outside/x", filepath.Join(filepath.Dir(root), "outside", "x"), false)
}

func TestConfineNonexistentInside(t *testing.T) {
	root, _ := tstConfineDirs(t)
	want := filepath.Join(root, "no", "such", "dir", "f.go")
	tstConfineIs(t, root, want, want, true)
	tstConfineIs(t, root, "no/such/dir/f.go", want, true)
	// ".." out of a missing directory climbs back lexically.
	tstConfineIs(t, root, filepath.Join(root, "no")+"/../../x", filepath.Join(filepath.Dir(root), "x"), false)
}

func TestConfineSymlinkedDirOutside(t *testing.T) {
	root, outside := tstConfineDirs(t)
	tstSymlink(t, outside, filepath.Join(root, "out"))
	tstConfineIs(t, root, filepath.Join(root, "out", "f"), filepath.Join(outside, "f"), false)
	tstConfineIs(t, root, "out/new/f", filepath.Join(outside, "new", "f"), false)
}

func TestConfineDanglingLastLinkOutside(t *testing.T) {
	root, outside := tstConfineDirs(t)
	abs := filepath.Join(outside, "f")
	tstSymlink(t, abs, filepath.Join(root, "src-link"))
	tstConfineIs(t, root, filepath.Join(root, "src-link"), abs, false)

	tstSymlink(t, filepath.Join("..", "outside", "g"), filepath.Join(root, "rel-link"))
	tstConfineIs(t, root, "rel-link", filepath.Join(outside, "g"), false)

	// A dangling link whose target's directory is missing too.
	tstSymlink(t, filepath.Join(outside, "a", "b"), filepath.Join(root, "deep-link"))
	tstConfineIs(t, root, "deep-link", filepath.Join(outside, "a", "b"), false)
}

func TestConfineDanglingLinkInside(t *testing.T) {
	root, _ := tstConfineDirs(t)
	tstSymlink(t, "later/f.txt", filepath.Join(root, "l"))
	tstConfineIs(t, root, "l", filepath.Join(root, "later", "f.txt"), true)
}

func TestConfineLinkChain(t *testing.T) {
	root, outside := tstConfineDirs(t)
	tstSymlink(t, filepath.Join(outside, "end"), filepath.Join(outside, "c"))
	tstSymlink(t, filepath.Join(outside, "c"), filepath.Join(root, "b"))
	tstSymlink(t, "b", filepath.Join(root, "a"))
	tstConfineIs(t, root, "a", filepath.Join(outside, "end"), false)

	tstSymlink(t, filepath.Join(root, "z"), filepath.Join(outside, "y"))
	tstSymlink(t, filepath.Join(outside, "y"), filepath.Join(root, "x"))
	tstConfineIs(t, root, "x", filepath.Join(root, "z"), true)
}

func TestConfineLinkLoop(t *testing.T) {
	root, _ := tstConfineDirs(t)
	tstSymlink(t, "loop2", filepath.Join(root, "loop1"))
	tstSymlink(t, "loop1", filepath.Join(root, "loop2"))
	tstSymlink(t, "self", filepath.Join(root, "self"))
	for _, p := range []string{"loop1", "loop2/x", filepath.Join(root, "self")} {
		if got, inside := Confine(root, p); inside {
			t.Errorf("Confine(%q) = %q, inside; want not confined", p, got)
		}
	}
	// 40 links are followed; the 41st is refused.
	prev := "end"
	for i := 0; i < 41; i++ {
		name := "chain" + strings.Repeat("x", i)
		tstSymlink(t, prev, filepath.Join(root, name))
		prev = name
		want := i < 40
		if _, inside := Confine(root, name); inside != want {
			t.Errorf("a chain of %d links: inside %v, want %v", i+1, inside, want)
		}
	}
	if got := ResolvedRoot(filepath.Join(root, "self")); got != filepath.Join(root, "self") {
		t.Errorf("ResolvedRoot of a loop = %q", got)
	}
}

func TestConfineDotDotAfterSymlink(t *testing.T) {
	root, outside := tstConfineDirs(t)
	if err := os.Mkdir(filepath.Join(outside, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tstSymlink(t, filepath.Join(outside, "sub"), filepath.Join(root, "link"))
	want := filepath.Join(outside, "x")
	tstConfineIs(t, root, filepath.Join(root, "link")+"/../x", want, false)
	tstConfineIs(t, root, "link/../x", want, false)
}

func TestConfineLinkToSettings(t *testing.T) {
	root, _ := tstConfineDirs(t)
	if err := os.Mkdir(filepath.Join(root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(root, ".claude", "settings.local.json")
	tstSymlink(t, settings, filepath.Join(root, "notes.md"))
	tstSymlink(t, ".claude", filepath.Join(root, "cfg"))
	tstConfineIs(t, root, "notes.md", settings, true)
	tstConfineIs(t, root, "cfg/settings.local.json", settings, true)
}

func TestConfineResolvesRoot(t *testing.T) {
	root, outside := tstConfineDirs(t)
	alias := filepath.Join(outside, "alias")
	tstSymlink(t, root, alias)
	if got := ResolvedRoot(alias); got != root {
		t.Errorf("ResolvedRoot(%q) = %q, want %q", alias, got, root)
	}
	tstConfineIs(t, alias, filepath.Join(alias, "f"), filepath.Join(root, "f"), true)
	tstConfineIs(t, alias, "f", filepath.Join(root, "f"), true)
	tstConfineIs(t, alias, filepath.Join(root, "f"), filepath.Join(root, "f"), true)
}

func TestConfineLongPath(t *testing.T) {
	root, _ := tstConfineDirs(t)
	long := filepath.Join(root, strings.Repeat("a/", 75_000))
	long = long[:150_000]
	start := time.Now()
	if got, inside := Confine(root, long); inside || got != long {
		t.Errorf("a 150,000-byte path: inside %v, same path %v", inside, got == long)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a 150,000-byte path took %v", d)
	}
}

func TestConfineLengthLimit(t *testing.T) {
	root, _ := tstConfineDirs(t)
	if len(root) > 1000 {
		t.Skip("temporary directory too long")
	}
	pad := func(n int) string { // root + "/" + components of at most 200 bytes, n bytes in all
		var b strings.Builder
		b.WriteString(root)
		for b.Len() < n {
			b.WriteByte(filepath.Separator)
			k := min(200, n-b.Len())
			b.WriteString(strings.Repeat("d", k))
		}
		if b.Len() != n || strings.HasSuffix(b.String(), string(filepath.Separator)) {
			t.Fatalf("bad padding to %d", n)
		}
		return b.String()
	}
	at := pad(MaxPathLen)
	if got, inside := Confine(root, at); !inside || got != at {
		t.Errorf("a %d-byte path: %v, %q", MaxPathLen, inside, got)
	}
	over := pad(MaxPathLen + 1)
	if got, inside := Confine(root, over); inside || got != over {
		t.Errorf("a %d-byte path: %v, %q", MaxPathLen+1, inside, got)
	}
	// Relative, but too long once joined to root.
	rel := strings.Repeat("r/", MaxPathLen/2-1) + "r"
	if _, inside := Confine(root, rel); inside {
		t.Errorf("a relative path of %d bytes joined to root: inside", len(rel))
	}
}

func TestConfineHome(t *testing.T) {
	root, outside := tstConfineDirs(t)
	home := filepath.Join(outside, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "windows" {
		t.Setenv("USERPROFILE", home)
	} else {
		t.Setenv("HOME", home)
	}
	if got, ok := ExpandHome("~/x"); !ok || got != home+"/x" {
		t.Errorf("ExpandHome(~/x) = %q, %v", got, ok)
	}
	if got, ok := ExpandHome("~"); !ok || got != home {
		t.Errorf("ExpandHome(~) = %q, %v", got, ok)
	}
	if got, ok := ExpandHome("a/~"); !ok || got != "a/~" {
		t.Errorf("ExpandHome(a/~) = %q, %v", got, ok)
	}
	if _, ok := ExpandHome("~root/x"); ok {
		t.Errorf("ExpandHome(~root/x) ok")
	}
	tstConfineIs(t, root, "~/x", filepath.Join(home, "x"), false)
	tstConfineIs(t, root, "~", home, false)
	tstConfineIs(t, root, "~root/x", "~root/x", false)

	// A project under home.
	proj := filepath.Join(home, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	tstConfineIs(t, proj, "~/proj/x", filepath.Join(proj, "x"), true)
}

func TestConfineFileThenDotDot(t *testing.T) {
	root, outside := tstConfineDirs(t)
	f := filepath.Join(root, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tstSymlink(t, outside, filepath.Join(root, "out"))
	// Under a file nothing exists; ".." back out of it resumes the walk,
	// which then follows "out".
	tstConfineIs(t, root, "f/x/../../out/y", filepath.Join(outside, "y"), false)
	tstConfineIs(t, root, "f/../f", f, true)
	tstConfineIs(t, root, "missing/../out/y", filepath.Join(outside, "y"), false)
	tstConfineIs(t, root, "a/b/../../out/../in", filepath.Join(filepath.Dir(root), "in"), false)
	tstConfineIs(t, root, "out/../project/z", filepath.Join(root, "z"), true)
	tstConfineIs(t, root, "/../../"+root[1:]+"/z", filepath.Join(root, "z"), true)
}

// BenchmarkConfineDeep resolves a path of MaxPathLen bytes through
// existing directories: the most Lstat calls a path can cost.
func BenchmarkConfineDeep(b *testing.B) {
	root := b.TempDir()
	deep := root
	for len(deep)+2 <= MaxPathLen {
		deep += "/d"
	}
	if err := os.MkdirAll(deep, 0o755); err != nil {
		b.Skip(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, inside := Confine(root, deep); !inside {
			b.Fatal("not inside")
		}
	}
}

// TestConfineFullPathWalk runs the tests above with the walk that looks at
// full paths, used where a directory cannot be opened.
func TestConfineFullPathWalk(t *testing.T) {
	openDirs = false
	defer func() { openDirs = true }()
	for name, test := range map[string]func(*testing.T){
		"PlainFileInside":         TestConfinePlainFileInside,
		"NonexistentInside":       TestConfineNonexistentInside,
		"SymlinkedDirOutside":     TestConfineSymlinkedDirOutside,
		"DanglingLastLinkOutside": TestConfineDanglingLastLinkOutside,
		"DanglingLinkInside":      TestConfineDanglingLinkInside,
		"LinkChain":               TestConfineLinkChain,
		"LinkLoop":                TestConfineLinkLoop,
		"DotDotAfterSymlink":      TestConfineDotDotAfterSymlink,
		"LinkToSettings":          TestConfineLinkToSettings,
		"ResolvesRoot":            TestConfineResolvesRoot,
		"LengthLimit":             TestConfineLengthLimit,
		"Home":                    TestConfineHome,
		"FileThenDotDot":          TestConfineFileThenDotDot,
	} {
		t.Run(name, test)
	}
}
