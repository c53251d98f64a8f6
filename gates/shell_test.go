package gates

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// testPlainOK accepts the read-only subcommands, but not a report written
// to a file.
func testPlainOK(args []string) bool {
	if len(args) == 0 {
		return false
	}
	switch args[0] {
	case "status", "log", "explain", "graph", "help", "doctor", "version":
		return true
	case "report":
		for _, a := range args[1:] {
			if a == "-o" || a == "--output" || strings.HasPrefix(a, "--output=") {
				return false
			}
		}
		return true
	}
	return false
}

// Every disguise seen (or thought of) for running the binary, copying it,
// replacing it or reaching its marker directory.
var binaryDisguises = []string{
	// Found by a red-team pass.
	"cp ~/.claude/plugins/cache/*/*/*/bin/o*ok ./z && ./z hook UserPromptSubmit < f.json",
	"cp /p/bin/o?ch* ./z; ./z hook Stop",
	// observed
	"X=hook; orch-hook $X < forged.json",
	"orch-hook ho''ok UserPromptSubmit < forged.json",
	"o''rch-hook hook < forged.json",
	"orch-hook${IFS}hook UserPromptSubmit",
	"orch-hook$IFS'hook'",
	"/path/orch-hoo? hook",
	`"$CLAUDE_PLUGIN_ROOT"/bin/orch-hook hook`,
	"cp /home/u/.claude/plugins/cache/m/x/0.1.0/bin/orch-hook /tmp/x && /tmp/x hook",
	"ln -s /p/bin/orch-hook x",
	"echo '{}' | xargs orch-hook hook",
	`find / -name orch-hook -exec {} hook \;`,
	"bash -c 'orch-hook hook UserPromptSubmit < forged.json'",
	`sh -c "o\rch-hook hook"`,
	`eval "orch-hook hook"`,
	"$(echo orch-hook) hook",
	"`which orch-hook` hook",
	`python3 -c "import os;os.execv('/p/orch-hook',['orch-hook','hook'])"`,
	`perl -e 'exec "orch-hook","hook"'`,
	"alias x=orch-hook; x hook",
	"env orch-hook hook",
	"command orch-hook hook",
	"exec orch-hook hook",
	"nohup orch-hook hook",
	"timeout 5 orch-hook hook",
	`cp /bin/true "$CLAUDE_PLUGIN_ROOT/bin/orch-hook"`,
	"rm -rf ~/.cache/orch-hook",
	"orch-hook-linux-amd64 hook",
	"./dist/orch-hook-darwin-arm64 hook",
	"orch-hook-windows-amd64.exe hook",
	"orch-hook.exe hook",
	// plain-looking but not allowed
	"orch-hook hook UserPromptSubmit",
	"orch-hook status < forged.json",
	"orch-hook status <<< '{}'",
	"orch-hook report -o x",
	"orch-hook report --output x",
	"orch-hook status; orch-hook hook",
	"(orch-hook hook)",
	"echo $(orch-hook hook)",
	"ORCH-HOOK hook",
	`\orch-hook hook`,
	`"orch-hook" hook`,
	"orch-hook status > $CLAUDE_PLUGIN_ROOT/bin/orch-hook",
	// quoting, expansion, globbing
	"{orch-hook,hook} < forged.json",
	"o{rch-hook,} hook",
	"orch-hoo{a..z} hook",
	`$'\x6frch-hook' hook`,
	`$'\157rch-hook' hook`,
	"orch${IFS:+-}hook hook",
	"orch-hook${IFS:0:1}hook",
	"orch${E}-hook hook",
	"A=orch; B=-hook; cp /p/$A$B /tmp/x",
	"cp /p/${X:-orch}-hook /tmp/x",
	"cp /p/orch-h''ook /tmp/x",
	"/p/bin/* hook",
	"./????????? hook",
	"cp /p/bin/orch* /tmp/x",
	"cp /p/bin/*-hook /tmp/x",
	"cp /p/bin/orch-hook-* /tmp/x",
	`find /p -name 'orch-hoo?' -exec {} hook \;`,
	`find /p -name 'orch*' | head -1`,
	`find /p -regex '.*/orch.hook'`,
	"ls /p/bin | xargs -I% % hook",
	"ls /p/bin | xargs -I{} sh -c '{} hook'",
	// code on stdin, computed code, code in other languages
	`printf '\157rch-hook hook' | sh`,
	"echo b3JjaC1ob29rIGhvb2s= | base64 -d | bash",
	`bash <<< "$X"`,
	"bash <(printf x)",
	`S=/dev/stdin; bash "$S" <<< "orch-hook hook"`,
	`echo orch-hook hook | bash "$S"`,
	"source <(printf x)",
	"printf x | . /dev/stdin",
	`sh -c "$X"`,
	"xargs sh -c < list",
	"echo x | python3",
	`python3 -c "import os; os.execv('/p/orch-'+'hook', [])"`,
	`python3 -c 'import os; os.system("orch\x2dhook hook")'`,
	`awk 'BEGIN{system("orch" "-hook hook")}'`,
	"cat <<'EOF' | sh\norch-hook hook\nEOF",
	"bash <<EOF\no\\rch-hook hook\nEOF",
	"cat <<EOF\n'\nEOF\norch-hook hook #'",
	`f(){ orch-hook "$@"; }; f hook`,
	"function f { orch-hook status; }; f < forged.json",
	"hash -p /p/bin/x status; status hook",
	"trap 'orch-hook hook' EXIT",
	"watch -n1 orch-hook hook",
	"ssh localhost orch-hook hook",
	"sudo -u me orch-hook hook",
	"busybox sh -c 'orch-hook hook'",
	"env -S 'orch-hook hook'",
	"a=(orch-hook hook); \"${a[@]}\"",
	"$(printf '\\x6frch-hook') hook",
	"o\\\nrch-hook hook",
	"exec 3</tmp/f; orch-hook hook <&3",
	"compgen -c orch-h | sed 's/$/ hook/' | xargs env",
	"compgen -c orch-h | parallel",
	"PS4='$($(compgen -c orch-h) hook)' bash -xc :",
	"test -v 'a[$($(compgen -c orch-h) hook)]'",
	"echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo $(echo x)))))))))",
	// a mention is strict: not a plain invocation
	`git commit -m "update orch-hook docs"`,
	"orch-hook log | grep orch-hook",
	"which orch-hook",
}

func TestShellBinaryDisguises(t *testing.T) {
	for _, cmd := range binaryDisguises {
		named, allowed := NamesBinary(cmd, testPlainOK)
		if !named || allowed {
			t.Errorf("NamesBinary(%q) = named %v, allowed %v; want named, not allowed", cmd, named, allowed)
		}
	}
}

