package measure

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100 on Linux.
const ClockTicks = 100

// ParseCPUTicks reads utime + stime (fields 14 and 15) of a /proc/PID/stat line. The
// command name (field 2) is in parentheses and may hold spaces, so fields are counted
// after its closing parenthesis.
func ParseCPUTicks(stat string) (int64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no command name in the process stat")
	}
	f := strings.Fields(stat[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, errors.New("short process stat")
	}
	utime, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return utime + stime, nil
}

// ReadCPUTicks reads the CPU time pid has used so far, in ClockTicks.
func ReadCPUTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseCPUTicks(string(b))
}

// CPUPercent is CPU time over wall time, in percent of one core.
func CPUPercent(ticks int64, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return Round2(float64(ticks) / ClockTicks / wall.Seconds() * 100)
}
