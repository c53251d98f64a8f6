package gates

import "strings"

var (
	ReNotifyID     = LazyRegexp(`<task-id>([^<]*)</task-id>`)
	ReNotifyTool   = LazyRegexp(`<tool-use-id>([^<]*)</tool-use-id>`)
	ReNotifyStatus = LazyRegexp(`<status>([^<]*)</status>`)
	ReNotifyResult = LazyRegexp(`(?s)<result>(.*)</result>`)
)

func IsNotification(prompt string) bool {
	return strings.HasPrefix(strings.TrimSpace(prompt), "<task-notification>")
}

func FirstMatch(re *LazyRE, s string) string {
	if m := re.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return ""
}
