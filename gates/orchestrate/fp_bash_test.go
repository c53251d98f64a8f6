package orchestrate

import (
	"strings"
	"testing"

	"github.com/orch-hook/orch-hook/gates"
)

// fp_bash_test.go is a survey of the Bash rule (bash.go, shell.go) against
// the commands a coding agent runs every day in Go, Node/TypeScript,
// Python, Rust and Java projects, and against writes of the plan and the
// state spelled with the rule's newer exemptions (git's reads, device
// redirections, env -S, the wrapper and formatter tables, package
// runners). Every table records CURRENT behaviour, so the file passes
// against the code as it is: rows under "false refusal" and "bypass" are
// findings, not wishes. When gates/ changes to fix one, move its row to
// fpEveryday (a false refusal fixed) or to fpHeld (a bypass closed).
//
// Two situations are judged, as package internal/app judges them:
//   - no workflow: app.Handle runs gates.Static only (the binary rule),
//     then finds no state and allows;
//   - an orchestrate workflow at 4a: gates.Decide (Static, then preBash:
//     touchesState: the state named, a write under .orchestrator, a
//     whole-project sweep).

const (
	fpBinaryMsg = "this command names the orch-hook binary (in some spelling)"
	fpSweepMsg  = "this command changes files across the whole project"
	fpWriteMsg  = "change or remove anything under .orchestrator, are not allowed"
)

// fpJudge is what the model gets for one Bash command.
type fpJudge struct {
	staticDeny   bool // refused with no workflow (and with one)
	staticReason string
	activeDeny   bool // refused at 4a
	activeReason string
}

func fpBash(h *harness, cmd, cwd string) fpJudge {
	h.t.Helper()
	var j fpJudge
	st, denied := gates.Static(&gates.Call{Event: gates.PreToolUse, Tool: "Bash", ToolUseID: "toolu_fp", Command: cmd, CwdRel: cwd})
	j.staticDeny, j.staticReason = denied, st.Reason
	o := h.do(&gates.Call{Event: gates.PreToolUse, Tool: "Bash", ToolUseID: "toolu_fp", Command: cmd, CwdRel: cwd})
	j.activeDeny, j.activeReason = o.Verdict == gates.Deny, o.Reason
	return j
}

