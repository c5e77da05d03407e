package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rssSampler reads a process's resident memory every interval and keeps the peak
// since the last reset.
type rssSampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64 // kB
	err  error
}

// memoryStatus is a process's resident set size and its kernel-kept peak, in kB.
type memoryStatus struct {
	rssKB, hwmKB int64
}

// readMemoryStatus reads VmRSS and VmHWM of /proc/PID/status.
func readMemoryStatus(pid int) (memoryStatus, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memoryStatus{}, err
	}
	defer f.Close()
	return parseMemoryStatus(bufio.NewScanner(f))
}

func parseMemoryStatus(sc *bufio.Scanner) (memoryStatus, error) {
	var m memoryStatus
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
			m.rssKB = n
		} else {
			m.hwmKB = n
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

// startRSSSampler samples pid every interval until Stop.
func startRSSSampler(pid int, interval time.Duration) (*rssSampler, error) {
	if _, err := readMemoryStatus(pid); err != nil {
		return nil, fmt.Errorf("--server-pid %d: %w", pid, err)
	}
	s := &rssSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
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

func (s *rssSampler) sample() {
	m, err := readMemoryStatus(s.pid)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.err = err
		return
	}
	s.peak = max(s.peak, m.rssKB)
}

// takePeak returns the peak RSS in kB since the last call and starts a new period.
func (s *rssSampler) takePeak() int64 {
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peak
	s.peak = 0
	return p
}

// Stop ends sampling and returns the process's final status (VmHWM is its lifetime peak).
func (s *rssSampler) Stop() (memoryStatus, error) {
	close(s.stop)
	<-s.done
	m, err := readMemoryStatus(s.pid)
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.err != nil {
			return m, s.err
		}
	}
	return m, err
}
