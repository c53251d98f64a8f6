package coordinate

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/orch-hook/orch-hook/gates"
)

// Topic naming and numbering (README, "Topic names").
const (
	// MaxTopicNameLen bounds a topic name; longer names are cut on a word
	// boundary.
	MaxTopicNameLen = 50
	// TopicFallback is the topic name of a description with no meaningful
	// word (only stopwords, punctuation or scripts that do not fold to
	// ASCII).
	TopicFallback = "topic"
	// TopicPathComponents is how many meaningful components of a path the
	// topic name keeps (the last ones).
	TopicPathComponents = 3
)

var (
	// TopicFillerPrefixes are dropped while they lead the description
	// (together with TopicStopwords): "Please carefully research the X"
	// names the topic X. Only the leading run is dropped: "compare research
	// tools" keeps "research". Words that come from a path are never
	// fillers.
	TopicFillerPrefixes = []string{
		"please", "kindly", "carefully", "thoroughly", "quickly", "briefly", "deeply", "first",
		"research", "researching", "analyze", "analyse", "analysis", "investigate", "explore",
		"study", "examine", "review", "understand", "look", "find", "out", "figure",
		"plan", "help", "need", "want", "like", "go", "ahead", "coordinate",
	}

	// TopicStopwords are dropped everywhere (67 common English words and
	// contraction pieces: "let's" -> let, s).
	TopicStopwords = []string{
		"a", "an", "the", "and", "or", "but", "nor", "of", "in", "on", "at", "to", "for", "from",
		"by", "with", "into", "onto", "about", "as", "is", "are", "was", "were", "be", "been",
		"it", "its", "this", "that", "these", "those", "there", "their", "we", "our", "us",
		"you", "your", "i", "me", "my", "so", "if", "then", "can", "could", "should", "would",
		"will", "do", "does", "how", "what", "which", "why", "when", "where", "all", "some",
		"just", "also", "via", "let", "lets", "s", "t",
	}

	// TopicGenericSegments are path components that say nothing about the
	// topic (the component after home/ or Users/ is a user name and is
	// dropped too): /home/user/nvim/docs keeps nvim and docs. A hidden
	// component is compared without its dot (.config -> config).
	TopicGenericSegments = []string{
		"home", "user", "users", "usr", "root", "tmp", "temp", "var", "opt", "mnt", "srv", "etc",
		"local", "share", "bin", "sbin", "src", "lib", "libs", "pkg", "internal", "cmd",
		"app", "apps", "project", "projects", "repo", "repos", "workspace", "workspaces",
		"dev", "code", "specs", "reports", "plans", "summaries", "claude", "config", "cache", "git",
	}

	// topicFold is built on first use: every hook process runs every
	// package's init (README, Performance).
	topicFold = sync.OnceValue(buildTopicFold)
)

// TopicName turns a workflow description into the snake_case topic name
// of its directory (README, "Topic names"):
//
//  1. Paths are found: quoted spans ("...", '...', `...`) that contain a / or
//     \, and whitespace-separated tokens that do (a backslash-escaped space
//     "My\ Documents" stays inside its token). Each path is reduced to its
//     last TopicPathComponents meaningful components: empty, ., .., ~ and
//     scheme/drive components ("https:", "C:") are dropped, so are
//     TopicGenericSegments and the user name after home/ or Users/; a
//     file's extension and a leading "NNN_" are removed.
//  2. The path components stay where the path was in the description.
//  3. Everything is lowercased and Latin diacritics are folded to ASCII
//     (é -> e, ß -> ss); any other character that is not a-z or 0-9
//     separates words (other scripts, emoji and punctuation drop out).
//  4. The leading run of TopicFillerPrefixes and TopicStopwords is removed.
//  5. TopicStopwords are removed everywhere, and a word repeated right after
//     itself is kept once.
//  6. The words are joined with "_" (snake_case).
//  7. The name is cut to at most MaxTopicNameLen characters on a word
//     boundary (a single longer word is cut at the limit).
//  8. An empty result is TopicFallback.
//
// "Research the /home/user/nvim/docs directory" -> "nvim_docs_directory";
// "fix the token refresh bug" -> "fix_token_refresh_bug". The same
// description always gives the same name, which makes NextTopicNumber
// idempotent.
func TopicName(description string) string {
	if name := topicSlug(description); name != "" {
		return name
	}
	return TopicFallback
}

// topicWord is one word of a description; fromPath words are never fillers.
type topicWord struct {
	w        string
	fromPath bool
}

// topicSlug is TopicName without the fallback ("" when nothing is left).
func topicSlug(description string) string {
	var words []topicWord
	for _, item := range topicItems(description) {
		if item.path {
			for _, comp := range topicPathComponents(item.text) {
				for _, w := range topicFoldWords(comp) {
					words = append(words, topicWord{w, true})
				}
			}
			continue
		}
		for _, w := range topicFoldWords(item.text) {
			words = append(words, topicWord{w, false})
		}
	}
	// Leading fillers.
	i := 0
	for i < len(words) && !words[i].fromPath && (inList(words[i].w, TopicFillerPrefixes) || inList(words[i].w, TopicStopwords)) {
		i++
	}
	var kept []string
	for _, w := range words[i:] {
		if inList(w.w, TopicStopwords) {
			continue
		}
		if n := len(kept); n > 0 && kept[n-1] == w.w {
			continue
		}
		kept = append(kept, w.w)
	}
	return topicTruncate(kept, MaxTopicNameLen)
}