// fpEveryday: commands a coding agent runs every day, none of which names
// or reaches .orchestrator. All are allowed, with and without a workflow.
var fpEveryday = []string{
	// Tree patterns under a directory, or that cannot match Markdown or
	// JSON (false sweep refusals, fixed).
	`prettier --write "src/**/*.{ts,tsx}"`, `prettier --write "src/**/*.ts"`, `prettier --write 'src/**/*.{ts,tsx,css}'`,
	`npx prettier --write "src/**/*.{js,jsx}"`, `markdownlint --fix 'docs/**/*.md'`, `dprint fmt src/**`,
	`prettier --write '**/*.{ts,tsx}'`, `prettier --write "**/*.ts"`,
	// git
	"git status", "git status --short", "git status -sb", "git diff", "git diff --stat", "git diff --cached",
	"git diff HEAD~1 -- src/", "git log --oneline -20", "git log --graph --oneline --all",
	"git log -p -3 -- internal/server.go", "git show HEAD", "git show --stat HEAD", "git add -A", "git add .",
	"git add src/main.go internal/", "git add -p", `git commit -m "Fix off-by-one in pagination"`, `git commit -am "wip"`,
	"git commit --amend --no-edit", "git branch -a", "git branch -d feature/x", "git checkout -b feature/login",
	"git checkout main", "git checkout -- src/app.ts", "git switch -c fix/typo", "git restore --staged src/app.ts",
	"git restore src/app.ts", "git stash", "git stash pop", "git stash list", "git rebase -i HEAD~3", "git rebase main",
	"git rebase --continue", "git pull --rebase origin main", "git push -u origin HEAD", "git fetch --all --prune",
	"git merge --no-ff feature/x", "git cherry-pick abc123", "git reset --hard HEAD~1", "git reset HEAD src/app.ts",
	"git clean -n", "git rm --cached .env", "git mv src/old.ts src/new.ts", "git tag v1.2.0",
	"git blame -L 10,30 src/app.ts", "git grep -n TODO", "git worktree list", "git submodule update --init --recursive",
	"git -C ../other status", "git --no-pager log -5", "git log --format='%h %s' | head", "git diff > changes.patch",
	"git apply fix.patch", "gh pr create --fill", "gh issue list",
	// Go
	"go build ./...", "go test ./...", "go test -run TestFoo -v ./internal/server", "go test -race -count=1 ./...",
	"go vet ./...", "go mod tidy", "go generate ./...", "go run ./cmd/server", "go install ./cmd/tool",
	"gofmt -w ./internal", "gofmt -l .", "gofmt -w .", "go fmt ./...", "goimports -w .", "goimports -w ./internal",
	"gofumpt -w .", "golangci-lint run ./...", "golangci-lint run --fix", "staticcheck ./...",
	"$(go env GOPATH)/bin/golangci-lint run ./...", "~/go/bin/staticcheck ./...", "go tool pprof cpu.out",
	"go test -coverprofile=coverage.out ./... && go tool cover -html=coverage.out -o coverage.html",
	"go test ./... 2>&1 | tee test.log", "export PATH=$PATH:$(go env GOPATH)/bin",
	// Node / TypeScript
	"npm install", "npm ci", "npm test", "npm run build", "npm run lint -- --fix", "npm run dev", "npm i -D prettier",
	"npm -w app run test", "npm test -- --watch=false", "npm ci --prefer-offline --no-audit", "npm -v",
	"npx prettier --write src/", "npx prettier --check .", "npx eslint --fix src", "npx tsc --noEmit",
	"npx jest --watchAll=false", "npx vitest run", "npx playwright test", "npx -y create-react-app my-app",
	"npx --no-install prettier --check src", "npx -p typescript tsc --version", "npx prettier@3 --write src",
	"npm exec -- eslint src", "npm exec --yes -- eslint src", "npx tsx src/index.ts", "npx cross-env NODE_ENV=test jest",
	"eslint --fix src", "eslint --fix .", `eslint --fix "src/**/*.ts"`, "prettier --write src/ test/",
	"prettier --write README.md CHANGELOG.md", "prettier --write '*.json'", `prettier --check "**/*.md"`,
	"yarn install", "yarn", "yarn test", "yarn build", "yarn lint --fix", "yarn install --frozen-lockfile",
	"yarn --cwd packages/app test", "yarn -s test", "yarn workspace web test", "yarn dlx create-vite app",
	"yarn prettier --check src", "yarn eslint --fix src", "yarn add -D prettier",
	"pnpm install", "pnpm i --frozen-lockfile", "pnpm test", "pnpm run build", "pnpm exec prettier --write src",
	"pnpm exec eslint --fix src", "pnpm dlx create-vite my-app", "pnpm -r test", "pnpm --filter web build",
	"pnpm -F web build", "pnpm -C frontend test", "pnpm -w add -D prettier", "pnpm -r --parallel run dev",
	"yarn dlx prettier --write src", "bunx prettier --write src", "bunx --bun vite build", "bun test", "bun run build",
	`node -e "console.log(require('./package.json').version)"`, "node scripts/build.js", "node -p \"require('./package.json').scripts\"",
	"node --test", "tsc -p tsconfig.json", "./node_modules/.bin/eslint src", "biome check --write src",
	"biome format --write src", "deno fmt src", "deno fmt --check", "deno test", "dprint check",
	"markdownlint --fix docs", "mdformat docs README.md",
	// Python
	"python -m pytest", "pytest -x -q tests/", "python -m pytest tests/test_api.py::test_login -vv",
	`python -c "import sys; print(sys.version)"`, `python3 -c 'import json; print(json.load(open("package.json"))["name"])'`,
	"pip install -r requirements.txt", "pip install -e .", "python -m venv .venv", "source .venv/bin/activate && pytest",
	". .venv/bin/activate && pytest", ".venv/bin/pytest -q", "ruff check .", "ruff check --fix src", "ruff format src",
	"ruff format .", "black .", "black src tests", "black --check .", "isort .", "isort --check-only .", "mypy src",
	"autopep8 -i src/x.py", "uv sync", "uv run pytest", "uv run ruff format src", "uv pip install requests",
	"uvx ruff check .", "uvx --from ruff ruff check .", "uv run --frozen pytest", "uv run --with pytest-cov pytest",
	"uv run --extra dev pytest", "uv run -m pytest", "uv --directory backend run pytest", "uv tool run ruff check .",
	"poetry install", "poetry run pytest", "poetry run black src", "poetry -C backend run pytest", "pipx run black src",
	"pipx run --spec black==24.1.0 black --check src", "tox -e py311", "python -m json.tool package.json",
	"python - <<'EOF'\nimport json\nprint(json.dumps({\"a\": 1}))\nEOF",
	// Rust, Java, C
	"cargo build", "cargo build --release", "cargo test", "cargo test -- --nocapture", "cargo fmt", "cargo fmt --all",
	"cargo fmt --check", "cargo clippy -- -D warnings", "cargo clippy --fix --allow-dirty", "cargo run --bin server",
	"rustfmt src/main.rs", "~/.cargo/bin/cargo test", "mvn clean install", "mvn -q test", "mvn spotless:apply",
	"./mvnw test", "./gradlew build", "./gradlew test --tests com.example.FooTest", "gradle spotlessApply",
	"java -jar target/app.jar", "google-java-format -i src/main/java/com/x/App.java", "ktlint -F 'src/**/*.kt'",
	"clang-format -i src/*.cpp", "make", "make test", "make -j4", "make clean", "make -C build",
	"cmake -S . -B build && cmake --build build -j2", "ctest --test-dir build --output-on-failure",
	"terraform fmt -recursive", "shfmt -w scripts/", "rubocop -a", "bundle exec rspec", "bundle exec rubocop",
	// wrappers with their ordinary options
	"nice -n 10 make -j2", "nice -19 make", "ionice -c3 make", "taskset -c 0,1 make -j2", "timeout 60 npm test",
	"timeout 5m go test ./...", "timeout -k 10 300 make test", "timeout --preserve-status 30 npm test",
	"timeout -s KILL 60 npm test", "env CI=1 npm test", "env -u NODE_OPTIONS npm test", "env -i PATH=/usr/bin make",
	"env -C frontend npm test", "env -S 'CI=1 npm test'", "CI=true npm test", "NODE_ENV=production npm run build",
	"stdbuf -oL npm test | tee test.log", "nohup npm run dev > dev.log 2>&1 &", "setsid -f npm run dev",
	"time go test ./...", "time make", "/usr/bin/time -v make", "flock /tmp/build.lock make", "unbuffer npm test",
	"sudo apt-get install -y jq", "sudo apt-get update", "sudo -E npm install -g typescript",
	"sudo -u postgres psql -c 'select 1'", "sudo --preserve-env=PATH make install",
	"strace -f -e trace=file ./app", "strace -c ls", "strace -yy ls", "strace -o trace.log -f ./server",
	"strace -e trace=openat -f go test ./...", "strace --trace=file ls", "ltrace -c ./app", "ltrace -S ./app",
	"parallel -j4 gzip ::: logs/*.log", "ls src/*.go | parallel gofmt -l", "parallel --will-cite echo ::: a b c",
	// files, pipelines, here-documents
	"find src -name '*.ts' | xargs grep -l TODO", "find . -name '*.go' -not -path './vendor/*' | xargs gofmt -l",
	"find src -name '*.orig' -delete", "find src -type f -name '*.ts' -exec sed -i 's/foo/bar/g' {} +",
	"grep -rl 'oldName' src | xargs sed -i 's/oldName/newName/g'", "rg -n \"TODO\" --type go", "rg --files | head",
	"fd -e ts src", "sed -i 's/v1/v2/' src/config.ts", "sed -i.bak -e 's/foo/bar/' README.md", "sed -n '1,50p' src/main.go",
	"awk '{print $1}' access.log | sort | uniq -c | sort -rn | head", "perl -pi -e 's/foo/bar/g' src/*.c",
	"cp src/a.ts src/b.ts", "cp -r templates/ build/", "mv src/old.py src/new.py", "rm src/legacy.js",
	"rm -rf dist build node_modules", "mkdir -p src/components/Button", "touch src/__init__.py", "chmod +x scripts/deploy.sh",
	"cat > src/x.go <<EOF\npackage x\n\nfunc X() int { return 1 }\nEOF",
	"cat <<'EOF' > src/util.ts\nexport const add = (a: number, b: number) => a + b;\nEOF",
	"tee src/config.json > /dev/null <<EOF\n{\"a\": 1}\nEOF", `echo 'export * from "./button"' >> src/index.ts`,
	"jq '.version' package.json", "jq '.scripts.test = \"vitest\"' package.json > tmp.json && mv tmp.json package.json",
	"xargs -n1 echo < files.txt", "cat files.txt | xargs -I{} cp {} backup/", "seq 1 5 | xargs -P4 -n1 ./run.sh",
	"curl -sSL https://example.com/install.sh -o install.sh", "tar -xzf release.tar.gz -C vendor/",
	"unzip -o dist.zip -d dist", "patch -p1 < fix.patch", "diff -u a.txt b.txt", "ls -la", "wc -l src/*.ts",
	"cd frontend && npm test", "cd backend && go test ./... && cd ..", "for f in src/*.ts; do echo \"$f\"; done",
	"git diff --name-only | xargs -r gofmt -l", "git ls-files '*.py' | xargs black", "bash scripts/test.sh",
	"sh -c 'cd src && make'", "./scripts/test.sh", "docker compose up -d", "docker compose down", "docker build -t app .",
	`docker run --rm -v "$PWD":/src -w /src golang:1.22 go test ./...`, `docker compose exec app sh -c "npm test"`,
	"watch -n 5 'kubectl get pods'", "set -euo pipefail; make test", "command -v jq",
	// reading the plan (the README's "Bash reads")
	"ls -la .orchestrator", "cat .orchestrator/tasks/MASTER_PLAN.md", "head -50 .orchestrator/tasks/task-01.md",
	`grep -n "Task 01" .orchestrator/tasks/MASTER_PLAN.md`, "git diff -- .orchestrator",
	"git log -p -- .orchestrator/tasks 2>&1 | head -50",
}

