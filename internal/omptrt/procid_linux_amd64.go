package omptrt

const (
	sysGetcpu = 309 // getcpu on linux/amd64
	sysGettid = 186 // gettid on linux/amd64
)
