package render

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium finds Debian's chromium. Without it the test skips, unless
// ORCH_HOOK_E2E_REQUIRED=1 (CI), where it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "chromium is not installed (apt-get install -y chromium)"
	if os.Getenv("ORCH_HOOK_E2E_REQUIRED") == "1" {
		t.Fatal(msg + "; ORCH_HOOK_E2E_REQUIRED=1")
	}
	t.Skip(msg)
	return ""
}

// shot is what one headless Chromium run of a page gave.
type shot struct {
	dom     string      // the DOM after load (--dump-dom)
	img     image.Image // the screenshot
	console []string    // console messages the page logged (errors included)
}

// consoleLine matches what --enable-logging=stderr prints for a console
// message ("INFO:CONSOLE(12)] ..." or "INFO:CONSOLE:12] ...") and for an
// uncaught exception.
var consoleLine = regexp.MustCompile(`(?i):CONSOLE[(:]|Uncaught`)

// renderPage loads file in headless Chromium, offline and without a profile,
// and takes its DOM, a screenshot and its console messages.
func renderPage(t *testing.T, bin, file string) shot {
	t.Helper()
	dir := t.TempDir()
	shotPath := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(dir, "profile"),
		"--enable-logging=stderr", "--v=0",
		"--window-size=1200,1400", "--screenshot="+shotPath, "--dump-dom",
		"file://"+file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HOME="+dir)
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	f, err := os.Open(shotPath)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, stderr.String())
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	s := shot{dom: stdout.String(), img: img}
	for _, l := range strings.Split(stderr.String(), "\n") {
		if consoleLine.MatchString(l) {
			s.console = append(s.console, l)
		}
	}
	return s
}

// inked is the share of pixels that are not (near) white, and the number of
// distinct colours.
func inked(img image.Image) (float64, int) {
	b := img.Bounds()
	colours := map[uint32]bool{}
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			if len(colours) < 10000 {
				colours[r<<16|g<<8|bl] = true
			}
			if r < 240 || g < 240 || bl < 240 {
				ink++
			}
		}
	}
	return float64(ink) / float64(b.Dx()*b.Dy()), len(colours)
}

// hasColour reports whether some pixel is within 6 of the #rrggbb colour.
func hasColour(img image.Image, hex string) bool {
	var want [3]int
	fmt.Sscanf(hex, "#%02x%02x%02x", &want[0], &want[1], &want[2])
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			got := [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
			ok := true
			for i := range got {
				if d := got[i] - want[i]; d < -6 || d > 6 {
					ok = false
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// TestHTMLInChromium renders the html report of a real workflow in headless
// Chromium: the screenshot is not blank and shows each agent's bars, the
// page logged nothing to the console, and the DOM has one timeline row per
// agent launch. The page is loaded as written, nothing injected.
func TestHTMLInChromium(t *testing.T) {
	bin := chromium(t)
	in := loadFixture(t, "complete")
	r := BuildReport(in)
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, []byte(HTML(r)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := renderPage(t, bin, page)
	if len(s.console) > 0 {
		t.Errorf("the page logged to the console:\n%s", strings.Join(s.console, "\n"))
	}
	ink, colours := inked(s.img)
	t.Logf("screenshot %v: %.1f%% inked, %d colours", s.img.Bounds().Size(), ink*100, colours)
	if ink < 0.03 || colours < 16 {
		t.Errorf("the screenshot looks blank: %.1f%% inked, %d colours", ink*100, colours)
	}
	seen := map[string]bool{}
	for _, a := range r.Agents {
		if c := agentColor(a.Agent); !seen[c] {
			seen[c] = true
			if !hasColour(s.img, c) {
				t.Errorf("no %s bar (%s) on the screenshot", a.Agent, c)
			}
		}
	}
	if !strings.Contains(s.dom, `<svg class="timeline"`) {
		t.Error("the DOM has no timeline svg")
	}
	if n, want := strings.Count(s.dom, `data-row="launch"`), len(in.Workflow.Launches); n != want || want != 14 {
		t.Errorf("the DOM has %d timeline rows, want one per agent launch (%d)", n, want)
	}
}

// The checks above can fail: a blank page that throws is caught by both.
func TestChromiumChecksCatchFailures(t *testing.T) {
	bin := chromium(t)
	page := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!DOCTYPE html><html><body style="background:#fff"><script>console.error("broken"); notDefined();</script></body></html>`
	if err := os.WriteFile(page, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	s := renderPage(t, bin, page)
	if len(s.console) < 2 {
		t.Errorf("console errors not caught: %q", s.console)
	}
	if ink, colours := inked(s.img); ink >= 0.03 || colours >= 16 {
		t.Errorf("a blank page passed as not blank: %.1f%% inked, %d colours", ink*100, colours)
	}
	if strings.Contains(s.dom, `data-row="launch"`) {
		t.Error("rows found on an empty page")
	}
}
