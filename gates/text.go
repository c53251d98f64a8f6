package gates

import "fmt"

func OrText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func Pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
