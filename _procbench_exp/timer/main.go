package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

func main() {
	bins := os.Args[1:]
	n := 300
	res := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	flt := map[string][]int64{}
	sys := map[string][]time.Duration{}
	for i := 0; i < n+5; i++ {
		for j := range bins {
			b := bins[(i+j)%len(bins)]
			parts := strings.Fields(b)
			in, _ := os.Open("/work/main/cmd/orch-hook/testdata/payloads/pre-bash.json")
			c := exec.Command(parts[0], parts[1:]...)
			c.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR=/tmp/proj")
			c.Stdin = in
			t := time.Now()
			if err := c.Run(); err != nil {
				panic(b + err.Error())
			}
			d := time.Since(t)
			in.Close()
			if i >= 5 {
				res[b] = append(res[b], d)
				cpu[b] = append(cpu[b], c.ProcessState.UserTime()+c.ProcessState.SystemTime())
				flt[b] = append(flt[b], c.ProcessState.SysUsage().(*syscall.Rusage).Minflt)
				sys[b] = append(sys[b], c.ProcessState.SystemTime())
			}
		}
	}
	for _, b := range bins {
		s := res[b]
		slices.Sort(s)
		c := cpu[b]
		slices.Sort(c)
		f := flt[b]
		slices.Sort(f)
		y := sys[b]
		slices.Sort(y)
		fmt.Printf("%-38s median %6.3f ms  p10 %6.3f  p90 %6.3f  cpu %6.3f ms (sys %6.3f) minflt %d\n", b, float64(s[n/2])/1e6, float64(s[n/10])/1e6, float64(s[n*9/10])/1e6, float64(c[n/2])/1e6, float64(y[n/2])/1e6, f[n/2])
	}
}
