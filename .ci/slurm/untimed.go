// Command untimed prints a JSON file without its timings: every object
// member named "seconds" is dropped, at any depth. The rest is printed
// with sorted keys and numbers as written, so two results that differ
// only in wall times print the same bytes. .ci/slurm/run.sh runs it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run untimed.go FILE.json")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dec := json.NewDecoder(f)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	out, err := json.MarshalIndent(drop(v), "", " ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s\n", out)
}

// drop removes the "seconds" members of v's objects, recursively.
func drop(v any) any {
	switch v := v.(type) {
	case map[string]any:
		delete(v, "seconds")
		for k, x := range v {
			v[k] = drop(x)
		}
	case []any:
		for i, x := range v {
			v[i] = drop(x)
		}
	}
	return v
}
