//go:build !race

package ompt

const raceEnabled = false
