//go:build race

package mapping

const raceEnabled = true