func TestFPEverydayAllowed(t *testing.T) {
	h := driveTo(t, S4a)
	for _, cmd := range fpEveryday {
		if j := fpBash(h, cmd, ""); j.staticDeny || j.activeDeny {
			t.Errorf("%q refused (no workflow: %v, at 4a: %v): %s%s", cmd, j.staticDeny, j.activeDeny, j.staticReason, j.activeReason)
		}
	}
	h.expect(S4a)
}

// fpFalseRefusal is a command that names and reaches nothing of
// .orchestrator yet is refused; static: refused with no workflow too.
type fpFalseRefusal struct {
	cmd, cwd string
	static   bool
	msg      string
}

// fpFalseRefusals: refused today, though they neither name .orchestrator
// nor reach it (proposed narrowings in the comments and the report).
var fpFalseRefusals = []fpFalseRefusal{
	// shTreePattern takes any "**" for a pattern over the whole tree, also
	// under a literal directory. Narrowing: a tree pattern only when its
	// first component is a glob ("**/x", "*/tasks/x"); "src/**/x" stays
	// under src.
	// A root pattern whose file names cannot be Markdown or JSON matches
	// nothing in .orchestrator. Narrowing: a tree pattern counts only when
	// its last component may match .md/.json/.jsonl.
	// sweepsProject's atRoot reads "." against the session's directory,
	// not the one the command cd'ed to (mentionsPath follows cd: bases).
	// Narrowing: resolve find's start points against sc.bases.
	{cmd: "cd build && find . -name '*.o' -delete", msg: fpSweepMsg},
	{cmd: "cd /tmp && find . -name '*.pyc' -delete", msg: fpSweepMsg},
	// find . with -delete/-exec is a sweep whatever its tests (README
	// says so); these delete only names .orchestrator never holds.
	// Narrowing: a conjunction with -name/-iname of a literal suffix that
	// no orch-hook file has (not .md, .json, .jsonl, .key, .lock), or a
	// -path ./.orchestrator -prune.
	{cmd: "find . -name '*.pyc' -delete", msg: fpSweepMsg},
	{cmd: "find . -type d -name __pycache__ -exec rm -rf {} +", msg: fpSweepMsg},
	// A file list from xargs counts as options that may be --write
	// (README); git ls-files of tracked *.ts files.
	{cmd: "git ls-files -z '*.ts' | xargs -0 npx prettier --write", msg: fpSweepMsg},
	{cmd: "git ls-files '*.md' | xargs prettier --check", msg: fpSweepMsg},
	// Code the scan cannot see counts as naming the binary: refused with
	// no workflow too, and told it "names the orch-hook binary".
	{cmd: "curl -sSf https://sh.rustup.rs | sh -s -- -y", static: true, msg: fpBinaryMsg},
	{cmd: "curl -fsSL https://deb.nodesource.com/setup_20.x | sudo -E bash -", static: true, msg: fpBinaryMsg},
	{cmd: "wget -qO- https://astral.sh/uv/install.sh | sh", static: true, msg: fpBinaryMsg},
	{cmd: "echo 'print(1)' | python3", static: true, msg: fpBinaryMsg},
	{cmd: `eval "$(pyenv init -)"`, static: true, msg: fpBinaryMsg},
	{cmd: `eval "$(ssh-agent -s)"`, static: true, msg: fpBinaryMsg},
	{cmd: `eval "$(direnv export bash)"`, static: true, msg: fpBinaryMsg},
	{cmd: "${PYTHON:-python3} -m pytest", static: true, msg: fpBinaryMsg},
	{cmd: "$(which python3) -m pytest", static: true, msg: fpBinaryMsg},
	{cmd: "$EDITOR src/main.go", static: true, msg: fpBinaryMsg},
}

