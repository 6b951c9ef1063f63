package docs_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// scaleScripts returns the scripts of scale.md: the fenced blocks marked
// "<!-- script NAME -->", by name, which .ci/slurm/run.sh copies out of
// the page and runs on a real Slurm.
func scaleScripts(t *testing.T, doc string) map[string]string {
	t.Helper()
	marker := regexp.MustCompile(`^<!-- script (\S+) -->$`)
	lines := strings.Split(doc, "\n")
	scripts := map[string]string{}
	for i := 0; i < len(lines); i++ {
		m := marker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		name := m[1]
		if _, dup := scripts[name]; dup {
			t.Errorf("scale.md: script %s is marked twice", name)
		}
		if i+1 >= len(lines) || lines[i+1] != "```bash" {
			t.Errorf("scale.md: the marker of %s is not followed by a ```bash block", name)
			continue
		}
		var body []string
		j := i + 2
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			t.Errorf("scale.md: the block of %s is not closed", name)
		}
		scripts[name] = strings.Join(body, "\n") + "\n"
		i = j
	}
	return scripts
}

// TestScaleScripts checks that the Slurm scripts of scale.md are whole
// scripts that sbatch accepts and that CI runs: each starts with a #!
// line, runs trj as ${TRJ:-trj}, has Slurm cancel a job whose dependency
// failed (--kill-on-invalid-dep=yes), is valid bash and is one of the scripts
// .ci/slurm/run.sh submits (and it submits no other); a bash block with
// #SBATCH lines is a marked script.
func TestScaleScripts(t *testing.T) {
	doc := readText(t, "scale.md")
	scripts := scaleScripts(t, doc)

	ci := readText(t, filepath.Join("..", ".ci", "slurm", "run.sh"))
	m := regexp.MustCompile(`(?m)^for s in ([^;]+); do script "\$s"; done$`).FindStringSubmatch(ci)
	if m == nil {
		t.Fatal(".ci/slurm/run.sh: no line `for s in …; do script \"$s\"; done` naming the scripts it runs")
	}
	run := strings.Fields(m[1])
	var names []string
	for name := range scripts {
		names = append(names, name)
	}
	slices.Sort(names)
	slices.Sort(run)
	if !slices.Equal(names, run) {
		t.Errorf("scale.md has the scripts %v, .ci/slurm/run.sh runs %v", names, run)
	}

	bareTRJ := regexp.MustCompile(`(^|[\s"'(;&|])trj\s`)
	for name, body := range scripts {
		if !strings.HasPrefix(body, "#!/bin/bash\n") {
			t.Errorf("scale.md: script %s does not start with #!/bin/bash (sbatch refuses a script without #!)", name)
		}
		for _, line := range strings.Split(body, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "#") && bareTRJ.MatchString(line) {
				t.Errorf("scale.md: script %s runs a bare trj, not ${TRJ:-trj}: %s", name, line)
			}
			// A job waiting for shards that failed would stay pending.
			if strings.Contains(line, "--dependency=") && !strings.Contains(line, "--kill-on-invalid-dep=yes") {
				t.Errorf("scale.md: script %s: a dependent job without --kill-on-invalid-dep=yes: %s", name, line)
			}
		}
		if bash, err := exec.LookPath("bash"); err == nil {
			if out, err := exec.Command(bash, "-n", "-c", body).CombinedOutput(); err != nil {
				t.Errorf("scale.md: script %s: bash -n: %v %s", name, err, out)
			}
		}
	}

	// Every bash block with #SBATCH lines is a marked script.
	inBlock, marked, sbatch := false, false, false
	prev := ""
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case !inBlock && line == "```bash":
			inBlock, marked, sbatch = true, strings.HasPrefix(prev, "<!-- script "), false
		case inBlock && strings.HasPrefix(line, "```"):
			if sbatch && !marked {
				t.Error("scale.md: a bash block with #SBATCH lines is not a marked script that CI runs")
			}
			inBlock = false
		case inBlock && strings.HasPrefix(line, "#SBATCH"):
			sbatch = true
		}
		prev = line
	}
}

// TestScaleScriptsChecker checks scaleScripts on small documents.
func TestScaleScriptsChecker(t *testing.T) {
	doc := "text\n<!-- script a.sh -->\n```bash\n#!/bin/bash\necho a\n```\n<!-- script b.sh -->\n```bash\n#!/bin/bash\n```\n"
	got := scaleScripts(t, doc)
	if len(got) != 2 || got["a.sh"] != "#!/bin/bash\necho a\n" || got["b.sh"] != "#!/bin/bash\n" {
		t.Errorf("scaleScripts = %q", got)
	}
}
