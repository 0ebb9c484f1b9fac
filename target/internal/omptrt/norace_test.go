//go:build !race

package omptrt

const raceEnabled = false