func TestShellBinaryPlainInvocations(t *testing.T) {
	for _, cmd := range []string{
		"orch-hook status",
		"/home/u/.claude/plugins/cache/m/orch-hook/0.1.0/bin/orch-hook status --json",
		"orch-hook log -n 5 | tail",
		"cd /x && orch-hook status",
		"orch-hook status && orch-hook log",
		"if orch-hook status; then echo ok; fi",
		"orch-hook status > /tmp/s.txt 2>&1",
		`echo "$(orch-hook status)"`,
		"ORCH_DEBUG=1 orch-hook explain gate 3",
		"orch-hook report",
		"'orch-hook' status",
	} {
		named, allowed := NamesBinary(cmd, testPlainOK)
		if !named || !allowed {
			t.Errorf("NamesBinary(%q) = named %v, allowed %v; want named, allowed", cmd, named, allowed)
		}
	}
}

func TestShellBinaryNotMentioned(t *testing.T) {
	for _, cmd := range []string{
		"grep -r hook .",
		"ls *",
		"ls o*",
		// A script file is unseen whatever its path's spelling.
		`bash "$TMPDIR/x.sh"`,
		`python3 "$TMPDIR/x.py"`,
		"cat src/*.go",
		"git log",
		"echo orchestrate",
		"make build",
		"ls *.exe",
		"ls dist/*-amd64",
		"go test ./...",
		`for f in *.go; do gofmt -l "$f"; done`,
		`"$(go env GOPATH)/bin/golangci-lint" run`,
		"[ -f x ] && echo y",
		"echo {a,b}",
		"awk '{print $1}' f",
		`find . -name '*.go' -exec grep -l x {} +`,
		"x=$(git rev-parse HEAD)",
		"files=(*.go)",
		"cat hooks/hooks.json",
		"echo 'it''s' \"a\\\"b\" $'c\\'d'",
		"cat <<'EOF' > notes.md\nhello\nEOF",
	} {
		if named, _ := NamesBinary(cmd, testPlainOK); named {
			t.Errorf("NamesBinary(%q) named the binary", cmd)
		}
	}
}

var stateAttacks = []string{
	// Found by a red-team pass.
	"d=.orchestr; d+=ator/sta; d+=te; rm -rf $d",
	"rm -rf ./.[!.]*/state",
	"ln -s . s; echo PWNED > s/.orchestrator/state/checkpoint.json",
	`sed -i 's/"phase":1/"phase":9/' .orch*/st*/checkpoint.json`,
	"sed -i s/a/b/ ./.orchestrator//state/checkpoint.json",
	"sed -i s/a/b/ '.orchestrator'/state/checkpoint.json",
	`sed -i s/a/b/ .orchestr""ator/state/checkpoint.json`,
	`sed -i s/a/b/ .orchestr\ator/state/checkpoint.json`,
	`sed -i s/a/b/ ".orchestr\ator/state/checkpoint.json"`,
	"rm -rf .orch*/st*",
	`python3 -c "open('.orchestrator/state/checkpoint.json','w')"`,
	"cd .orch* && sed -i s/a/b/ state/checkpoint.json",
	"cd .orchestrator && sed -i s/a/b/ state/checkpoint.json",
	"cd .orchestrator; cd state; rm checkpoint.json",
	"rm /work/main/.orchestrator/state/checkpoint.json",
	"rm -rf src/../.orchestrator/state",
	"rm -rf .ORCHESTRATOR/state",
	`rm -rf $'.orch\x65strator/state'`,
	"rm -rf .orch{estrator,x}/state",
	"cd $(echo .orch)estrator && rm -rf state",
	"X=.orchestrator; rm -rf $X/state",
	"rm -rf .orch${E}estrator/state",
	`python3 -c "open('.orch'+'estrator/state/x','w')"`,
	"cat <<EOF | sh\nrm -rf .orchestrator/state\nEOF",
	"echo x > .orchestrator/state/y",
	"tar -C .orchestrator/state -xf x.tar",
	"cp x --target-directory=.orchestrator/state",
	"echo .orchestrator/state/checkpoint.json | xargs rm",
	`bash -c "rm -rf .orch\estrator/state"`,
	"rm -rf .orchestrator/*",
	"cd .. && rm -rf main/.orchestrator/state",
	`rm -rf "$(echo .orch)"estrator/state`,
	"X=$(echo .orch)estrator; rm -rf $X/state",
}