// fpWrapperOptions: real, valid options of the wrappers' own parsers that
// no table knows. The wrapper's command then counts as unsure
// (shTarget.unknown), the scan as suspicious, and the command as naming
// the binary: refused with no workflow too, with fpBinaryMsg. Narrowing:
// for an unknown option try both readings (it takes no argument / the
// next word) and be suspicious only if a reading's command word names the
// binary or is opaque; and a reason of its own ("orch-hook cannot tell
// which command `uv run --dev` runs: --dev is not in its table for uv").
var fpWrapperOptions = []string{
	// strace 6.x long spellings of short options the table knows
	"strace --decode-fds ls", "strace --no-abbrev ls", "strace --syscall-times ls", "strace --stack-traces ls",
	"strace --quiet ls", "strace --successful-only ls", "strace --failed-only ls", "strace --timestamps ls",
	"strace --absolute-timestamps ls", "strace --relative-timestamps ls", "strace --strings-in-hex ls",
	"strace --instruction-pointer ls", "strace --syscall-number ls", "strace --output-append-mode -o t.log ls",
	"strace --daemonize ls", "strace --tips ls", "strace --debug ls",
	// GNU parallel
	"parallel --lb make ::: a b", "parallel --block 10M --pipe wc -l < big.txt", "parallel --plus echo {.} ::: a.txt",
	"parallel --xapply echo ::: a b ::: c d", "parallel --link echo ::: a b ::: c d", "parallel --env PATH echo ::: a",
	"parallel --resume --joblog j.log echo ::: a", "parallel --resume-failed --joblog j.log echo ::: a",
	"parallel --fg echo ::: a", "parallel --files echo ::: a", "parallel --compress echo ::: a",
	"parallel --round-robin --pipe wc < big.txt", "parallel --recstart '>' --pipe wc < big.fa",
	"parallel --semaphore --id x make", "parallel --sshloginfile hosts echo ::: a",
	// Not here: `parallel --version` and `--citation` run no command, and
	// parallel with none reads its commands from stdin: unsure (refused).
	// sudo 1.9's long spelling of -N (the table has -N)
	"sudo --no-update make",
	// yarn (classic and berry) global options, and version/help
	"yarn --frozen-lockfile", "yarn --immutable", "yarn --ignore-engines", "yarn --pure-lockfile",
	"yarn --prefer-offline", "yarn --non-interactive", "yarn --production", "yarn --check-files",
	"yarn --network-timeout 600000", "yarn --mutex network install", "yarn --no-progress install",
	"yarn --ignore-scripts install", "yarn --frozen-lockfile --ignore-scripts", "yarn -s --frozen-lockfile",
	"yarn --json test", "yarn --force install", "yarn --cache-folder .yarn-cache install", "yarn --registry https://r install",
	"yarn --ignore-optional install", "yarn --no-lockfile install", "yarn --prod install", "yarn -W add x",
	"yarn -v", "yarn --version", "yarn --help", "yarn -h",
	// npx, pnpm, bunx
	"npx -v", "pnpm -v", "pnpm -h", "pnpm -P install", "pnpm -g add typescript", "pnpm exec -c 'eslint src'",
	"bunx -v", "bunx --help", "bunx --version", "bunx --revision", "bunx --no-install prettier --check src",
	// uvx
	"uvx --version", "uvx --help", "uvx -n ruff check .", "uvx --refresh ruff check .", "uvx --reinstall ruff check .",
	"uvx --upgrade ruff check .", "uvx -U ruff check .", "uvx --with-editable . pytest", "uvx --prerelease allow ruff check .",
	"uvx --native-tls ruff check .", "uvx --no-progress ruff check .", "uvx --color never ruff check .",
	"uvx --python-preference only-system ruff check .", "uvx --managed-python ruff check .", "uvx --env-file .env pytest",
	"uvx --directory sub ruff check .", "uvx --project . ruff check .", "uvx --cache-dir /tmp/uv ruff check .",
	"uvx --exclude-newer 2024-01-01 ruff check .", "uvx --constraints c.txt ruff check .", "uvx --overrides o.txt ruff check .",
	// uv run
	"uv run --dev pytest", "uv run --only-group dev pytest", "uv run --no-group dev pytest", "uv run --all-groups pytest",
	"uv run --no-default-groups pytest", "uv run --all-packages pytest", "uv run --no-env-file python app.py",
	"uv run --with-editable . pytest", "uv run --exact pytest", "uv run --refresh pytest", "uv run --reinstall pytest",
	"uv run --upgrade pytest", "uv run -U pytest", "uv run --no-cache pytest", "uv run -n pytest", "uv --no-cache run pytest",
	"uv run --color never pytest", "uv run --no-progress pytest", "uv run --native-tls pytest",
	"uv run --index-url https://x pytest", "uv run --extra-index-url https://x pytest", "uv run --prerelease allow pytest",
	"uv run --resolution lowest pytest", "uv run --compile-bytecode pytest", "uv run --link-mode copy pytest",
	"uv run --cache-dir /tmp/x pytest", "uv run --python-preference managed pytest", "uv run --managed-python pytest",
	"uv run --no-managed-python pytest", "uv run --gui-script x.pyw", "uv run -s x.py", "uv run --help",
	"uv run --locked --all-extras --dev pytest",
	// poetry, pipx, bundle
	"poetry run --help", "pipx run --help", "pipx run -q black --check src", "pipx run --pypackages black --check src",
	"pipx run --system-site-packages black --check src", "pipx run --path ./x.py", "pipx run --editable black --check src",
	"bundle exec --help", "bundle exec -V rspec", "bundle --no-color exec rspec",
}

