package distill_test

import "testing"

func TestGoBuildDistiller(t *testing.T) {
	cases := []dtCase{
		{name: "go build -v lists packages", cmd: "go build -v ./...", exit: 0, in: dtRepeat("example.com/app/pkg%d\n", 12), raw: true},
		{name: "go build failing without a diagnostic", cmd: "go build ./...", exit: 1, in: dtRepeat("something %d\n", 12), raw: true},
		{name: "go build -x echoes commands", cmd: "go build -x ./...", exit: 1, in: dtRepeat("mkdir -p $WORK/b%03d/\n", 12) + "x.go:1:1: expected 'package', found 'EOF'\n", raw: true},
		{name: "go get drops fetch progress", cmd: "go get example.com/lib@v1.2.0", exit: 0,
			in:        dtRepeat("go: downloading example.com/dep%d v1.0.0\n", 12) + "go: added example.com/lib v1.2.0\ngo: upgraded example.com/dep3 v0.9.0 => v1.0.0\n",
			distiller: "go-build", keep: []string{"go: added example.com/lib v1.2.0", "go: upgraded example.com/dep3 v0.9.0 => v1.0.0"}, gone: []string{"go: downloading"}},
		{name: "go mod tidy failing", cmd: "go mod tidy", exit: 1,
			in:        dtRepeat("go: finding module for package example.com/m%d\n", 10) + "go: example.com/app imports\n\texample.com/missing: cannot find module providing package example.com/missing\n",
			distiller: "go-build", keep: []string{"go: example.com/app imports", "example.com/missing: cannot find module providing package"}, gone: []string{"go: finding module"}},
	}
	for _, c := range cases {
		c.run(t)
	}
}
