//go:build !linux

package bench

import "errors"

// availableCPUs: without Linux's affinity calls the bench cannot split
// the CPUs; an empty list makes "auto" pin nothing.
func availableCPUs() ([]int, error) { return nil, nil }

func pinProcess([]int) (func(), error) {
	return nil, errors.New("pinning to CPUs needs Linux")
}