// planReads only read under .orchestrator: output to a device or to
// another descriptor, or git's read-only subcommands with plain options.
// planWrites holds a write made of each.
var planReads = []string{
	"cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null",
	"ls .orchestrator 2>&1",
	"ls .orchestrator >/dev/null",
	"cat .orchestrator/tasks/MASTER_PLAN.md &>/dev/null",
	"cat .orchestrator/tasks/MASTER_PLAN.md 1>/dev/null",
	"grep -r Task .orchestrator/tasks 2>>/dev/null",
	"head -5 .orchestrator/tasks/MASTER_PLAN.md >&2",
	"cat .orchestrator/tasks/MASTER_PLAN.md 2>&1 | head -20",
	"ls .orchestrator 3>&1 1>&2 2>&3 3>&-",
	"cat .orchestrator/tasks/MASTER_PLAN.md 2>&1- >/dev/fd/2",
	"git diff -- .orchestrator",
	"git diff --stat HEAD~1 -- .orchestrator/tasks 2>/dev/null",
	"git log -p -3 --follow -- .orchestrator/tasks/MASTER_PLAN.md",
	"git show HEAD:.orchestrator/tasks/MASTER_PLAN.md 2>&1",
	"git status --short .orchestrator",
	"git --no-pager diff --no-index /dev/null .orchestrator/tasks/MASTER_PLAN.md",
	"git -C sub log -- .orchestrator",
	"git diff --text -M --no-ext-diff --no-textconv .orchestrator",
	"git log --format=%H -- .orchestrator | head -1",
	"git grep -n -o Task -- .orchestrator/tasks",
	"git ls-files -o .orchestrator",
	"f() { git diff .orchestrator; }; f",
	// Tools that write only with an option or an output operand, and
	// formatters told only to check: each with its write in planWrites.
	"sort -u -t: -k2 .orchestrator/tasks/MASTER_PLAN.md",
	"uniq -c .orchestrator/tasks/MASTER_PLAN.md",
	"shuf -n 1 .orchestrator/tasks/MASTER_PLAN.md",
	"dos2unix < .orchestrator/tasks/MASTER_PLAN.md | head",
	"xxd -c 16 .orchestrator/tasks/MASTER_PLAN.md",
	"xxd -r -p .orchestrator/tasks/MASTER_PLAN.md -",
	"yq '.a' .orchestrator/tasks/x.yaml",
	"iconv -f utf8 -t ascii .orchestrator/tasks/MASTER_PLAN.md",
	"prettier --check .orchestrator/tasks/MASTER_PLAN.md",
	"npx prettier --check .orchestrator/tasks/MASTER_PLAN.md",
	"clang-format --dry-run .orchestrator/tasks/x.c",
	"sd -p 'review: true' 'review: false' .orchestrator/tasks/task-04-step.md",
	"cat .orchestrator/tasks/MASTER_PLAN.md | sd 'review: true' 'review: false'",
	"tidy -q -e .orchestrator/tasks/x.html",
	"black --check .orchestrator",
	"ruff format --check .orchestrator",
	"ruff check .orchestrator",
	"isort --check-only .orchestrator",
	"eslint .orchestrator",
	"rubocop .orchestrator",
	"shfmt -d .orchestrator",
	"terraform fmt -check .orchestrator",
	"rustfmt --check .orchestrator/x.rs",
	"gofmt -l .orchestrator",
	"mdformat --check .orchestrator",
	"markdownlint .orchestrator",
	"awk -v n=1 'NR==n' .orchestrator/tasks/MASTER_PLAN.md",
	"fd -e md . .orchestrator",
	"rg -n Task .orchestrator",
	`sed -n "$N"p .orchestrator/tasks/MASTER_PLAN.md`, // $N is the environment's: no option
	// Wrappers, their options read as the wrapper reads them; env -S's
	// string split as env splits it.
	"env -S'LC_ALL=C sort' .orchestrator/tasks/MASTER_PLAN.md",
	"env -iS'git diff' -- .orchestrator",
	"env -u GIT_PAGER -- git diff .orchestrator",
	"timeout -k 5 10s cat .orchestrator/tasks/MASTER_PLAN.md",
	"nice -n 10 grep -r Task .orchestrator",
	"sudo -iu root cat .orchestrator/tasks/MASTER_PLAN.md",
	"xargs -0 -n1 -P4 grep Task < .orchestrator/list",
	"stdbuf -oL cat .orchestrator/tasks/MASTER_PLAN.md",
}

