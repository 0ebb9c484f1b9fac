module github.com/gompt/gompt

go 1.26.8
