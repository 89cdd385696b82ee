package main

import (
	"os"
	"strings"
	"testing"
)

// The configuration table of docs/configuration.md is the reference of `kassa serve`'s
// settings: it lists every flag with its environment variable and default, and nothing that is
// not a flag.
func TestConfigurationTableListsEverySetting(t *testing.T) {
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	type row struct{ env, def string }
	rows := map[string]row{} // by flag name
	for _, line := range strings.Split(s, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`--") {
			continue
		}
		flag := strings.Trim(strings.TrimSpace(cells[2]), "`-")
		if _, dup := rows[flag]; dup {
			t.Errorf("the table lists --%s twice", flag)
		}
		rows[flag] = row{env: strings.Trim(strings.TrimSpace(cells[1]), "`"), def: strings.TrimSpace(cells[3])}
	}
	var c config
	ss := c.settings()
	for _, st := range ss {
		r, ok := rows[st.name]
		if !ok {
			t.Errorf("--%s (%s) is missing from the configuration table of docs/configuration.md", st.name, st.env)
			continue
		}
		delete(rows, st.name)
		if r.env != st.env {
			t.Errorf("--%s: the table names %s, the flag reads %s", st.name, r.env, st.env)
		}
		if st.def != "" && !strings.Contains(r.def, "`"+st.def+"`") {
			t.Errorf("--%s: the table's default %q does not name the flag's default `%s`", st.name, r.def, st.def)
		}
	}
	for flag, r := range rows {
		t.Errorf("the table lists --%s (%s), which kassa serve does not have", flag, r.env)
	}
	if len(ss) < 30 {
		t.Fatalf("only %d settings: the table parser or settings() changed shape", len(ss))
	}
}
