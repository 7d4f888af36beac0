package natsurl

import "testing"

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"nats://u:p@h1:4222, tls://tok@h2:4222": "nats://h1:4222,tls://h2:4222",
		"nats://h:4222":                         "nats://h:4222",
		" nats://h:4222 ":                       "nats://h:4222",
		"%zz://u:p@h":                           "%zz://u:p@h",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
