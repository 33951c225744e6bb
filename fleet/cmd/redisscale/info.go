package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// info is what a cell reads of Redis's INFO, with the wall-clock time it
// read it at.
type info struct {
	cpu      float64 // used_cpu_sys + used_cpu_user, seconds
	out      float64 // total_net_output_bytes
	commands float64 // total_commands_processed
	wall     time.Duration
}

func (a info) sub(b info) info {
	return info{cpu: a.cpu - b.cpu, out: a.out - b.out, commands: a.commands - b.commands, wall: a.wall - b.wall}
}

// parseInfo reads the fields of info from the text of INFO cpu stats, and
// names the first one missing.
func parseInfo(text string) (info, error) {
	fields := map[string]float64{}
	for line := range strings.SplitSeq(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			fields[k] = f
		}
	}
	for _, k := range []string{"used_cpu_sys", "used_cpu_user", "total_net_output_bytes", "total_commands_processed"} {
		if _, ok := fields[k]; !ok {
			return info{}, fmt.Errorf("INFO has no %s", k)
		}
	}
	return info{cpu: fields["used_cpu_sys"] + fields["used_cpu_user"], out: fields["total_net_output_bytes"],
		commands: fields["total_commands_processed"]}, nil
}
