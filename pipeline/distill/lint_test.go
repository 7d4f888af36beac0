package distill

import (
	"testing"
)

func TestPickToolDistiller(t *testing.T) {
	cases := []struct{ cmd, want string }{
		{"npx eslint src", "eslint"},
		{"yarn eslint .", "eslint"},
		{"pnpm exec eslint .", "eslint"},
		{"npx tsc --noEmit", "tsc"},
		{"pnpm tsc -p tsconfig.build.json", "tsc"},
		{"npx vue-tsc --noEmit", "tsc"},
		{"npx prettier --check .", "prettier"},
		{"ruff check .", "ruff"},
		{"uv run ruff format --check", "ruff"},
		{"ruff rule F401", ""},
		{"golangci-lint run ./...", "golangci-lint"},
		{"golangci-lint linters", ""},
		{"python -m mypy src", "mypy"},
		{"flake8 --max-line-length 100 src", "flake8"},
		{"go build ./...", "go-build"},
		{"go vet ./...", "go-build"},
		{"go mod tidy", "go-build"},
		{"go mod graph", ""},
		{"go run .", ""},
		{"go test ./...", "go-test"},
		{"kubectl apply -f k8s/", "kubectl"},
		{"kubectl -n prod rollout status deploy/web", "kubectl"},
		{"kubectl rollout history deploy/web", ""},
		{"kubectl logs web-1", ""},
		{"helm upgrade --install web ./chart -n prod", "helm"},
		{"aws s3 sync dist s3://bucket", "aws"},
		{"aws s3api put-object --bucket b --key k", ""},
		{"aws cloudformation deploy --template-file t.yaml --stack-name s", "aws"},
		{"gcloud run deploy web --image x", "gcloud"},
		{"az webapp deploy --name x", "az"},
		{"trivy image nginx:1.27", "trivy"},
		{"trivy --version", ""},
		{"semgrep --config auto .", "semgrep"},
		{"semgrep login", ""},
		{"gosec ./...", "gosec"},
		{"bandit -r src", "bandit"},
		{"npm audit", "npm-audit"},
		{"pnpm audit --prod", "npm-audit"},
		{"npx eslint src | head -20", ""},
	}
	for _, c := range cases {
		d := Pick(Analyze(c.cmd))
		got := ""
		if d != nil {
			got = d.name
		}
		if got != c.want {
			t.Errorf("%q: picked %q, want %q", c.cmd, got, c.want)
		}
	}
}

func TestStripEscapes(t *testing.T) {
	cases := map[string]string{
		"plain":                                "plain",
		"\x1b[96msrc/a.ts\x1b[0m:1":            "src/a.ts:1",
		"\x1b]8;;http://x\x07link\x1b]8;;\x07": "link",
		"tail\x1b":                             "tail",
		"\x1b(Bx":                              "x",
	}
	for in, want := range cases {
		if got := stripEscapes(in); got != want {
			t.Errorf("stripEscapes(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDiagLocation(t *testing.T) {
	yes := []string{"a.go:1:2: x", "src/a.ts(12,5): error TS1: x", "src/a.ts:12:5 - error TS1: x", "a.py:3: error: x",
		`C:\x\a.go:3:1: y`, "bad/bad.go:1: : # x"}
	no := []string{"a b.go:1:2: x", "error: x", "a.go:x: y", "http://host:80/x", "12:30 meeting"}
	for _, s := range yes {
		if _, ok := diagLocation(s); !ok {
			t.Errorf("diagLocation(%q) = false", s)
		}
	}
	for _, s := range no {
		if _, ok := diagLocation(s); ok {
			t.Errorf("diagLocation(%q) = true", s)
		}
	}
}