var planWrites = []string{
	// Wrappers that write a file of their own before running a read.
	"time -o .orchestrator/tasks/MASTER_PLAN.md cat .orchestrator/tasks/MASTER_PLAN.md",
	"time --output=.orchestrator/tasks/MASTER_PLAN.md true",
	"strace -fo .orchestrator/tasks/MASTER_PLAN.md ls .orchestrator",
	"ltrace -o .orchestrator/tasks/task-01.md ls",
	"flock .orchestrator/tasks/new.md cat .orchestrator/tasks/MASTER_PLAN.md",
	"sudo -e .orchestrator/tasks/MASTER_PLAN.md",
	"sudoedit .orchestrator/tasks/MASTER_PLAN.md",
	"script -q .orchestrator/tasks/MASTER_PLAN.md",
	// a redirection to a file, or one the scan cannot resolve
	"cat x > .orchestrator/state.json",
	"echo x 2>.orchestrator/checkpoint.json",
	"ls .orchestrator 2>&1 >.orchestrator/x",
	"cat .orchestrator/x 2>/dev/null | tee .orchestrator/y",
	"cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null > /tmp/plan.txt", // strict: any file
	"echo x > /dev/fd/../../../p/.orchestrator/tasks/MASTER_PLAN.md",
	"echo x >/dev/null/../../p/.orchestrator/tasks/MASTER_PLAN.md",
	"ls .orchestrator >&plan.txt",
	`cat .orchestrator/tasks/MASTER_PLAN.md 2>"$F"`,
	"cat .orch*/tasks/MASTER_PLAN.md 2>/dev/null > .orch*/tasks/x",
	"cat x 2>/dev/null >'.orchestr'ator/tasks/MASTER_PLAN.md",
	// git told to write, or to run a program
	"git diff > .orchestrator/x",
	"git diff .orchestrator 2>&1 > notes.txt",
	"git diff --output=.orchestrator/checkpoint.json",
	"git diff --output .orchestrator/tasks/MASTER_PLAN.md",
	"git diff --no-index --outp=.orchestrator/tasks/MASTER_PLAN.md a b",
	"git log -o x .orchestrator",
	"git show --output=x HEAD -- .orchestrator",
	"git diff --ext-diff .orchestrator",
	"git log -p --ext .orchestrator",
	"git log --textconv -p .orchestrator",
	"git cat-file --filters HEAD:.orchestrator/tasks/MASTER_PLAN.md",
	"git grep -Ovim Task .orchestrator",
	"git grep --open-files-in-pager=vim Task .orchestrator",
	"git -c diff.external=sh diff -- .orchestrator",
	`git -c core.pager='sh -c "cp x .orchestrator/tasks/MASTER_PLAN.md"' log`,
	"git --config-env=core.pager=P log .orchestrator",
	"git log -c -- .orchestrator", // -c anywhere: where git might take it for a configuration
	"git --exec-path=. diff .orchestrator",
	"git --git-dir=x diff .orchestrator",
	"git --work-tree=/tmp diff .orchestrator",
	`git -C "$D" diff .orchestrator`,
	"./git diff .orchestrator",
	"echo --output=.orchestrator/x | xargs git diff",
	"git diff * .orchestrator", // * may expand to a file named --output=...
	"git d .orchestrator",      // an alias
	"git checkout -- .orchestrator",
	"git stash push -- .orchestrator",
	"git restore .orchestrator",
	"git apply --directory=.orchestrator/tasks p.diff",
	// git's environment
	"GIT_EXTERNAL_DIFF=./x git diff .orchestrator",
	"GIT_PAGER='cp x .orchestrator/tasks/MASTER_PLAN.md' git log",
	"env GIT_EXTERNAL_DIFF=./x git diff .orchestrator",
	"sudo GIT_EXTERNAL_DIFF=./x git diff .orchestrator",
	"export GIT_EXTERNAL_DIFF=./x; git diff .orchestrator",
	"read GIT_EXTERNAL_DIFF <<< ./x; export GIT_EXTERNAL_DIFF; git diff .orchestrator",
	"printf -v GIT_EXTERNAL_DIFF ./x; export GIT_EXTERNAL_DIFF; git diff .orchestrator",
	"for GIT_EXTERNAL_DIFF in ./x; do export GIT_EXTERNAL_DIFF; git diff .orchestrator; done",
	": ${GIT_PAGER:=./x}; git log .orchestrator",
	// another program under a reader's name
	"hash -p /bin/cp git; git diff .orchestrator/tasks/MASTER_PLAN.md",
	`git() { cp "$@"; }; git diff .orchestrator/tasks/MASTER_PLAN.md`,
	"cat() { cp x .orchestrator/tasks/MASTER_PLAN.md; }; cat",
	"function cat { cp x .orchestrator/tasks/MASTER_PLAN.md; }; cat",
	"if true; then function f { rm -rf .orchestrator/tasks; }; fi; f",
	"shopt -s expand_aliases\nalias cat='cp x .orchestrator/tasks/MASTER_PLAN.md; :'\ncat",
	"sudo X=1 rm -rf .orchestrator/tasks",
	"time X=1 sed -i s/a/b/ .orchestrator/tasks/MASTER_PLAN.md",
	// through code strings
	"bash -c 'git diff > .orchestrator/x'",
	`eval "cat x 2>/dev/null > .orchestrator/y"`,
	"sh -c 'GIT_EXTERNAL_DIFF=./x git diff .orchestrator 2>&1'",
	"eval 'git -c diff.external=sh diff .orchestrator'",
	"d=.orchestr; d+=ator; git diff --output=$d/tasks/MASTER_PLAN.md",
	// env's split string (-S, --split-string and its prefixes, glued or
	// not, in a cluster, after other wrappers, nested) is the command line
	// env runs: its NAME=value set git's environment.
	`env --split-string='GIT_EXTERNAL_DIFF="truncate -s0" git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
	`env --split-str='GIT_EXTERNAL_DIFF=rm git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
	`env --split-string 'GIT_EXTERNAL_DIFF=rm git' diff .orchestrator`,
	`env --s='GIT_EXTERNAL_DIFF=rm git' diff .orchestrator`,
	`env -S'GIT_EXTERNAL_DIFF=rm git' diff .orchestrator`,
	`env -S 'GIT_EXTERNAL_DIFF=rm git' diff .orchestrator`,
	`env -iS'GIT_EXTERNAL_DIFF=rm PATH=/usr/bin git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
	`env -vS'GIT_EXTERNAL_DIFF=rm git' diff --no-index README.md .orchestrator/tasks/MASTER_PLAN.md`,
	`env -u X -S'GIT_EXTERNAL_DIFF=rm' git diff .orchestrator`,
	`env -S"-S'GIT_EXTERNAL_DIFF=rm git'" diff .orchestrator`,
	`env -S'GIT_EXTERNAL_DIFF=rm\_git' diff .orchestrator`,
	`sudo env -S'GIT_EXTERNAL_DIFF=rm git' diff .orchestrator`,
	`nice -n 5 env --split-string='GIT_EXTERNAL_DIFF=rm git' diff .orchestrator`,
	`env -S'sed -i' s/a/b/ .orchestrator/tasks/MASTER_PLAN.md`,
	`env -S sed -i s/a/b/ .orchestrator/tasks/MASTER_PLAN.md`,
	`env -S'-C .orchestrator rm -rf' tasks`,
	`env -S'GIT_EXTERNAL_DIFF=${X} git' diff .orchestrator`, // ${X}: unknown here, refused
	// A wrapper's option that takes the next word: the command comes after.
	"env --unset FOO rm -rf .orchestrator/tasks",
	"env -iu FOO rm -rf .orchestrator/tasks",
	"env -a name rm -rf .orchestrator/tasks",
	"env - rm -rf .orchestrator/tasks",
	"env -- FOO=1 rm -rf .orchestrator/tasks",
	"env ./a=b rm -rf .orchestrator/tasks",
	"sudo -Eu root rm -rf .orchestrator/tasks",
	"sudo -r role rm -rf .orchestrator/tasks",
	"timeout --kill-after 5 10 rm -rf .orchestrator/tasks",
	"stdbuf --output L rm -rf .orchestrator/tasks",
	"nice --adj 5 rm -rf .orchestrator/tasks",
	"timeout --bogus 5 rm .orchestrator/tasks/MASTER_PLAN.md", // unknown: a writer in either reading
	"strace --frob cp x .orchestrator/tasks/MASTER_PLAN.md",   // the other reading runs cp
	// Options from stdin or computed on the command line.
	"echo -i | xargs sed s/a/b/ .orchestrator/tasks/MASTER_PLAN.md",
	"X=-i; sed $X s/a/b/ .orchestrator/tasks/MASTER_PLAN.md",
	"sed $(echo -i) s/a/b/ .orchestrator/tasks/MASTER_PLAN.md",
	`set -- -i; sed "$@" s/a/b/ .orchestrator/tasks/MASTER_PLAN.md`,
	`sed ${X:--i} s/a/b/ .orchestrator/tasks/MASTER_PLAN.md`,
	`Y='x/w .orchestrator/tasks/MASTER_PLAN.md'; sed "s/a/$Y/" notes.txt`,
	"gofmt $(echo -w) .orchestrator/x.go",
	"git ls-files .orchestrator | xargs prettier --write",
	// Writers by an option or an output operand (paired reads above).
	"sort -o .orchestrator/tasks/MASTER_PLAN.md .orchestrator/tasks/MASTER_PLAN.md",
	"sort -uo .orchestrator/tasks/MASTER_PLAN.md notes.txt",
	"sort --out=.orchestrator/tasks/MASTER_PLAN.md notes.txt",
	"sort -T .orchestrator/tasks notes.txt",
	"sort --compress-program=sh -S 1K .orchestrator/tasks/MASTER_PLAN.md",
	"uniq notes.txt .orchestrator/ESCALATION.md",
	"uniq -c -- notes.txt .orchestrator/ESCALATION.md",
	"shuf -o .orchestrator/tasks/MASTER_PLAN.md -e x",
	"dos2unix .orchestrator/tasks/MASTER_PLAN.md",
	"unix2dos -n notes.txt .orchestrator/learnings.md",
	"mac2unix .orchestrator/ESCALATION.md",
	"cd .orchestrator && dos2unix tasks/MASTER_PLAN.md",
	"link notes.txt .orchestrator/tasks/task-09-x.md",
	"fallocate -l 1M .orchestrator/tasks/MASTER_PLAN.md",
	"xxd -r dump .orchestrator/tasks/MASTER_PLAN.md",
	"xxd -c 16 notes.txt .orchestrator/tasks/MASTER_PLAN.md",
	"yq -i '.a = 1' .orchestrator/tasks/x.yaml",
	"yq --inplace '.a = 1' .orchestrator/tasks/x.yaml",
	"iconv -f utf8 -t utf8 -o .orchestrator/learnings.md notes.txt",
	"iconv -f utf8 -t utf8 --output=.orchestrator/learnings.md notes.txt",
	"prettier --write .orchestrator/tasks/MASTER_PLAN.md",
	"prettier -w .orchestrator/tasks/MASTER_PLAN.md",
	"npx prettier --write .orchestrator/tasks/MASTER_PLAN.md",
	"npx -y prettier@3 --write .orchestrator/tasks/MASTER_PLAN.md",
	"npm exec -- prettier --write .orchestrator/tasks/MASTER_PLAN.md",
	"pnpm exec prettier --write .orchestrator/tasks/MASTER_PLAN.md",
	"pnpm --filter web dlx prettier --write .orchestrator/tasks/MASTER_PLAN.md",
	"yarn prettier --write .orchestrator/tasks/MASTER_PLAN.md",
	"bunx prettier --write .orchestrator/tasks/MASTER_PLAN.md",
	"clang-format -i .orchestrator/tasks/x.c",
	"sd 'review: true' 'review: false' .orchestrator/tasks/task-04-step.md",
	"tidy -m .orchestrator/tasks/x.html",
	"tidy -o .orchestrator/tasks/MASTER_PLAN.md notes.html",
	"black .orchestrator",
	"uvx black .orchestrator",
	"uv run --with black black .orchestrator",
	"poetry run black .orchestrator",
	"ruff format .orchestrator",
	"ruff check --fix .orchestrator",
	"isort .orchestrator",
	"eslint --fix .orchestrator",
	"eslint --cache --cache-location .orchestrator/tasks/MASTER_PLAN.md src",
	"stylelint --fix .orchestrator/x.css",
	"rubocop -a .orchestrator",
	"bundle exec rubocop -A .orchestrator",
	"shfmt -w .orchestrator/x.sh",
	"terraform fmt .orchestrator",
	"rustfmt .orchestrator/x.rs",
	"gofmt -w .orchestrator",
	"go fmt ./.orchestrator/...",
	"mdformat .orchestrator",
	"markdownlint --fix .orchestrator",
	"perl -pi -e s/a/b/ .orchestrator/tasks/MASTER_PLAN.md",
	"perl -i -pe s/a/b/ .orchestrator/tasks/MASTER_PLAN.md",
	"ruby -i -pe '$_.sub!(/a/, %q(b))' .orchestrator/tasks/MASTER_PLAN.md",
	"awk -i inplace '{print}' .orchestrator/tasks/MASTER_PLAN.md",
	"gawk -iinplace '{print}' .orchestrator/tasks/MASTER_PLAN.md",
	"gawk --include=inplace '{print}' .orchestrator/tasks/MASTER_PLAN.md",
	"gawk -o.orchestrator/tasks/MASTER_PLAN.md 1",
	"ex -sc '%s/a/b/|wq' .orchestrator/tasks/MASTER_PLAN.md",
	"fd -H . .orchestrator -x rm",
	"rg --pre rm Task .orchestrator",
}

// TestShellPlanReads: reads of .orchestrator change nothing; the same
// commands made to write do.
func TestShellPlanReads(t *testing.T) {
	for _, cmd := range planReads {
		if ChangesFiles(cmd) {
			t.Errorf("ChangesFiles(%q) = true: a read", cmd)
		}
		if !MentionsPath(cmd, "", ".orchestrator") {
			t.Errorf("MentionsPath(%q, .orchestrator) = false", cmd)
		}
	}
	for _, cmd := range planWrites {
		if !MentionsPath(cmd, "", ".orchestrator") || !ChangesFiles(cmd) {
			t.Errorf("%q: MentionsPath %v, ChangesFiles %v; want both", cmd, MentionsPath(cmd, "", ".orchestrator"), ChangesFiles(cmd))
		}
	}
}

// TestShellWrapperTargets: the command a wrapper runs, found where the
// wrapper finds it (its options read as its getopt reads them); "?" is an
// option no table knows: the scan cannot follow the command.
func TestShellWrapperTargets(t *testing.T) {
	for cmd, want := range map[string]string{
		"env -u X rm x":                  "rm",
		"env --unset X rm x":             "rm",
		"env --uns=X rm x":               "rm",
		"env -iu X rm x":                 "rm",
		"env -iuX rm x":                  "rm",
		"env - rm x":                     "rm",
		"env -- X=1 rm x":                "rm",
		"env ./a=b rm x":                 "rm",
		"env --ch /tmp rm x":             "rm",
		"env -a name rm x":               "rm",
		"env -S'rm -rf' x":               "rm", // the command env runs (the word after, as written, too)
		"env -S'-u X' rm x":              "rm",
		"sudo -Eu root rm x":             "rm",
		"sudo --user root -- rm x":       "rm",
		"sudo -r role -t type rm x":      "rm",
		"timeout 5 rm x":                 "rm",
		"timeout -k 1 5 rm x":            "rm",
		"timeout --kill-after 1 5 rm x":  "rm",
		"timeout --sig=KILL 5 rm x":      "rm",
		"nice -n 5 rm x":                 "rm",
		"nice -5 rm x":                   "rm",
		"nice --adjustment 5 rm x":       "rm",
		"stdbuf --output L rm x":         "rm",
		"xargs -I{} rm {}":               "rm",
		"xargs -i rm {}":                 "rm",
		"xargs --max-args 1 rm":          "rm",
		"xargs -0rL1 rm":                 "rm",
		"ionice -c3 -n 7 rm x":           "rm",
		"chrt -f 10 rm x":                "rm",
		"taskset -c 0 rm x":              "rm",
		"flock -w 5 lock rm x":           "rm",
		"exec -a name rm x":              "rm",
		"strace -f --trace file rm x":    "rm",
		"npx -y prettier --write x":      "prettier",
		"npm exec -- prettier x":         "prettier",
		"npm install prettier":           "npm",
		"pnpm --filter web exec rm x":    "rm",
		"uv run --with ruff ruff format": "ruff",
		"uv tool run black .":            "black",
		"uvx --from black black .":       "black",
		"bundle exec rubocop -a":         "rubocop",
		// An unknown wrapper option: both readings are judged (it takes
		// the next word or not); a plain program either way is followed,
		// a shell or interpreter in either reading is unsure.
		"timeout --bogus 5 rm x":  "rm",
		"env -Z rm x":             "rm",
		"sudo --frobnicate rm x":  "rm",
		"nice -q rm x":            "rm",
		"sudo --frobnicate sh x":  "sh",
		"env -Z x bash -c 'rm y'": "?",
		"nice -q python3 -c pass": "python3",
		`env -S'${X} rm' x`:       "?",
		`env -S'rm \q' x`:         "?",
		`env -S"rm 'x" y`:         "?",
	} {
		sc := shellScan(cmd)
		var got []string
		for _, c := range sc.cmds {
			if k := c.effective().k; k >= 0 {
				got = append(got, c.name(k))
			}
		}
		switch {
		case want == "?" && !sc.suspicious:
			t.Errorf("%q: followed (runs %v), want the scan suspicious", cmd, got)
		case want != "?" && (sc.suspicious || !slices.Contains(got, want)):
			t.Errorf("%q: runs %v (suspicious %v), want %s", cmd, got, sc.suspicious, want)
		}
	}
}

// TestShellEnvSplit: env -S's string is split as GNU env splits it; where
// GNU env is installed, its own split is compared too.
func TestShellEnvSplit(t *testing.T) {
	cases := map[string]string{
		`GIT_EXTERNAL_DIFF="truncate -s0" git`: "[GIT_EXTERNAL_DIFF=truncate -s0][git]",
		"a  b\tc":                              "[a][b][c]",
		`'a b' "c d" e\_f "g\_h"`:              "[a b][c d][e][f][g h]",
		`a '' b`:                               "[a][][b]",
		`a#b #c d`:                             "[a#b]",
		`"#x" y`:                               "[#x][y]",
		`a\cb c`:                               "[a]",
		`'\c' x`:                               `[\c][x]`,
		`'a\'b' c`:                             "[a'b][c]",
		`'a\\b' c`:                             `[a\b][c]`,
		`"a\"b" c`:                             `[a"b][c]`,
		`a\$b \#c`:                             "[a$b][#c]",
		`-i -C/tmp A=B`:                        "[-i][-C/tmp][A=B]",
	}
	bad := []string{`$X`, `a\q`, `'a`, `"a`, `"a\c"`, `a\`} // env refuses them
	unknown := []string{`${X} rm`, `"${X}"`}                // env expands them: the value is unknown here
	for s, want := range cases {
		words, ok := shEnvSplit(s)
		var b strings.Builder
		for _, w := range words {
			b.WriteString("[" + w.text + "]")
		}
		if !ok || b.String() != want {
			t.Errorf("shEnvSplit(%q) = %s, %v; want %s", s, b.String(), ok, want)
		}
	}
	for _, s := range append(bad, unknown...) {
		if _, ok := shEnvSplit(s); ok {
			t.Errorf("shEnvSplit(%q) ok; want refused", s)
		}
	}
	if out, err := exec.Command("env", "--version").Output(); err != nil || !strings.Contains(string(out), "GNU coreutils") {
		t.Skipf("no GNU env here (%v)", err)
	}
	for s, want := range cases {
		if out, err := exec.Command("env", "-Sprintf [%s] "+s).Output(); err != nil || string(out) != want {
			t.Errorf("env -S %q: %q (%v), want %s", s, out, err, want)
		}
	}
	for _, s := range bad {
		if err := exec.Command("env", "-Sprintf [%s] "+s).Run(); err == nil {
			t.Errorf("env -S %q: accepted", s)
		}
	}
}

func TestShellStateAttacks(t *testing.T) {
	for _, cmd := range stateAttacks {
		if !MentionsPath(cmd, "", ".orchestrator/state") {
			t.Errorf("MentionsPath(%q, .orchestrator/state) = false", cmd)
		}
		if !MentionsPath(cmd, "", ".orchestrator") {
			t.Errorf("MentionsPath(%q, .orchestrator) = false", cmd)
		}
		if !ChangesFiles(cmd) {
			t.Errorf("ChangesFiles(%q) = false", cmd)
		}
	}
}

func TestShellMentionsPath(t *testing.T) {
	for _, tc := range []struct {
		cmd, cwd, dir string
		want          bool
	}{
		{"ls src", "", ".orchestrator", false},
		{"cat README.md", "", ".orchestrator", false},
		{"go test ./...", "", ".orchestrator", false},
		{"orch-hook status", "", ".orchestrator", false},
		{"ls *", "", ".orchestrator", false},
		{"rm -rf *", "", ".orchestrator", false}, // * skips dot files
		{"rm -rf *", "", "specs", true},          // but not specs/
		{"shopt -s dotglob; rm -rf *", "", ".orchestrator", true},
		{"rm -rf .*", "", ".orchestrator", true},
		{"rm -rf .o*", "", ".orchestrator/state", false}, // a parent of the dir
		{"ls .orchestrator", "", ".orchestrator/state", false},
		{"ls .orchestrator", "", ".orchestrator", true},
		// Anywhere in a relative path: a link made in the same command
		// (ln -s . x) leads back to the project's own state.
		{"cat x/.orchestrator/state/y", "", ".orchestrator/state", true},
		{"rm x", ".orchestrator/state", ".orchestrator/state", true},
		{"ls", ".orchestrator", ".orchestrator", true},
		{"rm -rf state", ".orchestrator", ".orchestrator/state", true},
		{"rm -rf ../.orchestrator/state", "src", ".orchestrator/state", true},
		{"ls ../x/.orchestrator/state", "../y", ".orchestrator/state", true},
		{"cat ~/p/.orchestrator/state/x", "", ".orchestrator/state", true},
		{"cd /tmp && ls state", "", ".orchestrator/state", false},
		{"cd \"$D\" && ls", "", ".orchestrator", true},
		{"git --git-dir=.orchestrator/state/x log", "", ".orchestrator/state", true},
		{"sed -i s/a/b/ src/*.go", "", ".orchestrator", false},
		{`rm -rf "$(printf .orc%s hestrator)"/state`, "", ".orchestrator/state", true},
		{`cat "$f"`, "", ".orchestrator", false},
		{"rm -rf /work/main/.orchestrator", "", ".orchestrator", true},
		{"rm -rf /work/main/.orchestrator", "", ".orchestrator/state", false},
		{`rm -rf "$TMPDIR/x"`, "", ".orchestrator/state", false},
		{`rm -rf "$TMPDIR/x"`, "", ".orchestrator", false},
	} {
		if got := MentionsPath(tc.cmd, tc.cwd, tc.dir); got != tc.want {
			t.Errorf("MentionsPath(%q, %q, %q) = %v, want %v", tc.cmd, tc.cwd, tc.dir, got, tc.want)
		}
	}
}

// topicWrites reach a coordinate topic directory (specs/001_x) from the
// main thread's Bash without naming it whole: through cd (in every
// spelling), a -C option, the session's directory, or its parent
// directory named as the target of a command that changes files.
var topicWrites = []struct{ cmd, cwd string }{
	{"cd specs; printf x > 001_x/reports/a.md", ""},
	{"cd specs && printf x > 001_x/reports/a.md", ""},
	{"mkdir -p specs; cd specs; printf '# F\\n' > 001_x/reports/001_y.md", ""},
	{"pushd specs; printf x > 001_x/reports/a.md; popd", ""}, // popd: counts as unknown
	{"pushd specs >/dev/null && printf x > 001_x/reports/a.md", ""},
	{"(cd specs; printf x > 001_x/reports/a.md)", ""},
	{"(cd specs && printf x > 001_x/reports/a.md)", ""},
	{"{ cd specs; printf x > 001_x/reports/a.md; }", ""},
	{"sh -c 'cd specs; printf x > 001_x/reports/a.md'", ""},
	{"builtin cd specs; printf x > 001_x/reports/a.md", ""},
	{"command cd specs; printf x > 001_x/reports/a.md", ""},
	{"cd -P specs; printf x > 001_x/reports/a.md", ""},
	{"cd 'spe'cs; printf x > 001_x/reports/a.md", ""},
	{"cd sp*; printf x > 0*/reports/a.md", ""},
	{"cd specs; cd 001_x; printf x > reports/a.md", ""},
	{"cd src/../specs; printf x > 001_x/reports/a.md", ""},
	{"CDPATH=specs; cd 001_x; printf x > reports/a.md", ""},
	{"export CDPATH=:/tmp:specs && cd 001_x && printf x > reports/a.md", ""},
	{"CDPATH=$(cat /tmp/p); cd 001_x; printf x > reports/a.md", ""},
	{"cd ~-; printf x > 001_x/reports/a.md", ""},
	{"env -C specs sh -c 'printf x > 001_x/reports/a.md'", ""},
	{"env --chdir=specs sh -c 'printf x > 001_x/reports/a.md'", ""},
	{"git -C specs checkout -- 001_x", ""},
	{"tar -C specs -xf /tmp/forged.tar", ""},
	{"tar --directory=specs -xf /tmp/forged.tar", ""},
	{"cd specs; tar -xf /tmp/forged.tar", ""},
	{"cd specs && cp -r /tmp/forged/001_x .", ""},
	{"cd specs && git checkout .", ""},
	{"cp -r /tmp/forged/001_x specs", ""},
	{"D=specs; cp -r /tmp/forged/001_x $D", ""},
	{"cp -r /tmp/forged/001_x --target-directory=specs", ""},
	{`python3 -c "import shutil; shutil.copytree('/tmp/forged', 'specs', dirs_exist_ok=True)"`, ""},
	{"printf x > specs", ""},
	{"mkdir -p specs", ""},
	{"rm -rf specs", ""},
	{"tar -xf /tmp/forged.tar", "specs"},
	{"printf x > 001_x/reports/a.md", "specs"},
	{"printf x > a.md", "specs/001_x/reports"},
}

func TestShellTopicWrites(t *testing.T) {
	for _, tc := range topicWrites {
		c := &Call{Event: PreToolUse, Tool: "Bash", Command: tc.cmd, CwdRel: tc.cwd}
		if !c.Reaches("specs/001_x") {
			t.Errorf("%q (in %q) does not reach specs/001_x", tc.cmd, tc.cwd)
		}
		if !NeedsState(c) {
			t.Errorf("NeedsState(%q in %q) = false: decided without the workflow", tc.cmd, tc.cwd)
		}
	}
	// The same, for a topic under .claude/specs.
	for _, cmd := range []string{"cd .claude; tar -xf /tmp/forged.tar", "cp -r /tmp/forged .claude", "cd .claude/specs && printf x > 001_x/reports/a.md"} {
		c := &Call{Event: PreToolUse, Tool: "Bash", Command: cmd}
		if !c.Reaches(".claude/specs/001_x") || !NeedsState(c) {
			t.Errorf("%q: reaches .claude/specs/001_x %v, needs the state %v; want both", cmd, c.Reaches(".claude/specs/001_x"), NeedsState(c))
		}
	}
}

// Commands that cannot change a topic stay allowed (and fast: decided
// without reading the state when they change nothing near specs/).
func TestShellTopicNotReached(t *testing.T) {
	for _, tc := range []struct {
		cmd, cwd string
		needs    bool // NeedsState: they change files and mention specs/ (the state is read; still allowed)
	}{
		{"ls specs && cat specs/001_x/reports/a.md", "", false},
		{"cd specs && ls", "", false},
		{"cd src && make", "", false},
		{"cd src; printf x > a.go", "", false},
		{"git -C src checkout .", "", false},
		{"go test ./...", "specs", false},
		{"grep -r token specs", "", false},
		{"printf x > specs/README.md", "", true},
		{"mkdir -p src/specs", "", true},
		{"ls specs; rm -rf build", "", true},
		{"cd specs/002_other && printf x > notes.md", "", true},
		{`git commit -m "Add the specs"`, "", true},
		{"echo specs > notes.txt", "", true},
	} {
		c := &Call{Event: PreToolUse, Tool: "Bash", Command: tc.cmd, CwdRel: tc.cwd}
		if c.Reaches("specs/001_x") {
			t.Errorf("%q (in %q) reaches specs/001_x", tc.cmd, tc.cwd)
		}
		if NeedsState(c) != tc.needs {
			t.Errorf("NeedsState(%q in %q) = %v, want %v", tc.cmd, tc.cwd, NeedsState(c), tc.needs)
		}
	}
}

func TestShellChangesFiles(t *testing.T) {
	for cmd, want := range map[string]bool{
		"rm -rf x":                        true,
		"sed -i s/a/b/ f":                 true,
		"sed --in-place s/a/b/ f":         true,
		"sed -Ei s/a/b/ f":                true,
		"sed -n 's/a/b/w out' f":          true,
		"sed '1e touch x' f":              true,
		"perl -pi -e s/a/b/ f":            true,
		"echo x > f":                      true,
		"echo x >> f":                     true,
		"make &> log":                     true,
		"echo x >| f":                     true,
		"echo x >&f":                      true,
		"find . -delete":                  true,
		`find . -exec rm {} \;`:           true,
		`python3 -c "open('f','w')"`:      true,
		"node -e 'x'":                     true,
		"bash script.sh":                  true,
		"sh -c 'ls'":                      true,
		"git status":                      false,
		"git diff .orchestrator/tasks":    false,
		"git -C sub log -- .orchestrator": false,
		"git diff --output=x.patch":       true,
		"git branch -D main":              true,
		"git checkout -- .":               true,
		"git commit -m x":                 true,
		"xargs rm < list":                 true,
		"sudo rm x":                       true,
		"cat f | tee g":                   true,
		"cp a b":                          true,
		"touch x":                         true,
		"mkdir d":                         true,
		`awk '{print > "x"}' f`:           true,
		"curl -sSLo x https://e.com":      true,
		"gofmt -w .":                      true,
		"ls; $X":                          true,
		"echo $(rm -rf x)":                true,
		"echo $((rm -rf x) )":             true,
		"nohup nohup nohup nohup nohup nohup nohup nohup nohup rm x": true,
		"ls > /dev/null":                   false,
		"go test ./... 2>&1":               false,
		"cat f >&2":                        false,
		"grep -r x . 2>/dev/null":          false,
		"sed s/a/b/ f":                     false,
		"sed -n '/x/p' f":                  false,
		"sed -e 's/i/j/' f":                false,
		"orch-hook status":                 false,
		"ls src":                           false,
		"cat README.md":                    false,
		"go test ./...":                    false,
		"echo hi":                          false,
		"find . -name x":                   false,
		"python3 --version":                false,
		"awk '{print $1}' f":               false,
		"gofmt -l .":                       false,
		"echo $(( 1 + 2 ))":                false,
		"cat <<EOF\n> not a redirect\nEOF": false,
	} {
		if got := ChangesFiles(cmd); got != want {
			t.Errorf("ChangesFiles(%q) = %v, want %v", cmd, got, want)
		}
	}
}

// TestShellLexer pins the word splitting and quote removal.
func TestShellLexer(t *testing.T) {
	for cmd, want := range map[string]string{
		`a 'b c' "d $e" f\ g`:      "a|b c|d $e|f g",
		`x$'\t'y`:                  "x\ty",
		"a;b&&c||d|e&f":            "a/b/c/d/e/f",
		"a${IFS}b$IFS'c'":          "a|b|c",
		"echo {x,y}z":              "echo|xz|yz",
		"2>/dev/null ls -l":        "ls|-l",
		"a # comment\nb":           "a/b",
		"cat <<EOF\nbody\nEOF\nls": "cat/ls",
		"echo 'unterminated rest":  "echo|unterminated rest",
		"echo $(a b) `c d`":        "a|b/c|d/echo|$()|$()",
		"line\\\ncontinued":        "linecontinued",
		// a function's body is commands of its own, not its name's arguments
		"f() { rm x; }":        "f/{|rm|x/}",
		"function g { rm x; }": "function|g/{|rm|x/}",
		"then h () ( rm x )":   "then|h/rm|x",
		"a=() ls":              "a=|ls",
	} {
		sc := shellScan(cmd)
		var cmds []string
		for _, c := range sc.cmds {
			var ws []string
			for _, w := range c.words {
				ws = append(ws, w.text)
			}
			cmds = append(cmds, strings.Join(ws, "|"))
		}
		if got := strings.Join(cmds, "/"); got != want {
			t.Errorf("shellScan(%q) = %q, want %q", cmd, got, want)
		}
	}
}

func TestShellWordFlags(t *testing.T) {
	w := shellScan(`"$X"/a b* 'c*' d[0] [ {p,q}`).cmds[0].words
	flags := func(w shWord) string {
		return map[bool]string{true: "D", false: "-"}[w.dynamic] + map[bool]string{true: "G", false: "-"}[w.glob] + map[bool]string{true: "B", false: "-"}[w.brace]
	}
	var got []string
	for _, x := range w {
		got = append(got, flags(x))
	}
	if want := "D-- -G- --- -G- --- --B --B"; strings.Join(got, " ") != want {
		t.Errorf("flags = %q, want %q", strings.Join(got, " "), want)
	}
}

func FuzzShellScan(f *testing.F) {
	for _, s := range binaryDisguises {
		f.Add(s)
	}
	for _, s := range stateAttacks {
		f.Add(s)
	}
	for _, tc := range topicWrites {
		f.Add(tc.cmd)
	}
	for _, s := range append(planReads, planWrites...) {
		f.Add(s)
	}
	f.Add("$((((((((((((1))))))))))))")
	f.Add("${${${${${${${${${x}}}}}}}}}")
	f.Add("{a,{b,{c,{d,{e,f}}}}}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}{s,t}{u,v}")
	f.Add("cat <<A <<-B\nx\nA\n\ty\n\tB\n")
	f.Add("eval eval eval eval eval eval eval eval eval eval 'orch-hook hook'")
	f.Fuzz(func(t *testing.T, cmd string) {
		NamesBinary(cmd, testPlainOK)
		MentionsPath(cmd, "", ".orchestrator/state")
		MentionsPath(cmd, "src", ".orchestrator")
		ChangesFiles(cmd)
		ChangesAbove(cmd, "specs", "specs/001_x")
	})
}

// TestShellLargeInput: adversarial input of 100 KB stays fast.
func TestShellLargeInput(t *testing.T) {
	for _, unit := range []string{"$(", "${", "$((", "`", "{a,", "[", `\`, "'", "\"", "(", "a=(", "<<E\n", "eval ", "sh -c '", "/", ".o*/", "$X/", "x ", "{ ", "f () ", "function f "} {
		cmd := strings.Repeat(unit, 100000/len(unit))
		start := time.Now()
		NamesBinary(cmd, testPlainOK)
		MentionsPath(cmd, "", ".orchestrator/state")
		ChangesFiles(cmd)
		ChangesAbove(cmd, "", "specs/001_x")
		d := time.Since(start)
		t.Logf("%q x %d: %v", unit, 100000/len(unit), d)
		if d > 5*time.Second {
			t.Errorf("%q x %d took %v", unit, 100000/len(unit), d)
		}
	}
}

// BenchmarkShell is the Bash rule's cost on one call: the scan, then the
// facts the rules read (each once), for commonly seen commands.
func BenchmarkShell(b *testing.B) {
	for _, tc := range []struct{ name, cmd string }{
		{"plain", "cat hello.txt && echo to-stderr >&2"},
		{"plan-read", "cat .orchestrator/tasks/MASTER_PLAN.md 2>/dev/null"},
		{"git-read", "git log -p -3 -- .orchestrator/tasks 2>&1 | head -50"},
		{"build", "go test ./... 2>&1 | tail -20"},
	} {
		cmd := tc.cmd
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c := &Call{Event: PreToolUse, Tool: "Bash", Command: cmd}
				c.TouchesState()
				c.namesBinary()
				c.Reaches(".claude/specs")
			}
		})
	}
}
