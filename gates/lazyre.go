package gates

import (
	"regexp"
	"sync"
)

// LazyRE compiles its pattern on first use: the hook binary starts on every
// tool call, and most calls never parse a plan or a result.
type LazyRE struct {
	pattern string
	once    sync.Once
	re      *regexp.Regexp
}

func LazyRegexp(pattern string) *LazyRE { return &LazyRE{pattern: pattern} }

func (l *LazyRE) Regexp() *regexp.Regexp {
	l.once.Do(func() { l.re = regexp.MustCompile(l.pattern) })
	return l.re
}

func (l *LazyRE) MatchString(s string) bool              { return l.Regexp().MatchString(s) }
func (l *LazyRE) FindStringSubmatch(s string) []string   { return l.Regexp().FindStringSubmatch(s) }
func (l *LazyRE) FindAllString(s string, n int) []string { return l.Regexp().FindAllString(s, n) }
func (l *LazyRE) FindAllStringSubmatch(s string, n int) [][]string {
	return l.Regexp().FindAllStringSubmatch(s, n)
}
func (l *LazyRE) ReplaceAllString(s, repl string) string { return l.Regexp().ReplaceAllString(s, repl) }
func (l *LazyRE) FindString(s string) string             { return l.Regexp().FindString(s) }