// topicTruncate joins words with "_" and cuts on a word boundary.
func topicTruncate(words []string, limit int) string {
	var b strings.Builder
	for _, w := range words {
		extra := len(w)
		if b.Len() > 0 {
			extra++
		}
		if b.Len()+extra > limit {
			if b.Len() == 0 {
				return strings.TrimRight(w[:limit], "_")
			}
			break
		}
		if b.Len() > 0 {
			b.WriteByte('_')
		}
		b.WriteString(w)
	}
	return b.String()
}

// topicItem is a piece of a description: plain text or a path.
type topicItem struct {
	text string
	path bool
}

var reTopicQuoted = gates.LazyRegexp("(?:^|[\\s(\\[{])(\"[^\"\\n]*[/\\\\][^\"\\n]*\"|'[^'\\n]*[/\\\\][^'\\n]*'|`[^`\\n]*[/\\\\][^`\\n]*`)")

// topicItems splits a description into text and paths (TopicName step 1).
func topicItems(s string) []topicItem {
	var items []topicItem
	for len(s) > 0 {
		loc := reTopicQuoted.Regexp().FindStringSubmatchIndex(s)
		if loc == nil {
			items = append(items, topicTokens(s)...)
			break
		}
		items = append(items, topicTokens(s[:loc[2]])...)
		items = append(items, topicItem{text: s[loc[2]+1 : loc[3]-1], path: true})
		s = s[loc[3]:]
	}
	return items
}

// topicTokens splits unquoted text at whitespace; a token with a / or \
// (and a letter or digit) is a path. "\ " does not split.
func topicTokens(s string) []topicItem {
	const esc = "\x00"
	s = strings.ReplaceAll(s, "\\ ", esc)
	var items []topicItem
	for _, tok := range strings.Fields(s) {
		tok = strings.ReplaceAll(tok, esc, " ")
		if strings.ContainsAny(tok, "/\\") && strings.IndexFunc(tok, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			items = append(items, topicItem{text: strings.Trim(tok, ".,;:!?()[]{}<>\"'`"), path: true})
			continue
		}
		items = append(items, topicItem{text: tok})
	}
	return items
}

var (
	reTopicNumPrefix = gates.LazyRegexp(`^\d+_`)
	reTopicExt       = gates.LazyRegexp(`\.[A-Za-z0-9]{1,5}$`)
)

// topicPathComponents reduces a path to its last meaningful components.
func topicPathComponents(p string) []string {
	segs := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
	var out []string
	skipNext := false
	for i, seg := range segs {
		seg = strings.TrimSpace(seg)
		lower := strings.ToLower(seg)
		if skipNext {
			skipNext = false
			continue
		}
		if lower == "home" || lower == "users" {
			skipNext = true
		}
		if seg == "" || seg == "." || seg == ".." || seg == "~" || strings.HasSuffix(seg, ":") {
			continue
		}
		if i == len(segs)-1 {
			seg = reTopicExt.Regexp().ReplaceAllString(seg, "")
		}
		seg = strings.TrimLeft(seg, ".")
		seg = reTopicNumPrefix.Regexp().ReplaceAllString(seg, "")
		if inList(strings.ToLower(seg), TopicGenericSegments) || len(topicFoldWords(seg)) == 0 {
			continue
		}
		out = append(out, seg)
	}
	if len(out) > TopicPathComponents {
		out = out[len(out)-TopicPathComponents:]
	}
	return out
}

// topicFoldWords lowercases s, folds Latin diacritics and splits it into
// runs of a-z and 0-9.
func topicFoldWords(s string) []string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r < unicode.MaxASCII && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case topicFold()[r] != "":
			b.WriteString(topicFold()[r])
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Fields(b.String())
}

func buildTopicFold() map[rune]string {
	m := map[rune]string{'ß': "ss", 'æ': "ae", 'œ': "oe", 'þ': "th", 'ð': "d", 'ĳ': "ij"}
	for ascii, chars := range map[string]string{
		"a": "àáâãäåāăą", "c": "çćĉċč", "d": "ďđ", "e": "èéêëēĕėęě", "g": "ĝğġģ",
		"h": "ĥħ", "i": "ìíîïĩīĭįı", "j": "ĵ", "k": "ķ", "l": "ĺļľŀł", "n": "ñńņňŉ",
		"o": "òóôõöøōŏő", "r": "ŕŗř", "s": "śŝşšș", "t": "ţťŧț", "u": "ùúûüũūŭůűų",
		"w": "ŵ", "y": "ýÿŷ", "z": "źżž",
	} {
		for _, r := range chars {
			m[r] = ascii
		}
	}
	return m
}

var reTopicDir = gates.LazyRegexp(`^(\d+)_(.+)$`)

