// Package bench is trj's benchmark harness, run with go test -bench . ./bench/.
package bench