func TestFPFalseRefusals(t *testing.T) {
	h := driveTo(t, S4a)
	for _, fr := range fpFalseRefusals {
		j := fpBash(h, fr.cmd, fr.cwd)
		if j.staticDeny != fr.static || !j.activeDeny || !strings.Contains(j.activeReason, fr.msg) {
			t.Errorf("%q: no workflow refused %v (want %v), at 4a refused %v: %s", fr.cmd, j.staticDeny, fr.static, j.activeDeny, j.activeReason)
		}
	}
	// Fixed: an unknown wrapper option no longer makes the command unsure
	// when both readings (it takes the next word or not) run a plain
	// program; these are allowed with and without a workflow.
	for _, cmd := range fpWrapperOptions {
		j := fpBash(h, cmd, "")
		if j.staticDeny || j.activeDeny {
			t.Errorf("%q: no workflow refused %v (%s), at 4a refused %v (%s)", cmd, j.staticDeny, j.staticReason, j.activeDeny, j.activeReason)
		}
	}
	h.expect(S4a)
}

// fpBypass is a command allowed at 4a that changes or removes files under
// .orchestrator (checked by hand where noted).
type fpBypass struct{ cmd, cwd, what string }

var fpBypasses = []fpBypass{
	// git: .orchestrator/state/.gitignore ignores the state only; the plan
	// is untracked (or, committed, tracked). Checked with git 2.x in a
	// scratch repository.
	{"git checkout -- .", "", "reverts the plan when the project commits .orchestrator/tasks"},
	{"git restore .", "", "the same"},
	{"git reset --hard", "", "the same"},
	// npm exec: npm's own parser drops the first `--` (checked with npm
	// 11: prettier receives `--write .`); the scan reads --write as an
	// operand after `--`.
	{"npm exec prettier -- --write .", "", "prettier --write over the root: rewrites .orchestrator/**/*.md"},
	{"npm exec prettier -- --write .orchestrator/tasks/MASTER_PLAN.md", "", "rewrites the plan"},
	{"npm x prettier -- --write .", "", "the same"},
	// find without a start point starts at "."; find's -H -L -P -D -O
	// come before the start points; paths not normalized; ~+ is $PWD; the
	// project root spelled absolute; cd then "..".
	{"find /home/user/project -name '*.md' -delete", "", "the same (testRoot spelled absolute)"},
	{"rsync -a --delete-delay src/ .", "", "--delete-delay is one more --delete-* option"},
	{"prettier --write /home/user/project", "", "the same"},
	// GNU parallel runs a one-word command through the shell; --joblog,
	// --results write files.
	{"parallel 'cp x {}' ::: .orchestrator/tasks/MASTER_PLAN.md", "", "overwrites the plan"},
	{"parallel --joblog .orchestrator/tasks/MASTER_PLAN.md echo ::: a", "", "truncates the plan into a job log"},
	{"parallel --results .orchestrator/tasks echo ::: a", "", "writes files under .orchestrator/tasks"},
	// package runners' shell modes: pnpm exec/dlx --shell-mode (-c is
	// refused: unknown), yarn berry's exec runs its arguments in a shell.
	{"pnpm exec --shell-mode 'cp x .orchestrator/tasks/MASTER_PLAN.md'", "", "overwrites the plan"},
	{"pnpm dlx --shell-mode 'cp x .orchestrator/tasks/MASTER_PLAN.md'", "", "the same"},
	{"yarn exec 'cp x .orchestrator/tasks/MASTER_PLAN.md'", "", "the same (yarn 2+)"},
	// launchers no wrapper table lists: the command they run is never
	// looked at (writes by cp, sed -i, prettier --write hidden).
	{"cross-env CI=1 cp x .orchestrator/tasks/MASTER_PLAN.md", "", "overwrites the plan"},
	{"dotenv -- cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"corepack pnpm exec prettier --write .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"corepack yarn prettier --write .", "", "formats .orchestrator/**/*.md"},
	{"bun x prettier --write .", "", "the same"},
	{"fakeroot cp x .orchestrator/tasks/MASTER_PLAN.md", "", "overwrites the plan"},
	{"faketime '2020-01-01' cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"valgrind cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"gdb -batch -ex run --args cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"xvfb-run cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"dbus-run-session -- cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"catchsegv cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"prlimit --nofile=1024 cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"numactl -N 0 cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"setpriv --reuid=1000 cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"runuser -u user -- cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"mise exec -- cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"direnv exec . cp x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"hyperfine 'cp x .orchestrator/tasks/MASTER_PLAN.md'", "", "runs the string in a shell"},
	{"nix-shell --run 'cp x .orchestrator/tasks/MASTER_PLAN.md'", "", "the same"},
	// writers no table lists (README, "Known limits": writers the tables
	// do not list); Markdown-aware ones first.
	{"typos -w .orchestrator/tasks/MASTER_PLAN.md", "", "rewrites the plan"},
	{"codespell -w .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"textlint --fix .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"doctoc .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"markdown-toc -i .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"mlr -I --inidx --ifs ' ' cat .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{"go build -o .orchestrator/tasks/MASTER_PLAN.md ./cmd/x", "", "replaces the plan"},
	{"gcc -o .orchestrator/tasks/MASTER_PLAN.md x.c", "", "the same"},
	{"cmake -E copy x .orchestrator/tasks/MASTER_PLAN.md", "", "the same"},
	{`sqlite3 x.db ".output .orchestrator/tasks/MASTER_PLAN.md" "select 1"`, "", "the same"},
	{"ssh-keygen -f .orchestrator/tasks/MASTER_PLAN.md -N ''", "", "the same"},
	{"ast-grep run -p a -r b -U .orchestrator", "", "rewrites files under .orchestrator"},
	{"npm --prefix .orchestrator install left-pad", "", "writes package.json and node_modules under .orchestrator"},
}

func TestFPBypasses(t *testing.T) {
	h := driveTo(t, S4a)
	for _, b := range fpBypasses {
		if j := fpBash(h, b.cmd, b.cwd); j.staticDeny || j.activeDeny {
			t.Errorf("%q is refused now (%s%s): move it to fpHeld", b.cmd, j.staticReason, j.activeReason)
		}
	}
	h.expect(S4a)
}

// fpHeld: writes spelled with the newer exemptions that the rule refuses,
// as it should (the probes that did not get through).
var fpHeld = []string{
	// Bypasses the false-refusal pass found, refused since: git clean -d and
	// git stash -u at the root (the plan is untracked), find with no start
	// point, with its own options first, or at src/.., ./., ~+.
	"git clean -fd",
	"git stash -u",
	"git stash --include-untracked",
	"git clean -fd -e '!*'",
	"find -name '*.md' -delete",
	"find -name '*.md' -exec sed -i s/x/y/ {} +",
	"find -L . -name '*.md' -delete",
	"find -H . -name MASTER_PLAN.md -delete",
	"find -P . -name MASTER_PLAN.md -delete",
	"find -O3 . -name MASTER_PLAN.md -delete",
	"find -D stat . -name MASTER_PLAN.md -delete",
	"find src/.. -name MASTER_PLAN.md -delete",
	"find ./src/.. -name MASTER_PLAN.md -delete",
	"find ~+ -name '*.md' -delete",
	"cd src && find .. -name '*.md' -delete",
	"cd src/x && find ../.. -name '*.md' -delete",
	"pushd src && find .. -name '*.md' -delete",
	"rsync -a --delete src/ ./.",
	"rsync -a --delete src/ src/..",
	"cd src && rsync -a --delete ../x/ ..",
	"prettier --write ./.",
	"prettier --write src/..",
	"prettier --write ~+",
	"cd src; prettier --write ..",
	"cd src && mdformat ..",
	// env -S in its spellings, and env/sudo/runner directories
	"env -S 'cp x' .orchestrator/tasks/MASTER_PLAN.md", "env -S'cp x .orchestrator/tasks/MASTER_PLAN.md'",
	"env -vS'cp x .orchestrator/tasks/MASTER_PLAN.md'", `env -S "cp\_x\_.orchestrator/tasks/MASTER_PLAN.md"`,
	"env -S 'cp x .orchestrator/tasks/MASTER_PLAN.md\\c' tail", "env --sp='cp x .orchestrator/tasks/MASTER_PLAN.md'",
	"env -0S'cp x .orchestrator/tasks/MASTER_PLAN.md'", "env -uX -S'cp x .orchestrator/tasks/MASTER_PLAN.md'",
	"env -C .orchestrator cp x tasks/MASTER_PLAN.md", "sudo -D .orchestrator cp x tasks/MASTER_PLAN.md",
	"pnpm -C .orchestrator exec cp x tasks/MASTER_PLAN.md", "uv run --directory .orchestrator cp x tasks/MASTER_PLAN.md",
	"poetry -C .orchestrator run cp x tasks/MASTER_PLAN.md", "yarn --cwd .orchestrator exec cp x tasks/MASTER_PLAN.md",
	"npm --prefix .orchestrator exec -- cp x tasks/MASTER_PLAN.md", "npm exec -c 'cp x .orchestrator/tasks/MASTER_PLAN.md'",
	"npx --call='cp x .orchestrator/tasks/MASTER_PLAN.md'", "bunx prettier --write .orchestrator/tasks/MASTER_PLAN.md",
	"watch -n 1 cp x .orchestrator/tasks/MASTER_PLAN.md", "parallel cp x ::: .orchestrator/tasks/MASTER_PLAN.md",
	// device and descriptor redirections next to a file one
	"cat x > /dev/fd/1 > .orchestrator/tasks/MASTER_PLAN.md", "cat x > /dev/null 1> .orchestrator/tasks/MASTER_PLAN.md",
	"cat x >&3 3>.orchestrator/tasks/MASTER_PLAN.md", "exec 3>.orchestrator/tasks/MASTER_PLAN.md; echo x >&3",
	"echo x >/dev/fd/3 3>.orchestrator/tasks/MASTER_PLAN.md", "{ echo x; } 3>.orchestrator/tasks/MASTER_PLAN.md >&3",
	"git diff HEAD --stat -- .orchestrator 1>/dev/null 2>>.orchestrator/tasks/MASTER_PLAN.md",
	// git's reads with a writing option, a driver or a pager
	"git grep -Ovim x -- .orchestrator", "git cat-file --textconv HEAD:.orchestrator/tasks/MASTER_PLAN.md",
	"git log --outp=x -- .orchestrator", "git log --out x -- .orchestrator",
	"GIT_PAGER='tee .orchestrator/tasks/MASTER_PLAN.md' git -p log", "git --no-pager -C .orchestrator log -o tasks/MASTER_PLAN.md",
	"git diff --no-index --output-indicator-new=x a .orchestrator/tasks/MASTER_PLAN.md", "git format-patch -o .orchestrator/tasks HEAD~1",
	"git difftool -y -x 'cp' a .orchestrator/tasks/MASTER_PLAN.md", "git bisect run cp x .orchestrator/tasks/MASTER_PLAN.md",
	// wrappers' output options, formatters, sweeps
	"strace -o .orchestrator/tasks/MASTER_PLAN.md ls", "ltrace -o .orchestrator/tasks/MASTER_PLAN.md ls",
	"/usr/bin/time -a -o .orchestrator/tasks/MASTER_PLAN.md ls", "flock .orchestrator/tasks/new.md true",
	"yq e -i .a=1 .orchestrator/tasks/x.yml", "sd -F a b .orchestrator/tasks/MASTER_PLAN.md", "cargo fmt -- .orchestrator/tasks/MASTER_PLAN.md",
	"prettier --write '.orchestrator/**'", "prettier --write '{src,.orchestrator}/**/*.md'", "prettier --write=true .",
	"npx --yes=true prettier --write .", "npx -p prettier -c 'prettier --write .'", "npm exec -- prettier --write .",
	"prettier --write -- .", "mdformat -- .", "markdownlint-cli2 '**/*.md' --fix", "biome check --apply",
	"find * .* -name '*.md' -exec sed -i s/x/y/ {} +", "find ./ -name '*.md' -delete", `find "$PWD" -name '*.md' -delete`,
	"rsync -a --del src/ .", "git clean -f -x -d", "git stash --al", "git ls-files -z -- .orchestrator | xargs -0 sed -i s/a/b/",
}

func TestFPHeld(t *testing.T) {
	h := driveTo(t, S4a)
	for _, cmd := range fpHeld {
		if j := fpBash(h, cmd, ""); !j.activeDeny {
			t.Errorf("%q allowed at 4a", cmd)
		}
	}
	h.expect(S4a)
}