// NextTopicNumber gives the number of the topic directory for name, given
// the names (or paths) of the existing directories, NNN_<topic>: an
// existing directory with exactly that name keeps its number (reuse; the
// highest when several do), otherwise the highest number plus one, 1 when
// there is none. Entries not shaped NNN_<topic> are ignored. Calling it
// again after creating TopicDir(number, name) returns the same number.
func NextTopicNumber(existing []string, name string) (number int, reuse bool) {
	highest, same := 0, 0
	for _, e := range existing {
		m := reTopicDir.FindStringSubmatch(path.Base(strings.TrimRight(strings.ReplaceAll(e, "\\", "/"), "/")))
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		highest = max(highest, n)
		if m[2] == name {
			same = max(same, n)
		}
	}
	if same > 0 {
		return same, true
	}
	return highest + 1, false
}

// TopicDir is the directory name of a topic: "NNN_name" (at least three
// digits).
func TopicDir(number int, name string) string { return fmt.Sprintf("%03d_%s", number, name) }

// Paths are a coordinate workflow's artifact paths, pre-calculated once at
// initialization (README, "The coordinate workflow") and stored. Each is its
// place inside the topic directory (reports/, plans/, debug/, summaries/)
// joined onto the topic directory ArtifactPaths was given, so they are
// relative to whatever that directory was relative to. Directories end with
// "/" and are created lazily, when a file is written into them.
type Paths struct {
	TopicPath    string   `json:"topic_path"`
	TopicName    string   `json:"topic_name"`
	ReportsDir   string   `json:"reports_dir"`
	ReportPaths  []string `json:"report_paths"`
	PlansDir     string   `json:"plans_dir"`
	PlanPath     string   `json:"plan_path"`
	DebugDir     string   `json:"debug_dir"`
	SummariesDir string   `json:"summaries_dir"`
}

// ArtifactPaths pre-calculates the paths of a topic directory
// (".claude/specs/042_auth", "specs/042_auth", or "" for paths relative to
// the topic): reports/NNN_<topic>.md for each research topic in order (the
// topic sanitized like TopicName; "topicN" when nothing is left, as in
// the generic 001_topic1.md), plans/001_<name>_plan.md where name is the
// topic directory's name without its NNN_ prefix (TopicFallback when
// topicDir is ""), debug/ and summaries/.
func ArtifactPaths(topicDir string, topics []string) Paths {
	topicDir = strings.TrimRight(topicDir, "/")
	join := func(elem ...string) string {
		if topicDir == "" {
			return path.Join(elem...)
		}
		return path.Join(append([]string{topicDir}, elem...)...)
	}
	name := TopicFallback
	if base := path.Base(topicDir); topicDir != "" {
		if m := reTopicDir.FindStringSubmatch(base); m != nil {
			name = m[2]
		} else {
			name = base
		}
	}
	p := Paths{
		TopicPath:    topicDir,
		TopicName:    name,
		ReportsDir:   join("reports") + "/",
		PlansDir:     join("plans") + "/",
		PlanPath:     join("plans", "001_"+name+"_plan.md"),
		DebugDir:     join("debug") + "/",
		SummariesDir: join("summaries") + "/",
		ReportPaths:  []string{},
	}
	for i, t := range topics {
		slug := topicSlug(t)
		if slug == "" {
			slug = fmt.Sprintf("topic%d", i+1)
		}
		p.ReportPaths = append(p.ReportPaths, join("reports", fmt.Sprintf("%03d_%s.md", i+1, slug)))
	}
	return p
}

var reReportFile = gates.LazyRegexp(`^(\d{3,})_[^/]+\.md$`)

// ReportNumber reads the number of a report file named NNN_<anything>.md
// (a report may have a more descriptive name than its pre-calculated path:
// a worker told to write 001_topic1.md may write 001_auth_patterns.md;
// README, "Topic names"). Only the base name
// counts.
func ReportNumber(file string) (n int, ok bool) {
	m := reReportFile.FindStringSubmatch(path.Base(strings.ReplaceAll(file, "\\", "/")))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// RevisionTopic picks, for a research-and-revise description, the existing
// topic directory (among topics, names like "001_authentication_system"
// whose plans/ holds a plan) that the description names: every word of the
// topic's name appears in the description ("Revise the authentication
// system plan" names 001_authentication_system). The topic with the most
// words wins, then the highest number; "" when none is named.
func RevisionTopic(description string, topics []string) string {
	words := map[string]bool{}
	for _, w := range topicFoldWords(description) {
		words[w] = true
	}
	best, bestWords, bestNumber := "", 0, -1
	for _, t := range topics {
		m := reTopicDir.Regexp().FindStringSubmatch(t)
		if m == nil {
			continue
		}
		parts := strings.Split(m[2], "_")
		all := len(parts) > 0
		for _, p := range parts {
			if !words[p] {
				all = false
				break
			}
		}
		number, _ := strconv.Atoi(m[1])
		if all && (len(parts) > bestWords || len(parts) == bestWords && number > bestNumber) {
			best, bestWords, bestNumber = t, len(parts), number
		}
	}
	return best
}
