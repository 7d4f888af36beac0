package distill

import (
	"testing"
)

func TestBoxBorderAndCells(t *testing.T) {
	if !boxBorder("├──────┼─────┤") || !boxBorder("│      ├─────┤") || !boxBorder("┌──── ○○○ ────┐") {
		t.Error("borders not recognised")
	}
	if boxBorder("│ a │ b │") || boxBorder("") || boxBorder("│   │") {
		t.Error("a row taken for a border")
	}
	c := tableCells("│ libx │ CVE-1 │ HIGH │")
	if len(c) != 3 || c[2] != "HIGH" || !severityRow(c) {
		t.Errorf("cells %q", c)
	}
	if !linkOnlyRow(tableCells("│  │  │ https://avd.aquasec.com/nvd/cve-1 │")) || linkOnlyRow(tableCells("│  │ x │ https://a │")) {
		t.Error("link rows")
	}
}
