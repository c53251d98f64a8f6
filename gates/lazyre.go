package gates

import (
	"regexp"
	"sync"
)

// lazyRE compiles its pattern on first use: the hook binary starts on every
// tool call, and most calls never parse a plan or a result.
type lazyRE struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

func lazyRegexp(pattern string) *lazyRE { return &lazyRE{pattern: pattern} }

func (l *lazyRE) get() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pattern) })
	return l.re
}

func (l *lazyRE) MatchString(s string) bool              { return l.get().MatchString(s) }
func (l *lazyRE) FindStringSubmatch(s string) []string   { return l.get().FindStringSubmatch(s) }
func (l *lazyRE) FindAllString(s string, n int) []string { return l.get().FindAllString(s, n) }
func (l *lazyRE) FindAllStringSubmatch(s string, n int) [][]string {
	return l.get().FindAllStringSubmatch(s, n)
}
func (l *lazyRE) ReplaceAllString(s, repl string) string { return l.get().ReplaceAllString(s, repl) }
func (l *lazyRE) FindString(s string) string             { return l.get().FindString(s) }
