package app

import (
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

func TestUserCommand(t *testing.T) {
	for _, tc := range []struct {
		prompt, name, args string
		ok                 bool
	}{
		{"/orch-hook:protect", "protect", "", true},
		{"  /orch-hook:protect --shared  ", "protect", "--shared", true},
		{"/orch-hook-protect\t--dry-run", "protect", "--dry-run", true},
		{"/orch-hook:protection", "protection", "", true},
		{"/orch-hook:", "", "", false},
		{"please /orch-hook:protect", "", "", false},
	} {
		name, args, ok := gates.UserCommand(tc.prompt)
		if name != tc.name || args != tc.args || ok != tc.ok {
			t.Errorf("gates.UserCommand(%q) = %q, %q, %v", tc.prompt, name, args, ok)
		}
	}
	if _, ok := protectPrompt("/orch-hook:protection"); ok {
		t.Error("/orch-hook:protection read as protect")
	}
	for _, tc := range []struct {
		prompt, typed, args string
		ok                  bool
	}{
		{"/orch-hook:statusline", "/orch-hook:statusline", "", true},
		{" /orch-hook-statusline --remove", "/orch-hook-statusline", "--remove", true},
		{"/orch-hook:statuslines", "", "", false},
		{"/orch-hook:status", "", "", false},
		{"show /orch-hook:statusline", "", "", false},
	} {
		typed, args, ok := statusLinePrompt(tc.prompt)
		if ok != tc.ok || ok && (typed != tc.typed || args != tc.args) {
			t.Errorf("statusLinePrompt(%q) = %q, %q, %v", tc.prompt, typed, args, ok)
		}
	}
}
