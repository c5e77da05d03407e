package measure

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServerMemory is a server's memory over a run, as the JSON reports carry it.
type ServerMemory struct {
	PID int `json:"pid"`
	// PeakRSSMB is the highest VmRSS sampled during the run; HWMMB the kernel's lifetime
	// peak (VmHWM) at the end, which includes startup.
	PeakRSSMB float64 `json:"peakRssMB"`
	HWMMB     float64 `json:"vmHwmMB"`
}

// MemoryStatus is a process's resident set size and its kernel-kept peak, in kB.
type MemoryStatus struct {
	RSSKB, HWMKB int64
}

// ReadMemoryStatus reads VmRSS and VmHWM of /proc/PID/status.
func ReadMemoryStatus(pid int) (MemoryStatus, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return MemoryStatus{}, err
	}
	defer f.Close()
	return parseMemoryStatus(bufio.NewScanner(f))
}

func parseMemoryStatus(sc *bufio.Scanner) (MemoryStatus, error) {
	var m MemoryStatus
	found := 0
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			m.RSSKB = n
		} else {
			m.HWMKB = n
		}
		found++
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if found < 2 {
		return m, fmt.Errorf("no VmRSS/VmHWM in the process status")
	}
	return m, nil
}

// RSSSampler reads a process's resident memory every interval and keeps the peak since
// the last TakePeak.
type RSSSampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64 // kB
	err  error
}

// StartRSSSampler samples pid every interval until Stop.
func StartRSSSampler(pid int, interval time.Duration) (*RSSSampler, error) {
	if _, err := ReadMemoryStatus(pid); err != nil {
		return nil, fmt.Errorf("--server-pid %d: %w", pid, err)
	}
	s := &RSSSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s, nil
}

func (s *RSSSampler) sample() {
	m, err := ReadMemoryStatus(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
		return
	}
	s.peak = max(s.peak, m.RSSKB)
}

// TakePeak returns the peak RSS in kB since the last call and starts a new period.
func (s *RSSSampler) TakePeak() int64 {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peak
	s.peak = 0
	return p
}

// Stop ends sampling and returns the process's final status (VmHWM is its lifetime peak).
func (s *RSSSampler) Stop() (MemoryStatus, error) {
	close(s.stop)
	<-s.done
	m, err := ReadMemoryStatus(s.pid)
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err != nil {
			return m, s.err
		}
	}
	return m, err
}

// ReadThreads reads the number of threads of /proc/PID/status.
func ReadThreads(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseThreads(string(b))
}

func parseThreads(status string) (int, error) {
	for _, line := range strings.Split(status, "\n") {
		if value, ok := strings.CutPrefix(line, "Threads:"); ok {
			return strconv.Atoi(strings.TrimSpace(value))
		}
	}
	return 0, fmt.Errorf("no Threads in the process status")
}
